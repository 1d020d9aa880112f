"""Site roles: users.site_role (reader, member, admin) replaces users.is_admin.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-08

Existing admins become admin, everyone else member (what they could do before). is_admin goes,
so the site role is the one place an account's rank is kept.

On SQLite the column is added and dropped in place (ALTER TABLE, SQLite 3.35+), not by batch
mode's copy of the table: with foreign keys on, dropping the old users table would fire the
ON DELETE actions of shares, logins and notebooks.
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None

CHECK = "site_role IN ('reader', 'member', 'admin')"


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        # SQLite cannot add a table constraint in place; a column constraint says the same.
        op.execute("ALTER TABLE users ADD COLUMN site_role VARCHAR(16) DEFAULT 'member' NOT NULL "
                   f"CONSTRAINT ck_users_site_role CHECK ({CHECK})")
    else:
        op.add_column('users', sa.Column('site_role', sa.String(length=16), server_default='member', nullable=False))
        op.create_check_constraint(op.f('ck_users_site_role'), 'users', CHECK)
    op.execute("UPDATE users SET site_role = 'admin' WHERE is_admin")
    op.drop_column('users', 'is_admin')


def downgrade() -> None:
    op.add_column('users', sa.Column('is_admin', sa.Boolean(), server_default=sa.false(), nullable=False))
    op.execute("UPDATE users SET is_admin = (site_role = 'admin')")
    if op.get_bind().dialect.name != "sqlite":
        op.drop_constraint(op.f('ck_users_site_role'), 'users', type_='check')
    op.drop_column('users', 'site_role')
