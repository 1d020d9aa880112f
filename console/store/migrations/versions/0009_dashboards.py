"""Dashboards: the tiles pinned from a notebook's cells (a result or a chart, with its place and size).

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-12

dashboards: one row per notebook that has a dashboard (its key is the notebook's id; deleting the
notebook deletes it). tiles is a JSON list of {cell_id, kind: result|chart, width, height} in the
order the page shows them; cell ids are no foreign keys (a tile outlives its cell, as a comment
does). revision counts the dashboard's changes (a stale write is refused); updated_by is kept
authorless when the account is deleted.
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'dashboards',
        sa.Column('notebook_id', sa.String(length=32), nullable=False),
        sa.Column('tiles', sa.JSON(), nullable=False),
        sa.Column('revision', sa.Integer(), nullable=False),
        sa.Column('updated_at', sa.DateTime(), nullable=False),
        sa.Column('updated_by', sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(['notebook_id'], ['notebooks.id'], name=op.f('fk_dashboards_notebook_id_notebooks'),
                                ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['updated_by'], ['users.id'], name=op.f('fk_dashboards_updated_by_users'),
                                ondelete='SET NULL'),
        sa.PrimaryKeyConstraint('notebook_id', name=op.f('pk_dashboards')),
    )


def downgrade() -> None:
    op.drop_table('dashboards')
