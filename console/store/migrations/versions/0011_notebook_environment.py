"""A notebook's environment (issue 31): its requirements and the lock hash last built.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-05

notebooks.environment: JSON {"requirements": [str], "lock_hash": str}, NULL for a notebook that
never ran %pip. job_runs.lock_hash: the lock of the environment a job's run started in ('' for
the base). Revisions keep it in their snapshot (no column). It follows 0010_run_manifests, which
was written at the same time on another branch and merged first.
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0011'
down_revision = '0010'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('notebooks') as batch:
        batch.add_column(sa.Column('environment', sa.JSON(), nullable=True))
    op.add_column('job_runs', sa.Column('lock_hash', sa.String(length=64), nullable=False, server_default=''))


def downgrade() -> None:
    with op.batch_alter_table('job_runs') as batch:
        batch.drop_column('lock_hash')
    with op.batch_alter_table('notebooks') as batch:
        batch.drop_column('environment')
