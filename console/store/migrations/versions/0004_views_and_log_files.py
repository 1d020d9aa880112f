"""Cells keep their result view (chart settings); runs name the file that holds their full log.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01

cells.view: JSON, the cell's chosen result view ({"mode": "chart", "chart": {...}}), saved with
the cell so a reloaded, shared or published notebook draws the same chart. NULL = the table.
runs.log_file: the compressed file (under the data folder) that the run's whole output streams
to; the database keeps the head and tail the page shows. NULL = every chunk is in the database
(runs from before this revision).
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column('cells', sa.Column('view', sa.JSON(), nullable=True))
    op.add_column('runs', sa.Column('log_file', sa.String(length=512), nullable=True))


def downgrade() -> None:
    op.drop_column('runs', 'log_file')
    op.drop_column('cells', 'view')
