"""Errors the store raises; the web layer maps each to an HTTP status."""
from __future__ import annotations


class StoreError(Exception):
    """Base of every error the repository raises on purpose."""

    status = 400

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFound(StoreError):
    """The notebook, cell, revision, run, user, folder or link does not exist."""

    status = 404


class Invalid(StoreError):
    """The request is well formed but not allowed (bad kind, bad path, duplicate name...)."""

    status = 400


class Conflict(StoreError):
    """A write based on a stale revision; nothing was written.

    current_revision is the notebook's revision now, so the client can reload and retry.
    """

    status = 409

    def __init__(self, current_revision: int, message: str | None = None) -> None:
        super().__init__(message or f"stale revision: the notebook is now at revision {current_revision}")
        self.current_revision = current_revision


class Exists(StoreError):
    """The thing being created exists already (username, folder)."""

    status = 409
