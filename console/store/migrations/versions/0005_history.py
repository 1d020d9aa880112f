"""History that means something: notebooks remember who saved since their last history row.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01

notebooks.pending_authors: JSON list of user ids whose saves left no history row yet (co-editing
and autosave save without one; console/store/_rows.py). The snapshot made when the edits settle,
at a run or for a named version lists them as its authors. NULL = nothing pending. The snapshot's
authors and optional label live in revisions.snapshot itself, so that table is unchanged.
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column('notebooks', sa.Column('pending_authors', sa.JSON(), nullable=True))


def downgrade() -> None:
    op.drop_column('notebooks', 'pending_authors')
