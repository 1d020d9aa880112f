"""Store tests run twice, on SQLite and on the session's PostgreSQL (the `store` fixture of tests/conftest.py)."""
from __future__ import annotations

import pytest

from console.store import Store, UserRecord


@pytest.fixture
def user(store: Store) -> UserRecord:
    return store.create_user("alice", display_name="Alice")
