"""Comments on cells: threads anchored to a cell (and optionally a range of its text), replies,
resolve and reopen (issue 34 item 4).

    GET    /api/notebooks/<id>/comments                  -> {threads: [{...first comment, replies: [...]}]}
    POST   /api/notebooks/<id>/comments   {cell_id, text, anchor?} or {thread_id, text}   -> 201 the comment
    PATCH  /api/notebooks/<id>/comments/<comment_id>   {text?, resolved?}              -> the comment
    DELETE /api/notebooks/<id>/comments/<comment_id>                                   -> 204

Every row of the policy table (console/server/access.py) is `reader notebook:viewer`: whoever may
read the notebook may comment, reply, resolve and reopen. Changing a comment's text and deleting it
are its author's alone, which only the handler can tell. Bodies are decoded into the dataclasses
below, every field typed and unknown fields refused, each error a 400 naming the field. Each change
is told to the notebook's room as `comments_changed` (console/wire/browser.py), without its text:
the pages read the list again, each with its own access.
"""
from __future__ import annotations

import dataclasses

from dataclasses import dataclass
from typing import Any

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
from console.server.validate import typed_body, field, json_body

ID_CHARS = 64
_ANCHOR_FIELDS = ("start", "end", "quote")
MAX_OFFSET = 1 << 31  # far past any cell (console/store caps a cell's source well below it)


@dataclass(frozen=True)
class NewComment:
    """POST: a new thread (cell_id, optionally anchor) or a reply (thread_id)."""

    text: str
    cell_id: str | None = None
    thread_id: str | None = None
    anchor: Anchor | None = None


@typed_body("PATCH /api/notebooks/<id>/comments/<comment_id>")
@dataclass(frozen=True)
class CommentChange:
    """PATCH: None = not given."""

    text: str | None = None
    resolved: bool | None = None


# What each body may hold is its dataclass's fields: declared once, above.
_NEW_FIELDS = tuple(f.name for f in dataclasses.fields(NewComment))
_CHANGE_FIELDS = tuple(f.name for f in dataclasses.fields(CommentChange))


def _refuse_unknown(body: dict[str, Any], known: tuple[str, ...], what: str) -> None:
    unknown = sorted(set(body) - set(known))
    if unknown:
        raise ApiError(400, f"unknown field{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
                            f"{what} has {', '.join(known)}")


def _text(body: dict[str, Any], name: str = "text", required: bool = True) -> str | None:
    text: str | None = field(body, name, str) if required else field(body, name, str, None)
    if text is None:
        return None
    if not text.strip():
        raise ApiError(400, f"{name!r} must not be blank")
    if len(text) > MAX_COMMENT_CHARS:
        raise ApiError(400, f"{name!r} is at most {MAX_COMMENT_CHARS} characters (it has {len(text)})")
    if "\x00" in text:
        raise ApiError(400, f"{name!r} holds a NUL character (\\x00), which no comment may")
    return text


def _id(body: dict[str, Any], name: str) -> str | None:
    value: str | None = field(body, name, str, None)
    if value is not None and not (0 < len(value) <= ID_CHARS and value.replace("_", "").replace("-", "").isalnum()
                                  and value.isascii()):
        raise ApiError(400, f"{name!r} is not an id")
    return value


def _anchor(raw: Any) -> Anchor | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ApiError(400, "'anchor' must be an object {start, end, quote}")
    _refuse_unknown(raw, _ANCHOR_FIELDS, "an anchor")
    named = {f"anchor.{key}": value for key, value in raw.items()}  # 400s name 'anchor.start', not 'start'
    start, end = field(named, "anchor.start", int), field(named, "anchor.end", int)
    quote = field(named, "anchor.quote", str, "")
    if not 0 <= start <= end <= MAX_OFFSET:
        raise ApiError(400, "'anchor.start' and 'anchor.end' must be offsets in the cell's text, start <= end")
    if len(quote) > MAX_QUOTE_CHARS:
        raise ApiError(400, f"'anchor.quote' is at most {MAX_QUOTE_CHARS} characters")
    if "\x00" in quote:
        raise ApiError(400, "'anchor.quote' holds a NUL character (\\x00)")
    return Anchor(start, end, quote)


def decode_new(body: dict[str, Any]) -> NewComment:
    _refuse_unknown(body, _NEW_FIELDS, "a comment")
    text = _text(body)
    assert text is not None
    out = NewComment(text=text, cell_id=_id(body, "cell_id"), thread_id=_id(body, "thread_id"),
                     anchor=_anchor(body.get("anchor")))
    if (out.cell_id is None) == (out.thread_id is None):
        raise ApiError(400, "give 'cell_id' (a new thread on that cell) or 'thread_id' (a reply), not both")
    if out.thread_id is not None and out.anchor is not None:
        raise ApiError(400, "'anchor' is for a new thread; a reply shares its thread's")
    return out


def decode_change(body: dict[str, Any]) -> CommentChange:
    _refuse_unknown(body, _CHANGE_FIELDS, "a comment change")
    out = CommentChange(text=_text(body, required=False), resolved=field(body, "resolved", bool, None))
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
    spec = decode_new(json_body())
    user = signed_in()
    c = get_store().create_comment(notebook_id, user.id, spec.text, cell_id=spec.cell_id,
                                   thread_id=spec.thread_id, anchor=spec.anchor)
    _tell(notebook_id, c, "created", user)
    return jsonify(_comment_json(c, user.id, _Names())), 201


def update_comment(notebook_id: str, comment_id: str) -> ResponseReturnValue:
    change = decode_change(json_body())
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
