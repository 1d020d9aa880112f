"""Users: create, look up, list, set a password hash (hashing itself belongs to the auth layer)
and a site role (console/roles.py SITE_ROLES)."""
from __future__ import annotations

import re

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from console.roles import DEFAULT_SITE_ROLE, SITE_ROLES
from console.store.db import StoreBase
from console.store.errors import Exists, Invalid, NotFound
from console.store.models import User, utcnow
from console.store.records import UserRecord

_USERNAME = re.compile(r"^[A-Za-z0-9_.@-]{1,64}$")


def _user(u: User) -> UserRecord:
    return UserRecord(id=u.id, username=u.username, display_name=u.display_name, site_role=u.site_role,
                      created_at=u.created_at, has_password=u.password_hash is not None)


def _site_role(site_role: str | None, is_admin: bool) -> str:
    """The site role to store: `is_admin=True` is kept as a short way of saying "admin"."""
    if site_role is None:
        return "admin" if is_admin else DEFAULT_SITE_ROLE
    if site_role not in SITE_ROLES:
        raise Invalid(f"site role must be one of {', '.join(SITE_ROLES)}, not {site_role!r}")
    if is_admin and site_role != "admin":
        raise Invalid(f"is_admin and site role {site_role!r} disagree")
    return site_role


class UsersMixin(StoreBase):
    def create_user(
        self, username: str, password_hash: str | None = None, display_name: str = "", is_admin: bool = False,
        site_role: str | None = None,
    ) -> UserRecord:
        if not isinstance(username, str) or not _USERNAME.match(username):
            raise Invalid("username must be 1-64 letters, digits or . _ @ -")
        role = _site_role(site_role, is_admin)
        try:
            with self._write() as s:
                u = User(username=username, password_hash=password_hash, display_name=display_name or username,
                         site_role=role, created_at=utcnow())
                s.add(u)
                s.flush()
                return _user(u)
        except IntegrityError as exc:
            raise Exists(f"user {username!r} exists already") from exc

    def ensure_user(self, username: str, display_name: str = "", is_admin: bool = False,
                    site_role: str | None = None) -> UserRecord:
        """The user with this name, created (without a password) when missing; safe under races.
        An existing user keeps its site role."""
        try:
            return self.get_user_by_name(username)
        except NotFound:
            pass
        try:
            return self.create_user(username, display_name=display_name, is_admin=is_admin, site_role=site_role)
        except Exists:  # created by another thread or process meanwhile
            return self.get_user_by_name(username)

    def get_user(self, user_id: int) -> UserRecord:
        with self._read() as s:
            u = s.get(User, user_id)
            if u is None:
                raise NotFound(f"no user {user_id!r}")
            return _user(u)

    def get_user_by_name(self, username: str) -> UserRecord:
        with self._read() as s:
            u = s.scalars(select(User).where(User.username == username)).one_or_none()
            if u is None:
                raise NotFound(f"no user {username!r}")
            return _user(u)

    def list_users(self) -> list[UserRecord]:
        with self._read() as s:
            return [_user(u) for u in s.scalars(select(User).order_by(User.username))]

    def password_hash(self, username: str) -> str | None:
        """The stored hash for a login check (None: no such user or no password)."""
        with self._read() as s:
            return s.scalar(select(User.password_hash).where(User.username == username))

    def set_password(self, user_id: int, password_hash: str | None) -> None:
        with self._write() as s:
            u = s.get(User, user_id)
            if u is None:
                raise NotFound(f"no user {user_id!r}")
            u.password_hash = password_hash

    def set_site_role(self, user_id: int, site_role: str) -> UserRecord:
        """Give an account another site role. The server looks the user up on every request and
        socket command, so the new role holds from the next one on."""
        role = _site_role(site_role, False)
        with self._write() as s:
            u = s.get(User, user_id)
            if u is None:
                raise NotFound(f"no user {user_id!r}")
            u.site_role = role
            s.flush()
            return _user(u)
