"""Server-side login sessions and failed-login counters (policy such as lock times is auth's job)."""
from __future__ import annotations

from datetime import datetime
from typing import Any, cast

from sqlalchemy import CursorResult, delete, select, update

from console.store.db import StoreBase
from console.store.models import LoginFailure, LoginSession, User, utcnow
from console.store.errors import NotFound
from console.store.records import LoginSessionRecord


def _session(ls: LoginSession) -> LoginSessionRecord:
    return LoginSessionRecord(id=ls.id, user_id=ls.user_id, csrf_token=ls.csrf_token, created_at=ls.created_at,
                              last_seen_at=ls.last_seen_at, expires_at=ls.expires_at, revoked_at=ls.revoked_at,
                              ip=ls.ip, user_agent=ls.user_agent)


class LoginsMixin(StoreBase):
    def create_login_session(
        self, session_id: str, user_id: int, csrf_token: str, expires_at: datetime, ip: str = "", user_agent: str = ""
    ) -> LoginSessionRecord:
        """session_id is the hash of the cookie's token, never the token itself."""
        with self._write() as s:
            if s.get(User, user_id) is None:
                raise NotFound(f"no user {user_id!r}")
            now = utcnow()
            ls = LoginSession(id=session_id, user_id=user_id, csrf_token=csrf_token, created_at=now,
                              last_seen_at=now, expires_at=expires_at, ip=ip[:64], user_agent=user_agent[:255])
            s.add(ls)
            s.flush()
            return _session(ls)

    def get_login_session(self, session_id: str) -> LoginSessionRecord | None:
        with self._read() as s:
            ls = s.get(LoginSession, session_id)
            return _session(ls) if ls is not None else None

    def touch_login_session(self, session_id: str, expires_at: datetime) -> None:
        with self._write() as s:
            s.execute(update(LoginSession).where(LoginSession.id == session_id)
                      .values(last_seen_at=utcnow(), expires_at=expires_at))

    def revoke_login_session(self, session_id: str) -> None:
        with self._write() as s:
            s.execute(update(LoginSession).where(LoginSession.id == session_id, LoginSession.revoked_at.is_(None))
                      .values(revoked_at=utcnow()))

    def revoke_user_sessions(self, user_id: int) -> int:
        """Log a user out everywhere (after a password change); returns how many were active."""
        with self._write() as s:
            # An UPDATE's result is a CursorResult (it has rowcount); Session.execute types it as Result.
            result = cast(CursorResult[Any], s.execute(update(LoginSession)
                          .where(LoginSession.user_id == user_id, LoginSession.revoked_at.is_(None))
                          .values(revoked_at=utcnow())))
            return int(result.rowcount or 0)

    def purge_login_sessions(self, before: datetime) -> None:
        """Drop rows that expired or were revoked before `before` (housekeeping)."""
        with self._write() as s:
            s.execute(delete(LoginSession).where(LoginSession.expires_at < before))
            s.execute(delete(LoginSession).where(LoginSession.revoked_at < before))

    def login_lock(self, username: str, ip: str) -> tuple[int, datetime | None]:
        """(failures so far, locked until) for this user name from this address."""
        with self._read() as s:
            row = s.get(LoginFailure, (username[:64], ip[:64]))
            return (row.failures, row.locked_until) if row is not None else (0, None)

    def record_login_failure(self, username: str, ip: str, locked_until: datetime | None) -> int:
        """Count one more failure and set the lock; returns the new count."""
        key = (username[:64], ip[:64])
        with self._write() as s:
            row = s.get(LoginFailure, key)
            if row is None:
                row = LoginFailure(username=key[0], ip=key[1], failures=0)
                s.add(row)
            row.failures = (row.failures or 0) + 1
            row.last_failure_at = utcnow()
            row.locked_until = locked_until
            s.flush()
            return row.failures

    def clear_login_failures(self, username: str, ip: str) -> None:
        with self._write() as s:
            s.execute(delete(LoginFailure).where(LoginFailure.username == username[:64],
                                                 LoginFailure.ip == ip[:64]))

    def list_login_sessions(self, user_id: int) -> list[LoginSessionRecord]:
        with self._read() as s:
            return [_session(ls) for ls in s.scalars(
                select(LoginSession).where(LoginSession.user_id == user_id).order_by(LoginSession.created_at))]
