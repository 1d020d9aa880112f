"""The API's one error path: every failure becomes JSON `{error, status}`, never a traceback.

Handlers raise `ApiError` (bad input) or let store errors through (NotFound -> 404, Conflict ->
409 with current_revision, ...); Werkzeug's HTTP errors (404, 405, 413) are reshaped the same
way; anything else is logged with its traceback and answered with a bare 500.

Input that slipped past console/server/validate.py and only failed in the database (a number out
of the 64-bit range, text that is not valid Unicode) is the client's error, a 400, not a 500.
"""
from __future__ import annotations

from typing import Any

from flask import Flask, current_app, jsonify
from flask.typing import ResponseReturnValue
from sqlalchemy.exc import DataError
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from console.server.limits import install_converters
from console.store import Conflict, StoreError


class ApiError(Exception):
    """A client error with its HTTP status and message; `extra` fields join the JSON body."""

    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.extra = extra


def _reply(status: int, message: str, **extra: Any) -> ResponseReturnValue:
    return jsonify({"error": message, "status": status, **extra}), status


def handle_error(exc: Exception) -> ResponseReturnValue:
    if isinstance(exc, ApiError):
        return _reply(exc.status, exc.message, **exc.extra)
    if isinstance(exc, Conflict):
        return _reply(409, exc.message, current_revision=exc.current_revision)
    if isinstance(exc, StoreError):
        return _reply(exc.status, exc.message)
    if isinstance(exc, RequestEntityTooLarge):
        limit = current_app.config.get("MAX_CONTENT_LENGTH")
        return _reply(413, f"request body is larger than the limit of {limit} bytes")
    if isinstance(exc, HTTPException):
        code = exc.code or 500
        return _reply(code, exc.description or exc.name)
    if isinstance(exc, (OverflowError, DataError, UnicodeEncodeError)):
        current_app.logger.warning("bad input reached the store: %s: %s", type(exc).__name__, exc)
        return _reply(400, "a value in the request is out of range or not valid text")
    current_app.logger.exception("unhandled error in %s", type(exc).__name__)
    return _reply(500, "internal server error (the server log has the details)")


def register_error_handler(app: Flask) -> None:
    """Every error through handle_error; and <int:...> URL parts bounded to what the store holds
    (called before the blueprints are registered, so their routes use the bounded converter)."""
    app.register_error_handler(Exception, handle_error)
    install_converters(app)
