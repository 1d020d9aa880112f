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


def _body(status: int, message: str, **extra: Any) -> dict[str, Any]:
    return {"error": message, "status": status, **extra}


def error_body(exc: Exception) -> dict[str, Any]:
    """`{error, status, ...}` for any failure: the HTTP answer's body and a socket command's
    refused ack (console/server/live/sockets.py) both come from here, so a refusal reads the same
    whichever way the request came."""
    if isinstance(exc, ApiError):
        return _body(exc.status, exc.message, **exc.extra)
    if isinstance(exc, Conflict):
        return _body(409, exc.message, current_revision=exc.current_revision)
    if isinstance(exc, StoreError):
        return _body(exc.status, exc.message)
    if isinstance(exc, RequestEntityTooLarge):
        limit = current_app.config.get("MAX_CONTENT_LENGTH")
        return _body(413, f"request body is larger than the limit of {limit} bytes")
    if isinstance(exc, HTTPException):
        code = exc.code or 500
        return _body(code, exc.description or exc.name)
    if isinstance(exc, (OverflowError, DataError, UnicodeEncodeError)):
        current_app.logger.warning("bad input reached the store: %s: %s", type(exc).__name__, exc)
        return _body(400, "a value in the request is out of range or not valid text")
    current_app.logger.exception("unhandled error in %s", type(exc).__name__)
    return _body(500, "internal server error (the server log has the details)")


def handle_error(exc: Exception) -> ResponseReturnValue:
    body = error_body(exc)
    return jsonify(body), body["status"]


def register_error_handler(app: Flask) -> None:
    """Every error through handle_error; and <int:...> URL parts bounded to what the store holds
    (called before the blueprints are registered, so their routes use the bounded converter)."""
    app.register_error_handler(Exception, handle_error)
    install_converters(app)
