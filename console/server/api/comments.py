"""Comments on cells: threads anchored to a cell (and optionally a range of its text), replies,
resolve and reopen (issue 34 item 4).

    GET    /api/notebooks/<id>/comments                  -> {threads: [{...first comment, replies: [...]}]}
    POST   /api/notebooks/<id>/comments   {cell_id, text, anchor?} or {thread_id, text}   -> 201 the comment
    PATCH  /api/notebooks/<id>/comments/<comment_id>   {text?, resolved?}              -> the comment
    DELETE /api/notebooks/<id>/comments/<comment_id>                                   -> 204

Every row of the policy table (console/server/access.py) is `reader notebook:viewer`: whoever may
read the notebook may comment, reply, resolve and reopen. Changing a comment's text and deleting it
are its author's alone, which only the handler can tell. Bodies are the dataclasses below, decoded by
console/server/validate.py `body_as` (the anchor inside a new thread's too): every field typed and
bounded by its annotation, unknown fields refused, each error a 400 naming the field by its path
('anchor.start'). Each change
is told to the notebook's room as `comments_changed` (console/wire/browser.py), without its text:
the pages read the list again, each with its own access.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from flask import Blueprint, current_app, jsonify
from flask.typing import ResponseReturnValue

from console.store import NotFound
from console.store.comments import MAX_COMMENT_CHARS, MAX_QUOTE_CHARS, Anchor, CommentRecord
from console.wire.browser import CommentAction, CommentsChangedEvent

from console.server import serialize
from console.server.auth import signed_in
from console.server.deps import get_store
from console.server.errors import ApiError
from console.server.live.membership import NAMESPACE, room
from console.server.validate import Check, body_as, typed_body
from console.wire.codec import Max, Range

ID_CHARS = 64
MAX_OFFSET = 1 << 31  # far past any cell (console/store caps a cell's source well below it)


def _id(value: str) -> bool:
    return 0 < len(value) <= ID_CHARS and value.replace("_", "").replace("-", "").isalnum() and value.isascii()


def _not_blank(value: str) -> bool:
    return bool(value.strip())


def _no_nul(value: str) -> bool:
    return "\x00" not in value  # PostgreSQL text cannot hold it


Id = Annotated[str, Check(_id, "is not an id")]
Text = Annotated[str, Check(_not_blank, "must not be blank"), Max(MAX_COMMENT_CHARS),
                 Check(_no_nul, "holds a NUL character (\\x00), which no comment may")]


@dataclass(frozen=True)
class AnchorBody:
    """A new thread's range of the cell's text (offsets as the page's editor counts them) and what it quoted."""

    start: Annotated[int, Range(0, MAX_OFFSET)]
    end: Annotated[int, Range(0, MAX_OFFSET)]
    quote: Annotated[str, Max(MAX_QUOTE_CHARS), Check(_no_nul, "holds a NUL character (\\x00)")] = ""

    def anchor(self) -> Anchor:
        return Anchor(self.start, self.end, self.quote)


@typed_body("POST /api/notebooks/<id>/comments")
@dataclass(frozen=True)
class NewComment:
    """POST: a new thread (cell_id, optionally anchor) or a reply (thread_id)."""

    text: Text
    cell_id: Id | None = None
    thread_id: Id | None = None
    anchor: AnchorBody | None = None


@typed_body("PATCH /api/notebooks/<id>/comments/<comment_id>")
@dataclass(frozen=True)
class CommentChange:
    """PATCH: None = not given."""

    text: Text | None = None
    resolved: bool | None = None


def decode_new() -> NewComment:
    """The POST body: body_as checks each field, then what they say together."""
    out = body_as(NewComment)
    if (out.cell_id is None) == (out.thread_id is None):
        raise ApiError(400, "give 'cell_id' (a new thread on that cell) or 'thread_id' (a reply), not both")
    if out.thread_id is not None and out.anchor is not None:
        raise ApiError(400, "'anchor' is for a new thread; a reply shares its thread's")
    if out.anchor is not None and out.anchor.start > out.anchor.end:
        raise ApiError(400, "'anchor.start' and 'anchor.end' must be offsets in the cell's text, start <= end")
    return out


def decode_change() -> CommentChange:
    out = body_as(CommentChange)
    if out.text is None and out.resolved is None:
        raise ApiError(400, "give 'text' and/or 'resolved'")
    return out


# ------------------------------------------------------------------ answers


class _Names:
    """User names, looked up once per request."""

    def __init__(self) -> None:
        self.known: dict[int, str | None] = {}

    def __call__(self, user_id: int | None) -> str | None:
        if user_id is None:
            return None
        if user_id not in self.known:
            try:
                user = get_store().get_user(user_id)
                self.known[user_id] = user.display_name or user.username
            except NotFound:  # the account was deleted
                self.known[user_id] = None
        return self.known[user_id]


def _comment_json(c: CommentRecord, me: int, names: _Names) -> dict[str, Any]:
    d: dict[str, Any] = serialize.plain(c)
    d["author"] = names(c.author_id)
    d["resolved_by_name"] = names(c.resolved_by)
    d["mine"] = c.author_id == me and not c.deleted
    return d


def _tell(notebook_id: str, c: CommentRecord, action: CommentAction, user: Any) -> None:
    event = CommentsChangedEvent(notebook_id, c.cell_id, c.id, action,  # type: ignore[arg-type]
                                 by=user.display_name or user.username)
    current_app.extensions["socketio"].emit("event", event.to_wire(), to=room(notebook_id), namespace=NAMESPACE)


def _own(notebook_id: str, comment_id: str, user: Any, doing: str) -> CommentRecord:
    c = get_store().get_comment(notebook_id, comment_id)  # NotFound -> 404
    if c.author_id != user.id or c.deleted:
        raise ApiError(403, f"only a comment's author may {doing} it")
    return c


# ------------------------------------------------------------------ endpoints


def list_comments(notebook_id: str) -> ResponseReturnValue:
    store, me, names = get_store(), signed_in().id, _Names()
    cells = {c.id for c in store.get_notebook(notebook_id).cells}
    threads: dict[str, dict[str, Any]] = {}
    for c in store.list_comments(notebook_id):
        d = _comment_json(c, me, names)
        if c.thread_id is None:
            threads[c.id] = {**d, "cell_deleted": c.cell_id not in cells, "replies": []}
        elif c.thread_id in threads:
            threads[c.thread_id]["replies"].append(d)
    return jsonify({"threads": list(threads.values())})


def create_comment(notebook_id: str) -> ResponseReturnValue:
    spec = decode_new()
    user = signed_in()
    c = get_store().create_comment(notebook_id, user.id, spec.text, cell_id=spec.cell_id,
                                   thread_id=spec.thread_id,
                                   anchor=None if spec.anchor is None else spec.anchor.anchor())
    _tell(notebook_id, c, "created", user)
    return jsonify(_comment_json(c, user.id, _Names())), 201


def update_comment(notebook_id: str, comment_id: str) -> ResponseReturnValue:
    change = decode_change()
    user, store = signed_in(), get_store()
    c = store.get_comment(notebook_id, comment_id)
    if change.text is not None:  # checked before anything is written
        _own(notebook_id, comment_id, user, "edit")
    if change.resolved is not None and c.thread_id is not None:
        raise ApiError(400, "'resolved' is a thread's: send it to the thread's first comment")
    if change.text is not None and change.text != c.text:
        c = store.edit_comment(notebook_id, comment_id, change.text)
        _tell(notebook_id, c, "edited", user)
    if change.resolved is not None and change.resolved != c.resolved:
        c = store.resolve_thread(notebook_id, comment_id, change.resolved, user.id)
        _tell(notebook_id, c, "resolved" if change.resolved else "reopened", user)
    return jsonify(_comment_json(c, user.id, _Names()))


def delete_comment(notebook_id: str, comment_id: str) -> ResponseReturnValue:
    user = signed_in()
    c = _own(notebook_id, comment_id, user, "delete")
    get_store().delete_comment(notebook_id, comment_id)
    _tell(notebook_id, c, "deleted", user)
    return "", 204


def create_blueprint() -> Blueprint:
    bp = Blueprint("comments", __name__, url_prefix="/notebooks/<notebook_id>/comments")
    bp.add_url_rule("", "list", list_comments, methods=["GET"])
    bp.add_url_rule("", "create", create_comment, methods=["POST"])
    bp.add_url_rule("/<comment_id>", "update", update_comment, methods=["PATCH"])
    bp.add_url_rule("/<comment_id>", "delete", delete_comment, methods=["DELETE"])
    return bp
