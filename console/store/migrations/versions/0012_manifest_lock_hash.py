"""A run's manifest records the notebook environment's lock it ran in (issue 31).

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-05

run_manifests.lock_hash: the lock hash of the notebook's environment the run's Python ran in, as
the kernel reported it ('' for the base, and for manifests written before this revision).
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0012'
down_revision = '0011'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column('run_manifests', sa.Column('lock_hash', sa.String(length=64), nullable=False, server_default=''))


def downgrade() -> None:
    with op.batch_alter_table('run_manifests') as batch:
        batch.drop_column('lock_hash')
