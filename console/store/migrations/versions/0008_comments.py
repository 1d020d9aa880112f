"""Comments on cells: threads anchored to a cell (and optionally a range of its text), replies,
resolved or open.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-10

comments: one row per comment. A thread's first comment has thread_id NULL and holds the thread's
anchor (anchor_start, anchor_end, anchor_text: offsets in the cell's source and the text quoted)
and its resolved state; a reply names its thread (deleted with it). cell_id is no foreign key: a
comment outlives its cell (shown "on a deleted cell") and comes back with it when a revision is
restored. Deleting the notebook deletes its comments; deleting an account keeps them, authorless.
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'comments',
        sa.Column('id', sa.String(length=32), nullable=False),
        sa.Column('notebook_id', sa.String(length=32), nullable=False),
        sa.Column('cell_id', sa.String(length=32), nullable=False),
        sa.Column('thread_id', sa.String(length=32), nullable=True),
        sa.Column('author_id', sa.Integer(), nullable=True),
        sa.Column('text', sa.Text(), nullable=False),
        sa.Column('anchor_start', sa.Integer(), nullable=True),
        sa.Column('anchor_end', sa.Integer(), nullable=True),
        sa.Column('anchor_text', sa.Text(), nullable=True),
        sa.Column('resolved', sa.Boolean(), nullable=False),
        sa.Column('resolved_by', sa.Integer(), nullable=True),
        sa.Column('resolved_at', sa.DateTime(), nullable=True),
        sa.Column('deleted', sa.Boolean(), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('edited_at', sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(['notebook_id'], ['notebooks.id'], name=op.f('fk_comments_notebook_id_notebooks'),
                                ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['thread_id'], ['comments.id'], name=op.f('fk_comments_thread_id_comments'),
                                ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['author_id'], ['users.id'], name=op.f('fk_comments_author_id_users'),
                                ondelete='SET NULL'),
        sa.ForeignKeyConstraint(['resolved_by'], ['users.id'], name=op.f('fk_comments_resolved_by_users'),
                                ondelete='SET NULL'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_comments')),
    )
    op.create_index('ix_comments_notebook_created', 'comments', ['notebook_id', 'created_at'], unique=False)
    op.create_index(op.f('ix_comments_thread_id'), 'comments', ['thread_id'], unique=False)


def downgrade() -> None:
    op.drop_index(op.f('ix_comments_thread_id'), table_name='comments')
    op.drop_index('ix_comments_notebook_created', table_name='comments')
    op.drop_table('comments')
