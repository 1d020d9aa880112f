"""The store's engine, transactions and migrations: the one place a database connection is made.

`StoreBase(url)` creates the engine, applies the Alembic migrations (so a new or old database is
brought to the current schema on start) and hands the repository mixins `_read()` and `_write()`
transactions. SQLite gets WAL (readers never wait for the writer), foreign keys, a busy timeout,
and write transactions that take the write lock up front (BEGIN IMMEDIATE): a deferred
transaction that reads and then writes can fail at once with "database is locked" instead of
waiting its turn.
"""
from __future__ import annotations

import os
import secrets
import string
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.orm import Session, sessionmaker

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
_ID_ALPHABET = string.ascii_lowercase + string.digits


def new_id(length: int = 12) -> str:
    """A short random id for notebooks, cells and runs (62 bits at 12 characters)."""
    return "".join(secrets.choice(_ID_ALPHABET) for _ in range(length))


def _sqlite_setup(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # Let SQLAlchemy's "begin" event emit BEGIN itself (pysqlite's own is always deferred).
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA busy_timeout=30000")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        write = conn.get_execution_options().get("console_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


def _private_file(path: Path) -> None:
    """Create the SQLite file readable by its owner only (0600, like the secret key), or tighten it.

    It holds password hashes and login sessions. SQLite gives its -wal and -shm files the mode of
    the database file, so they follow.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        pass
    try:
        if path.stat().st_mode & 0o077:
            os.chmod(path, 0o600)  # a database made before this rule, or by a looser umask
    except PermissionError:  # someone else's file that we may still read: not ours to change
        pass


def make_engine(url: str) -> Engine:
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:" and not parsed.database.startswith("file:"):
            _private_file(Path(parsed.database))
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
        _sqlite_setup(engine)
        return engine
    return create_engine(url, pool_pre_ping=True)


def migrate(engine: Engine, revision: str = "head") -> None:
    """Bring the database to `revision` with Alembic; no alembic.ini is needed."""
    from alembic import command
    from alembic.config import Config as AlembicConfig

    cfg = AlembicConfig()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    with engine.execution_options(console_write=True).connect() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, revision)
        conn.commit()


class StoreBase:
    """Engine, transactions and migrations; the repository mixins add the operations."""

    def __init__(self, url: str, *, run_migrations: bool = True) -> None:
        self.url = url
        self.engine = make_engine(url)
        self.dialect = self.engine.dialect.name
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        self._write_sessions = sessionmaker(
            self.engine.execution_options(console_write=True), expire_on_commit=False
        )
        if run_migrations:
            migrate(self.engine)

    def close(self) -> None:
        self.engine.dispose()

    def __repr__(self) -> str:
        return f"Store({make_url(self.url).render_as_string(hide_password=True)!r})"

    @contextmanager
    def _read(self) -> Iterator[Session]:
        with self._sessions() as session, session.begin():
            yield session

    @contextmanager
    def _write(self) -> Iterator[Session]:
        """One transaction: committed when the block ends, rolled back (nothing written) on error."""
        with self._write_sessions() as session, session.begin():
            yield session
