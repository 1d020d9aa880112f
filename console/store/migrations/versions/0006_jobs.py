"""Jobs: notebooks run on a schedule, and their runs.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01

jobs: a notebook + a schedule (cron with a time zone, or every N minutes) + parameters, retries,
a timeout, an overlap policy and a webhook, run as its owner. next_run_at is the occurrence due
next (NULL while disabled); running_run_id the job run holding the job's one slot.
job_runs: one row per attempt (unique per job, occurrence and attempt, so an occurrence is
stored once whichever server claims it), with the cell runs it made, the revision it ran, how it
ended, the webhook's delivery, and the lease of the server running it.
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'jobs',
        sa.Column('id', sa.String(length=32), nullable=False),
        sa.Column('name', sa.String(length=255), nullable=False),
        sa.Column('notebook_id', sa.String(length=32), nullable=False),
        sa.Column('owner_id', sa.Integer(), nullable=True),
        sa.Column('schedule_kind', sa.String(length=16), nullable=False),
        sa.Column('cron', sa.String(length=128), nullable=False),
        sa.Column('every_minutes', sa.Integer(), nullable=True),
        sa.Column('timezone', sa.String(length=64), nullable=False),
        sa.Column('params', sa.JSON(), nullable=False),
        sa.Column('retries', sa.Integer(), nullable=False),
        sa.Column('timeout_seconds', sa.Integer(), nullable=False),
        sa.Column('overlap', sa.String(length=8), nullable=False),
        sa.Column('webhook_url', sa.String(length=2048), nullable=False),
        sa.Column('notify_success', sa.Boolean(), nullable=False),
        sa.Column('enabled', sa.Boolean(), nullable=False),
        sa.Column('disabled_reason', sa.String(length=512), nullable=False),
        sa.Column('next_run_at', sa.DateTime(), nullable=True),
        sa.Column('running_run_id', sa.String(length=32), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('updated_at', sa.DateTime(), nullable=False),
        sa.CheckConstraint("schedule_kind IN ('cron', 'every')", name=op.f('ck_jobs_schedule_kind')),
        sa.CheckConstraint("overlap IN ('skip', 'queue')", name=op.f('ck_jobs_overlap')),
        sa.ForeignKeyConstraint(['notebook_id'], ['notebooks.id'], name=op.f('fk_jobs_notebook_id_notebooks'),
                                ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['owner_id'], ['users.id'], name=op.f('fk_jobs_owner_id_users'), ondelete='SET NULL'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_jobs')),
    )
    op.create_index(op.f('ix_jobs_notebook_id'), 'jobs', ['notebook_id'], unique=False)
    op.create_index(op.f('ix_jobs_next_run_at'), 'jobs', ['next_run_at'], unique=False)
    op.create_table(
        'job_runs',
        sa.Column('id', sa.String(length=32), nullable=False),
        sa.Column('job_id', sa.String(length=32), nullable=False),
        sa.Column('trigger', sa.String(length=16), nullable=False),
        sa.Column('attempt', sa.Integer(), nullable=False),
        sa.Column('status', sa.String(length=16), nullable=False),
        sa.Column('scheduled_for', sa.DateTime(), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('started_at', sa.DateTime(), nullable=True),
        sa.Column('ended_at', sa.DateTime(), nullable=True),
        sa.Column('params', sa.JSON(), nullable=False),
        sa.Column('revision', sa.Integer(), nullable=True),
        sa.Column('run_ids', sa.JSON(), nullable=False),
        sa.Column('error', sa.Text(), nullable=False),
        sa.Column('triggered_by', sa.Integer(), nullable=True),
        sa.Column('webhook', sa.JSON(), nullable=True),
        sa.Column('lease_holder', sa.String(length=128), nullable=False),
        sa.Column('lease_until', sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(['job_id'], ['jobs.id'], name=op.f('fk_job_runs_job_id_jobs'), ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['triggered_by'], ['users.id'], name=op.f('fk_job_runs_triggered_by_users'),
                                ondelete='SET NULL'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_job_runs')),
        sa.UniqueConstraint('job_id', 'scheduled_for', 'attempt', name='uq_job_runs_occurrence'),
    )
    op.create_index('ix_job_runs_job_started', 'job_runs', ['job_id', 'started_at'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_job_runs_job_started', table_name='job_runs')
    op.drop_table('job_runs')
    op.drop_index(op.f('ix_jobs_next_run_at'), table_name='jobs')
    op.drop_index(op.f('ix_jobs_notebook_id'), table_name='jobs')
    op.drop_table('jobs')
