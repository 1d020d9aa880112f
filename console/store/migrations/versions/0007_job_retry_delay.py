"""Jobs wait between attempts: a job's retry delay, and the time a queued retry may start.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-02

jobs.retry_delay_seconds: how long a failed attempt waits before the next one (0, the default and
every existing job's value, retries at once as before). job_runs.not_before: a queued run starts
no earlier than this (NULL: as soon as the job's slot is free).
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMN, never a batch copy: on SQLite a copy of `jobs` drops and refills it, and
    # job_runs' ON DELETE CASCADE would take every run's history with it.
    op.add_column('jobs', sa.Column('retry_delay_seconds', sa.Integer(), nullable=False, server_default='0'))
    op.add_column('job_runs', sa.Column('not_before', sa.DateTime(), nullable=True))


def downgrade() -> None:
    op.drop_column('job_runs', 'not_before')
    op.drop_column('jobs', 'retry_delay_seconds')
