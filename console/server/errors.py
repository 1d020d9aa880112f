"""The API's one error path: every failure becomes JSON `{error, status}`, never a traceback.

Handlers raise `ApiError` (bad input) or let store errors through (NotFound -> 404, Conflict ->
409 with current_revision, ...); Werkzeug's HTTP errors (404, 405, 413) are reshaped the same
way; anything else is logged with its traceback and answered with a bare 500.
"""
from __future__ import annotations

from typing import Any

from flask import Flask, current_app, jsonify
from flask.typing import ResponseReturnValue
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

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
    current_app.logger.exception("unhandled error in %s", type(exc).__name__)
    return _reply(500, "internal server error (the server log has the details)")


def register_error_handler(app: Flask) -> None:
    app.register_error_handler(Exception, handle_error)
