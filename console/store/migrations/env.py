"""Alembic environment: runs migrations on the connection the store hands over (no alembic.ini)."""
from __future__ import annotations

from alembic import context

from console.store.models import Base

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("console migrations run through console.store.db.migrate(engine)")

context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    # SQLite cannot ALTER most things in place; batch mode copies the table instead.
    render_as_batch=connection.dialect.name == "sqlite",
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
