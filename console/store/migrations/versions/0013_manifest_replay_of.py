"""A replay's manifest names the run it replayed (issue 32).

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-05

run_manifests.replay_of: the id of the recorded run a replay ran as ('' for any other run, and for
manifests written before this revision). Not a foreign key: the recorded run may be deleted with
its notebook's history while the replay's record stays readable.
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0013'
down_revision = '0012'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column('run_manifests', sa.Column('replay_of', sa.String(length=64), nullable=False, server_default=''))


def downgrade() -> None:
    with op.batch_alter_table('run_manifests') as batch:
        batch.drop_column('replay_of')
