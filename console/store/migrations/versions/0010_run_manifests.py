"""Run manifests: what each run read and wrote, with the revision and parameters it ran with.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-05

run_manifests: at most one row per run (its key is the run's id; deleting the run, or its notebook,
deletes it). entries is a JSON list of the kernel's entries (access, format, path, table, delta
version, mode, file size/mtime/digest) each with the server's `verified` and `check`; params the
parameter values the run was queued with; revision the notebook's revision then. Plain column types
only, so SQLite and PostgreSQL build the same table from this one script.
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'run_manifests',
        sa.Column('run_id', sa.String(length=32), nullable=False),
        sa.Column('revision', sa.Integer(), nullable=True),
        sa.Column('params', sa.JSON(), nullable=False),
        sa.Column('entries', sa.JSON(), nullable=False),
        sa.Column('dropped', sa.Integer(), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(['run_id'], ['runs.id'], name=op.f('fk_run_manifests_run_id_runs'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('run_id', name=op.f('pk_run_manifests')),
    )


def downgrade() -> None:
    op.drop_table('run_manifests')
