"""Live co-editing: each open notebook is a shared Yjs document, kept here with pycrdt.

The document: a root Array "cells" of Map {id, kind, source: Text}. It is loaded from the store
when the first page asks for it (doc_sync), changed by the pages' updates (doc_update, relayed to
the notebook's room as doc_changed), stored `COEDIT_SAVE_SECONDS` after the last change through
`store.update_notebook(..., snapshot=False)` (a revision number without a history row: history
settles its own revisions), and dropped once nobody has been in the room for `UNLOAD_SECONDS`.

Each loaded document has an epoch (a random id). A page that synced a document of another epoch
(the server restarted, or the doc was unloaded and loaded again) rebuilds its Y.Doc from ours
rather than merging two unrelated histories, which would double every cell.

Writes that do not come through the document (a REST edit, a restore) are folded into it: the
store and the document are compared with what they last agreed on (`saved`), and only what the
store changed since is applied, so keystrokes not yet stored survive a REST edit of another cell.
After every store write the room gets doc_saved with the new revision, so pages keep a current
base_revision for what still goes over REST (renames, result views).

What pages send is checked before pycrdt holds it (console/server/live/yjs_wire.py): a document is
capped at DOC_MAX_BYTES of weight (encoded bytes plus ITEM_BYTES per item: items, not bytes,
are what a document costs in memory), and an edit past it is refused with 413. Presence goes
only from a socket in the room, for its own awareness client id, with the state's `user` name
and id replaced by the sender's account, so no page can speak as someone else.
The save delay, the saver's ticks and a run's settle are on the app's clock (console/clock.py).
"""
from __future__ import annotations

import base64
import binascii
import logging
import re
import secrets
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pycrdt import Array, Doc

from console.clock import Clock, SystemClock, app_clock
from console.server.live.coedit_doc import CellTuple, apply_store_changes, cell_map, read_cells, source_digest
from console.server.live.yjs_wire import ITEM_BYTES, read_awareness, update_weight, write_awareness
from console.store import Conflict, Invalid, NotFound, Store
from console.wire.browser import DocChangedEvent, DocSavedEvent, PresenceEvent

log = logging.getLogger(__name__)

COEDIT_KEY = "console.coedit"
UNLOAD_SECONDS = 60.0  # a document nobody has in view is kept this long (a reload finds it warm)
MAX_WAIT_SECONDS = 5.0  # continuous typing is still stored at least this often
TICK_SECONDS = 0.2
SETTLE_SECONDS = 3.0  # how long a run waits for the store to hold what its page shows
ORIGIN_STORE = "store"  # transaction origin of changes folded in from the store
DOC_MAX_BYTES = 8 * 1024 * 1024  # the default of the DOC_MAX_BYTES setting
_COLOUR = re.compile(r"#[0-9A-Fa-f]{3,8}")  # the page picks its colour; anything else is dropped

# emit(event dict, notebook id, sid to skip or None)
Emit = Callable[[dict[str, Any], str, "str | None"], None]


