"""Fixtures of the jobs tests: a store on SQLite and on the session's PostgreSQL, a notebook in it."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from console.store import Store


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'console.db'}"
    return str(request.getfixturevalue("postgres_db"))


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    s = Store(db_url)
    yield s
    s.close()
