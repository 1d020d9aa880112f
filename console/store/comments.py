"""Comments on cells: threads (a first comment and its replies), anchored to a cell and optionally
to a range of its text, resolved and reopened.

Who may do what is the server's (console/server/api/comments.py): the store keeps the rows and
their shape. A thread's first comment holds the thread's cell, anchor and resolved state; a reply
names its thread. Comments are kept by cell id, not by a foreign key: a cell's comments stay with
it through every edit of the notebook, and a deleted cell's comments stay too (the caller tells
them apart by comparing with the notebook's cells).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from console.store.db import StoreBase, new_id
from console.store.errors import Invalid, NotFound
from console.store.models import Cell, Comment, Notebook, utcnow

MAX_COMMENT_CHARS = 10_000  # a comment's text
MAX_QUOTE_CHARS = 2_000     # the text a thread's anchor quotes
MAX_COMMENTS = 5_000        # per notebook: a flood stops here


@dataclass(frozen=True)
class Anchor:
    """A range of the cell's source as it was when the thread began, and the text it quoted."""

    start: int
    end: int
    quote: str


@dataclass(frozen=True)
class CommentRecord:
    id: str
    notebook_id: str
    cell_id: str
    thread_id: str | None  # None: the thread's first comment (its id is the thread's)
    author_id: int | None  # None: the account was deleted
    text: str
    anchor: Anchor | None
    resolved: bool
    resolved_by: int | None
    resolved_at: datetime | None
    deleted: bool  # a first comment its author deleted while replies remained
    created_at: datetime
    edited_at: datetime | None


def _record(c: Comment) -> CommentRecord:
    anchor = (Anchor(c.anchor_start, c.anchor_end, c.anchor_text or "")
              if c.anchor_start is not None and c.anchor_end is not None else None)
    return CommentRecord(
        id=c.id, notebook_id=c.notebook_id, cell_id=c.cell_id, thread_id=c.thread_id, author_id=c.author_id,
        text=c.text, anchor=anchor, resolved=bool(c.resolved), resolved_by=c.resolved_by,
        resolved_at=c.resolved_at, deleted=bool(c.deleted), created_at=c.created_at, edited_at=c.edited_at)


def check_text(text: object) -> str:
    if not isinstance(text, str):
        raise Invalid("a comment's text must be a string")
    if not text.strip():
        raise Invalid("a comment's text must not be blank")
    if len(text) > MAX_COMMENT_CHARS:
        raise Invalid(f"a comment's text is at most {MAX_COMMENT_CHARS} characters (this one has {len(text)})")
    if "\x00" in text:  # PostgreSQL text cannot hold it
        raise Invalid("a comment's text holds a NUL character (\\x00)")
    return text


def _check_anchor(anchor: Anchor) -> None:
    if not 0 <= anchor.start <= anchor.end:
        raise Invalid("an anchor's start and end must be offsets with 0 <= start <= end")
    if len(anchor.quote) > MAX_QUOTE_CHARS or "\x00" in anchor.quote:
        raise Invalid(f"an anchor's quote is at most {MAX_QUOTE_CHARS} characters, without NUL")


def _get(s: Session, notebook_id: str, comment_id: str) -> Comment:
    c = s.get(Comment, comment_id) if isinstance(comment_id, str) else None
    if c is None or c.notebook_id != notebook_id:  # another notebook's comment is no comment here
        raise NotFound(f"no comment {comment_id!r} on this notebook")
    return c


class CommentsMixin(StoreBase):
    def create_comment(self, notebook_id: str, author_id: int | None, text: str, *, cell_id: str | None = None,
                       thread_id: str | None = None, anchor: Anchor | None = None) -> CommentRecord:
        """A new thread on `cell_id` (a cell the notebook has now), or a reply in `thread_id`."""
        check_text(text)
        with self._write() as s:
            if s.get(Notebook, notebook_id) is None:
                raise NotFound(f"no notebook {notebook_id!r}")
            count = s.scalar(select(func.count()).select_from(Comment).where(Comment.notebook_id == notebook_id))
            if (count or 0) >= MAX_COMMENTS:
                raise Invalid(f"this notebook holds {MAX_COMMENTS} comments, the most it may")
            if thread_id is not None:
                thread = _get(s, notebook_id, thread_id)
                if thread.thread_id is not None:
                    raise Invalid("reply to a thread's first comment (this one is a reply)")
                if anchor is not None:
                    raise Invalid("a reply has no anchor of its own: its thread's is the anchor")
                cell = thread.cell_id
            else:
                if cell_id is None:
                    raise Invalid("a new thread needs the cell it is on")
                if s.get(Cell, (notebook_id, cell_id)) is None:
                    raise NotFound(f"no cell {cell_id!r} in this notebook")
                if anchor is not None:
                    _check_anchor(anchor)
                cell = cell_id
            row = Comment(id=new_id(), notebook_id=notebook_id, cell_id=cell, thread_id=thread_id,
                          author_id=author_id, text=text, resolved=False, deleted=False, created_at=utcnow(),
                          anchor_start=anchor.start if anchor else None, anchor_end=anchor.end if anchor else None,
                          anchor_text=anchor.quote if anchor else None)
            s.add(row)
            s.flush()
            return _record(row)

    def get_comment(self, notebook_id: str, comment_id: str) -> CommentRecord:
        with self._read() as s:
            return _record(_get(s, notebook_id, comment_id))

    def list_comments(self, notebook_id: str) -> list[CommentRecord]:
        """The notebook's comments, oldest first (threads and replies alike)."""
        with self._read() as s:
            if s.get(Notebook, notebook_id) is None:
                raise NotFound(f"no notebook {notebook_id!r}")
            rows = s.scalars(select(Comment).where(Comment.notebook_id == notebook_id)
                             .order_by(Comment.created_at, Comment.id))
            return [_record(c) for c in rows]

    def edit_comment(self, notebook_id: str, comment_id: str, text: str) -> CommentRecord:
        check_text(text)
        with self._write() as s:
            c = _get(s, notebook_id, comment_id)
            if c.deleted:
                raise Invalid("this comment was deleted")
            c.text = text
            c.edited_at = utcnow()
            s.flush()
            return _record(c)

    def resolve_thread(self, notebook_id: str, comment_id: str, resolved: bool, by: int | None) -> CommentRecord:
        """Resolve (or reopen) the thread whose first comment is `comment_id`."""
        with self._write() as s:
            c = _get(s, notebook_id, comment_id)
            if c.thread_id is not None:
                raise Invalid("a thread is resolved through its first comment (this one is a reply)")
            if bool(c.resolved) != resolved:
                c.resolved = resolved
                c.resolved_by = by if resolved else None
                c.resolved_at = utcnow() if resolved else None
            s.flush()
            return _record(c)

    def delete_comment(self, notebook_id: str, comment_id: str) -> None:
        """Delete a comment. A thread's first comment with replies stays as deleted (its text gone)
        so the replies keep their thread; a thread left with no replies and no first comment goes."""
        with self._write() as s:
            c = _get(s, notebook_id, comment_id)
            if c.thread_id is None:
                replies = s.scalar(select(func.count()).select_from(Comment).where(Comment.thread_id == c.id))
                if replies:
                    c.deleted, c.text, c.anchor_text = True, "", None
                    return
                s.delete(c)
                return
            thread = s.get(Comment, c.thread_id)
            s.delete(c)
            s.flush()
            if thread is not None and thread.deleted:
                left = s.scalar(select(func.count()).select_from(Comment).where(Comment.thread_id == thread.id))
                if not left:
                    s.delete(thread)