class CoEditError(Exception):
    """A refused document command; `status` goes into the socket's ack."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def b64decode(value: str, what: str) -> bytes:
    if not isinstance(value, str):
        raise CoEditError(400, f"{what} must be a base64 string")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise CoEditError(400, f"{what} is not valid base64: {exc}") from exc


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


@dataclass
class _Live:
    notebook_id: str
    doc: Doc
    cells: Array
    epoch: str
    saved: list[CellTuple]  # what the store and the document last agreed on
    revision: int  # the store's revision the room was last told
    lock: threading.RLock = field(default_factory=threading.RLock)
    first_change: float | None = None  # monotonic time of the oldest change not yet stored
    last_change: float = 0.0
    author_id: int | None = None  # who made the latest change not yet stored
    empty_since: float | None = None
    presence: dict[str, tuple[set[int], str]] = field(default_factory=dict)  # sid -> (client ids, last update)
    weight: int = 0  # update_weight of what the document holds, at most (exact after _weigh)
    edited: threading.Event = field(default_factory=threading.Event)  # set by each edit: wakes a settle
    # The document's state vector and delete set when the store last held all of it: what doc_saved
    # and a sync's answer tell pages (a page is "saved" once these hold every change it sent).
    stored_state: bytes = b""
    stored_deleted: bytes = b""


class CoEdit:
    """The live documents of one server; `tick` (on its own thread) stores and unloads them."""

    def __init__(self, store: Store, emit: Emit, members: Callable[[str], int], save_seconds: float,
                 max_bytes: int = DOC_MAX_BYTES, clock: Clock | None = None) -> None:
        self.store = store
        self.clock: Clock = clock or SystemClock()
        self.emit = emit
        self.members = members  # notebook id -> sockets in its room now
        self.save_seconds = save_seconds
        self.max_bytes = max_bytes
        self._docs: dict[str, _Live] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    # ------------------------------------------------------------------ commands

    def sync(self, notebook_id: str, state_vector: str, epoch: str, sid: str | None) -> dict[str, Any]:
        live = self._get(notebook_id, load=True)
        assert live is not None
        sv = b64decode(state_vector, "state_vector") if state_vector and epoch == live.epoch else b""
        with live.lock:
            try:
                update = live.doc.get_update(sv) if sv else live.doc.get_update()
            except Exception as exc:  # a malformed state vector
                raise CoEditError(400, f"state_vector could not be read: {exc}") from exc
            others = [upd for s, (_ids, upd) in live.presence.items() if s != sid and upd]
            # What is stored, as doc_saved says it: a page that missed a doc_saved (its socket was
            # reconnecting) learns here that its changes are stored, and stops saying "editing…".
            return {"epoch": live.epoch, "update": b64(update), "state_vector": b64(live.doc.get_state()),
                    "revision": live.revision, "awareness": others,
                    "saved": {"state_vector": b64(live.stored_state), "deleted": b64(live.stored_deleted)}}

    def update(self, notebook_id: str, update: str, epoch: str, author_id: int | None, sid: str | None) -> None:
        data = b64decode(update, "update")
        if not data:
            return
        live = self._get(notebook_id, load=False)
        if live is None or epoch != live.epoch:
            raise CoEditError(409, "the shared document was reloaded on the server: sync again (doc_sync)")
        try:
            weight = update_weight(data, limit=self.max_bytes)  # past the cap it is refused, however far
        except ValueError as exc:
            raise CoEditError(400, f"update is not a Yjs update: {exc}") from None
        with live.lock:
            if live.weight + weight > self.max_bytes:
                live.weight = _weigh(live.doc)  # the running sum counts merged and deleted items twice
            if live.weight + weight > self.max_bytes:
                raise CoEditError(413, f"this edit would make the notebook's shared document larger than its "
                                       f"limit of {self.max_bytes} bytes (DOC_MAX_BYTES: encoded size plus "
                                       f"{ITEM_BYTES} bytes per edit item); it holds {live.weight} now")
            try:
                live.doc.apply_update(data)
            except Exception as exc:
                raise CoEditError(400, f"update could not be applied: {exc}") from exc
            live.weight += weight
            now = self.clock.monotonic()
            live.first_change = live.first_change or now
            live.last_change = now
            live.author_id = author_id
        live.edited.set()
        self.emit(DocChangedEvent(notebook_id, update, live.epoch).to_wire(), notebook_id, sid)  # type: ignore[arg-type]

    def awareness(self, notebook_id: str, sid: str, client_id: int, update: str, user: dict[str, Any]) -> None:
        """Relay the page's presence: only entries of its own `client_id`, each state's `user` being
        the sender's account (`user`: {id, name}) whatever the page wrote there."""
        if not update:
            return
        try:
            entries = read_awareness(b64decode(update, "update"))
        except ValueError as exc:
            raise CoEditError(400, f"update is not an awareness update: {exc}") from None
        if any(client != client_id for client, _clock, _state in entries):
            raise CoEditError(403, "an awareness update may carry only this page's own client_id")
        stamped = []
        for client, clock, state in entries:
            if state is not None:
                given = state.get("user")
                own: dict[str, Any] = given if isinstance(given, dict) else {}
                colours = {k: v for k, v in own.items()
                           if k in ("color", "colorLight") and isinstance(v, str) and _COLOUR.fullmatch(v)}
                state = {**state, "user": {**colours, "id": user["id"], "name": user["name"]}}
            stamped.append((client, clock, state))
        relayed = b64(write_awareness(stamped))
        live = self._get(notebook_id, load=True)
        assert live is not None
        with live.lock:
            if any(client_id in ids for s, (ids, _) in live.presence.items() if s != sid):
                raise CoEditError(403, "that awareness client_id belongs to another page")
            ids, _ = live.presence.get(sid, (set(), ""))
            ids.add(client_id)
            live.presence[sid] = (ids, relayed)
        self.emit(PresenceEvent(notebook_id, update=relayed).to_wire(), notebook_id, sid)  # type: ignore[arg-type]

    def left(self, sid: str, notebook_id: str | None = None) -> None:
        """A socket left a room (or every room): its presence goes from the others' pages."""
        with self._lock:
            docs = [d for d in self._docs.values() if notebook_id is None or d.notebook_id == notebook_id]
        for live in docs:
            with live.lock:
                gone = live.presence.pop(sid, None)
            if gone and gone[0]:
                self.emit(PresenceEvent(live.notebook_id, left=sorted(gone[0])).to_wire(), live.notebook_id, None)  # type: ignore[arg-type]

    def flush(self, notebook_id: str) -> None:
        """Store the document now if it holds unstored changes (a run reads the stored source)."""
        live = self._get(notebook_id, load=False)
        # A REST write between reading the store and writing it is a conflict: the next round
        # folds that write in first, then stores (a few rounds, as each write may meet another).
        for _ in range(5):
            if live is None or self._sync_store(live, write=True):
                return
        log.warning("notebook %s: the live document could not be stored before a run (REST writes kept "
                    "conflicting)", notebook_id)

    def settle(self, notebook_id: str, expected: Mapping[str, str], timeout: float = SETTLE_SECONDS) -> list[str]:
        """Store the document until the store holds what a page shows of some cells (cell id ->
        source_digest), for at most `timeout` seconds; the cells that still differ.

        A page runs cells only after the server acknowledged every edit it sent, so they differ
        only while edits are still being applied, or when the page or the server lost some: then
        the page is told (and syncs again) rather than its cells run with text it does not show.
        """
        deadline = self.clock.monotonic() + timeout
        live = self._get(notebook_id, load=False)
        edited = live.edited if live is not None else threading.Event()
        while True:
            edited.clear()
            self.flush(notebook_id)
            stored = {c.id: c.source for c in self.store.get_notebook(notebook_id).cells}
            stale = [cid for cid, digest in expected.items() if cid in stored and source_digest(stored[cid]) != digest]
            left = deadline - self.clock.monotonic()
            if not stale or left <= 0:
                if stale:
                    log.warning("notebook %s: cells %s differ from what the page that runs them shows",
                                notebook_id, ", ".join(stale))
                return stale
            # Woken by the next edit; at most a quarter second between looks (a REST write, say).
            self.clock.sleep(min(0.25, left), until=edited)

    def store_changed(self, notebook_id: str) -> None:
        """The store was written outside the document (REST): fold that into the live document."""
        live = self._get(notebook_id, load=False)
        if live is not None:
            self._sync_store(live, write=False)
            live.edited.set()

    def loaded(self, notebook_id: str) -> bool:
        with self._lock:
            return notebook_id in self._docs

    def text(self, notebook_id: str) -> list[CellTuple] | None:
        """The live document's cells (None when not loaded)."""
        live = self._get(notebook_id, load=False)
        if live is None:
            return None
        with live.lock:
            return read_cells(live.cells)

    # ------------------------------------------------------------------ lifecycle

    def _get(self, notebook_id: str, load: bool) -> _Live | None:
        with self._lock:
            live = self._docs.get(notebook_id)
            if live is not None or not load:
                return live
            rec = self.store.get_notebook(notebook_id)  # NotFound -> the socket's 404
            doc: Doc = Doc()
            cells: Array = doc.get("cells", type=Array)
            stored = [(c.id, c.kind, c.source) for c in rec.cells]
            with doc.transaction(origin=ORIGIN_STORE):
                for cid, kind, source in stored:
                    cells.append(cell_map(cid, kind, source))
            live = _Live(notebook_id, doc, cells, secrets.token_hex(8), stored, rec.revision, weight=_weigh(doc))
            _note_stored(live)
            self._docs[notebook_id] = live
            self._start()
            return live

    def _start(self) -> None:
        # Started at first use, not at app creation: gunicorn forks after the app is built.
        if self._thread is None or not self._thread.is_alive():
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="coedit-saver", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Store every document with unstored changes and stop the saver thread."""
        self._stop.set()
        with self._lock:
            docs = list(self._docs.values())
        for live in docs:
            self._sync_store(live, write=True)

    def _run(self) -> None:
        while not self.clock.sleep(TICK_SECONDS, until=self._stop):
            try:
                self.tick(self.clock.monotonic())
            except Exception:  # the thread must live on: the next tick tries again
                log.exception("co-editing saver failed")

    def tick(self, now: float) -> None:
        with self._lock:
            docs = list(self._docs.values())
        for live in docs:
            due = live.first_change is not None and (
                now - live.last_change >= self.save_seconds or now - live.first_change >= MAX_WAIT_SECONDS)
            if due:
                self._sync_store(live, write=True)
            if self.members(live.notebook_id):
                live.empty_since = None
            elif live.empty_since is None:
                live.empty_since = now
            elif now - live.empty_since >= UNLOAD_SECONDS and live.first_change is None:
                with self._lock:
                    self._docs.pop(live.notebook_id, None)

    # ------------------------------------------------------------------ store <-> document

    def _sync_store(self, live: _Live, write: bool) -> bool:
        """Fold store changes into the document, then (write) store the document; False when a
        REST write came in between (the caller may try again)."""
        with live.lock:
            try:
                rec = self.store.get_notebook(live.notebook_id)
            except NotFound:  # deleted: nothing to store into, the document goes
                with self._lock:
                    self._docs.pop(live.notebook_id, None)
                return True
            stored = [(c.id, c.kind, c.source) for c in rec.cells]
            revision = rec.revision
            if stored != live.saved:
                before = live.doc.get_state()
                with live.doc.transaction(origin=ORIGIN_STORE):
                    apply_store_changes(live.cells, live.saved, stored)
                live.saved = stored
                change = live.doc.get_update(before)
                self.emit(DocChangedEvent(live.notebook_id, b64(change), live.epoch).to_wire(),  # type: ignore[arg-type]
                          live.notebook_id, None)
            current = read_cells(live.cells)
            if write and current != live.saved:
                try:
                    rec = self.store.update_notebook(
                        live.notebook_id, revision, cells=[{"id": c, "kind": k, "source": s} for c, k, s in current],
                        author_id=live.author_id, snapshot=False)
                except Conflict:
                    return False  # a REST write came in between: the next round folds it in first
                except Invalid as exc:
                    # Kept in the document (the pages hold it); told once, tried again at the next change.
                    log.warning("notebook %s: the live document could not be stored: %s", live.notebook_id, exc)
                    live.first_change = None
                    return True
                live.saved = current
                revision = rec.revision
            if write:
                live.first_change = None
            # Pages are told a new revision, and a state the store now holds all of: also when
            # their last changes left the cells as stored (no new revision), or they would wait
            # for a doc_saved that never comes. A fold of a REST write under unstored changes
            # tells the revision with the state last stored, not the document's (not all stored).
            before = live.stored_state
            if read_cells(live.cells) == live.saved:
                _note_stored(live)
            if revision != live.revision or live.stored_state != before:
                live.revision = revision
                saved = DocSavedEvent(live.notebook_id, revision, b64(live.stored_state),  # type: ignore[arg-type]
                                      b64(live.stored_deleted))
                self.emit(saved.to_wire(), live.notebook_id, None)
            return True


def _note_stored(live: _Live) -> None:
    """The store holds all of the document now (callers hold live.lock, or own `live` alone)."""
    state = live.doc.get_state()
    # A state vector does not change when something is deleted: the delete set (an update
    # against the full state holds nothing else) tells pages their deletions are stored.
    live.stored_state, live.stored_deleted = state, live.doc.get_update(state)


def _weigh(doc: Doc) -> int:
    return update_weight(doc.get_update())


def init_coedit(app: Any) -> CoEdit:
    """The app's live documents (app.extensions[COEDIT_KEY]), their events sent to the notebook's
    room, and a hook folding every successful REST write to a notebook into its live document."""
    from flask import request

    from console.server.live.membership import NAMESPACE, registry, room

    socketio = app.extensions["socketio"]
    cfg = app.extensions["config"]

    def emit(event: dict[str, Any], notebook_id: str, skip_sid: str | None) -> None:
        socketio.emit("event", event, to=room(notebook_id), namespace=NAMESPACE, skip_sid=skip_sid)

    def members(notebook_id: str) -> int:
        with app.app_context():
            return len(registry().memberships(None, notebook_id))

    coedit = CoEdit(app.extensions["store"], emit, members, float(cfg.COEDIT_SAVE_SECONDS), int(cfg.DOC_MAX_BYTES),
                    clock=app_clock(app))
    app.extensions[COEDIT_KEY] = coedit

    def after_write(resp: Any) -> Any:
        notebook_id = (request.view_args or {}).get("notebook_id")
        if (notebook_id and request.method in ("POST", "PUT", "PATCH", "DELETE") and resp.status_code < 400
                and coedit.loaded(notebook_id)):
            try:
                coedit.store_changed(notebook_id)
            except Exception:  # the write itself succeeded; the next save folds it in
                log.exception("notebook %s: a REST write could not be folded into the live document", notebook_id)
        return resp

    app.after_request(after_write)
    return coedit
