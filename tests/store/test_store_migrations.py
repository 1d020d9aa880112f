"""The migrations build exactly the schema the models describe, on both databases."""
from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import text

from console.store import Store
from console.store.models import Base


def test_migrations_match_models(store: Store) -> None:
    with store.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn, opts={"compare_type": True}), Base.metadata)
    assert diff == []


def _head() -> str:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    from console.store.db import MIGRATIONS_DIR

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    head = ScriptDirectory.from_config(cfg).get_current_head()
    assert head is not None, "the migrations have one head"
    return head


def test_migrating_again_is_harmless(store: Store, db_url: str) -> None:
    nb = store.create_notebook("kept")
    again = Store(db_url)
    assert again.get_notebook(nb.id).name == "kept"
    with again.engine.connect() as conn:
        assert conn.execute(text("select version_num from alembic_version")).scalar() == _head()
    again.close()


def test_sqlite_settings(store: Store) -> None:
    if store.dialect != "sqlite":
        return
    with store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
