// The notebook as a shared Yjs document (console/server/live/coedit.py has the server's half): a root
// Array "cells" of Map {id, kind, source: Y.Text}. Synced over the notebook's socket: doc_sync
// on every (re)join, doc_update for what this page changes, doc_changed for everyone else's.
// Presence is a y-protocols Awareness on the same doc, relayed as `awareness` / `presence`.

import * as Y from "yjs";
import { Awareness, applyAwarenessUpdate, encodeAwarenessUpdate, removeAwarenessStates } from "y-protocols/awareness";
import { COMMAND, EVENT } from "./wire-names.js";

const REMOTE = "remote"; // origin of changes that came from the server: never sent back
const FIND = "find"; // origin of find-and-replace edits (findbar.js): each one undone as one step
export const KINDS = ["mlsql", "python", "markdown"];

export function toB64(bytes) {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

export function fromB64(text) {
  const s = atob(text || "");
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i += 1) out[i] = s.charCodeAt(i);
  return out;
}

// A cell id the store keeps as given (1-32 letters, digits, '_' or '-').
export function newCellId() {
  const bytes = crypto.getRandomValues(new Uint8Array(9));
  return Array.from(bytes, (b) => b.toString(36).padStart(2, "0")).join("").slice(0, 16);
}

// FNV-1a (32 bits) of the text's UTF-8, as 8 hex digits: a run sends it for each cell it runs, and
// the server (console/server/live/coedit.py source_digest) runs only once its store holds the same.
export function sourceDigest(text) {
  let h = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) h = Math.imul(h ^ byte, 0x01000193) >>> 0;
  return h.toString(16).padStart(8, "0");
}

// Whether a stored document ({sv: its state vector, ds: its delete set}) holds all of `update`:
// each item it inserts is below the stored clock of its client, and each range it deletes is
// within the stored delete set.
export function storedHolds(stored, update) {
  const { structs, ds } = Y.decodeUpdate(update);
  for (const s of structs) {
    if ((stored.sv.get(s.id.client) || 0) < s.id.clock + s.length) return false;
  }
  for (const [client, ranges] of ds.clients) {
    const have = [...(stored.ds.clients.get(client) || [])].sort((a, b) => a.clock - b.clock);
    for (const { clock, len } of ranges) {
      let at = clock;
      for (const r of have) {
        if (r.clock > at || at >= clock + len) break;
        at = Math.max(at, r.clock + r.len);
      }
      if (at < clock + len) return false;
    }
  }
  return true;
}

// send(type, fields) -> Promise<ack>; user: {id, name, color, colorLight}.
// onAttach(): a document came to be (the first sync, or a rebuild when the server's epoch
// changed): the page watches it and rebinds every cell. It runs before `ready` resolves, so an
// action that awaited `ready` (a key pressed while the page was still syncing) finds its cells.
// onSaved(revision): the server stored the document; onUnsaved(bool): whether this page's own
// changes are all stored; onRefused(message): the server refused a change (the document's size cap).
export class SharedDoc {
  constructor({ send, user, onAttach, onSaved, onUnsaved, onRefused }) {
    this.send = send;
    this.user = user;
    this.onAttach = onAttach || (() => {});
    this.onSaved = onSaved || (() => {});
    this.onUnsaved = onUnsaved || (() => {});
    this.onRefused = onRefused || (() => {});
    this.epoch = "";
    this.inFlight = 0; // doc_update commands not acknowledged yet
    this.waiters = [];
    this.unsaved = false;
    this.ready = new Promise((resolve) => { this.markReady = resolve; });
    this.make();
  }

  make() {
    this.doc = new Y.Doc();
    this.cells = this.doc.getArray("cells");
    this.awareness = new Awareness(this.doc);
    this.awareness.setLocalState({ user: this.user, cell: this.cellId || null });
    this.pending = []; // updates this page sent that no doc_saved has shown stored yet
    this.stored = null; // the last doc_saved's {sv, ds}
    // Only this page's replacements, across all cells: the editors' own undo keeps to typing.
    this.findUndo = new Y.UndoManager(this.cells, { trackedOrigins: new Set([FIND]), captureTimeout: 0 });
    this.doc.on("update", (update, origin) => {
      if (origin === REMOTE || !this.epoch) return;
      this.setUnsaved(true);
      this.push(update);
    });
    this.awareness.on("update", ({ added, updated, removed }, origin) => {
      if (origin === REMOTE) return;
      const mine = [...added, ...updated, ...removed].filter((id) => id === this.doc.clientID);
      if (!mine.length || !this.epoch) return;
      this.send(COMMAND.AWARENESS, { update: toB64(encodeAwarenessUpdate(this.awareness, mine)), client_id: this.doc.clientID });
    });
  }

  push(update) {
    this.pending.push(update);
    this.inFlight += 1;
    this.send(COMMAND.DOC_UPDATE, { update: toB64(update), epoch: this.epoch }).then((ack) => {
      this.inFlight -= 1;
      if (ack && ack.ok === false && ack.status === 409) this.sync(); // the server's doc was reloaded
      else if (ack && ack.ok === false) this.onRefused(ack.error || `edit refused (${ack.status})`);
      if (!this.inFlight) {
        for (const w of this.waiters.splice(0)) w();
        // The server's saver may store this very change before its ack is sent: doc_saved then
        // came while it was in flight, and no later save will come to say it is stored.
        this.checkSaved();
      }
    });
  }

  // Resolves once every change made here has reached the server (a run reads the stored text,
  // which the server writes before it runs).
  whenSent() {
    return this.inFlight ? new Promise((resolve) => this.waiters.push(resolve)) : Promise.resolve();
  }

  // On every join: what this page lacks comes back; what the server lacks goes out.
  async sync() {
    const ack = await this.send(COMMAND.DOC_SYNC, {
      epoch: this.epoch,
      state_vector: this.epoch ? toB64(Y.encodeStateVector(this.doc)) : "",
    });
    if (!ack || ack.ok === false) return false;
    if (this.epoch && ack.epoch !== this.epoch) {
      // Another document than ours (the server restarted): start over from the server's.
      this.awareness.destroy();
      this.doc.destroy();
      this.make();
      this.epoch = "";
      Y.applyUpdate(this.doc, fromB64(ack.update), REMOTE);
      this.epoch = ack.epoch;
      this.onAttach();
    } else {
      Y.applyUpdate(this.doc, fromB64(ack.update), REMOTE);
      const first = !this.epoch;
      this.epoch = ack.epoch;
      if (first) this.onAttach();
      else {
        const missing = Y.encodeStateAsUpdate(this.doc, fromB64(ack.state_vector));
        if (missing.length > 2) this.push(missing); // 2 bytes: an empty update
      }
    }
    // A doc_saved sent while this page's socket was away is not sent again: the answer says what is stored.
    if (ack.saved) this.noteStored(ack.saved);
    for (const u of ack.awareness || []) applyAwarenessUpdate(this.awareness, fromB64(u), REMOTE);
    // Announce ourselves now that the server knows our epoch.
    this.awareness.setLocalState({ ...this.awareness.getLocalState(), user: this.user });
    this.markReady();
    return true;
  }

  onEvent(type, ev) {
    if (type === EVENT.DOC_CHANGED) {
      if (ev.epoch === this.epoch) Y.applyUpdate(this.doc, fromB64(ev.update), REMOTE);
      return true;
    }
    if (type === EVENT.DOC_SAVED) {
      this.onSaved(ev.revision);
      this.noteStored(ev);
      return true;
    }
    if (type === EVENT.PRESENCE) {
      if (ev.update) applyAwarenessUpdate(this.awareness, fromB64(ev.update), REMOTE);
      if (ev.left && ev.left.length) removeAwarenessStates(this.awareness, ev.left, REMOTE);
      return true;
    }
    return false;
  }

  // What the store holds ({state_vector, deleted}, from doc_saved or a sync's answer).
  noteStored({ state_vector: sv, deleted }) {
    if (!sv) return; // a server that did not say
    this.stored = { sv: Y.decodeStateVector(fromB64(sv)), ds: Y.decodeUpdate(fromB64(deleted || "AAA=")).ds };
    this.checkSaved();
  }

  // Saved for this page when the last stored state holds every update it sent, deletions included.
  checkSaved() {
    if (this.inFlight || !this.stored) return;
    this.pending = this.pending.filter((u) => !storedHolds(this.stored, u));
    if (!this.pending.length) this.setUnsaved(false);
  }

  setUnsaved(value) {
    if (this.unsaved === value) return;
    this.unsaved = value;
    this.onUnsaved(value);
  }

  // Which cell this page's user is in (presence).
  setCell(cellId) {
    this.cellId = cellId;
    this.awareness.setLocalStateField("cell", cellId);
  }

  mapOf(cellId) {
    for (let i = 0; i < this.cells.length; i += 1) {
      const m = this.cells.get(i);
      if (m instanceof Y.Map && m.get("id") === cellId) return [m, i];
    }
    return [null, -1];
  }

  // id: a deleted cell's own, when its deletion is undone (its stored runs keep their cell).
  insertCell(position, kind, source = "", id = newCellId()) {
    const m = new Y.Map();
    m.set("id", id);
    m.set("kind", kind);
    m.set("source", new Y.Text(source));
    this.cells.insert(Math.max(0, Math.min(position, this.cells.length)), [m]);
    return id;
  }

  deleteCell(cellId) {
    const [, i] = this.mapOf(cellId);
    if (i >= 0) this.cells.delete(i, 1);
  }

  // Yjs cannot move an item: the cell is deleted and inserted again, with its id, in one change.
  moveCell(cellId, to) {
    const [m, i] = this.mapOf(cellId);
    if (!m || to < 0 || to >= this.cells.length || to === i) return;
    this.doc.transact(() => {
      const kind = m.get("kind");
      const source = String(m.get("source") || "");
      this.cells.delete(i, 1);
      const copy = new Y.Map();
      copy.set("id", cellId);
      copy.set("kind", kind);
      copy.set("source", new Y.Text(source));
      this.cells.insert(to, [copy]);
    });
  }

  // Replace ranges of cells' texts ([{cellId, from, to, insert}], each cell's last range first) in
  // one change: sent like typing, so every page sees it, and one step for undoReplace.
  replaceRanges(edits) {
    this.findUndo.stopCapturing();
    this.doc.transact(() => {
      for (const { cellId, from, to, insert } of edits) {
        const [m] = this.mapOf(cellId);
        const text = m && m.get("source");
        if (!(text instanceof Y.Text) || to > text.length) continue;
        if (to > from) text.delete(from, to - from);
        if (insert) text.insert(from, insert);
      }
    }, FIND);
    this.findUndo.stopCapturing();
  }

  // Undo this page's last replacement; false when there is none.
  undoReplace() {
    return this.findUndo.undo() !== null;
  }

  setKind(cellId, kind) {
    const [m] = this.mapOf(cellId);
    if (m && m.get("kind") !== kind) m.set("kind", kind);
  }

  // The cells as the document holds them: [{id, kind, text}] (malformed entries left out).
  list() {
    const out = [];
    const seen = new Set();
    for (const m of this.cells.toArray()) {
      if (!(m instanceof Y.Map)) continue;
      const id = m.get("id");
      const text = m.get("source");
      if (typeof id !== "string" || seen.has(id) || !(text instanceof Y.Text)) continue;
      seen.add(id);
      out.push({ id, kind: KINDS.includes(m.get("kind")) ? m.get("kind") : "mlsql", text });
    }
    return out;
  }

  // change() after any change of the cell list, order or kinds (not of the text inside a cell).
  observe(change) {
    this.cells.observeDeep((events) => {
      if (events.some((e) => e.target === this.cells || (e.target instanceof Y.Map && e.keysChanged.has("kind")))) change();
    });
  }
}

// Apply the edit that turned `base` into `local` to `ytext` (typing before the page synced).
export function replayLocalEdit(ytext, base, local) {
  if (base === local) return;
  let start = 0;
  while (start < base.length && start < local.length && base[start] === local[start]) start += 1;
  let endBase = base.length;
  let endLocal = local.length;
  while (endBase > start && endLocal > start && base[endBase - 1] === local[endLocal - 1]) {
    endBase -= 1;
    endLocal -= 1;
  }
  const doc = ytext.doc;
  const apply = () => {
    const del = Math.min(endBase - start, Math.max(0, ytext.length - start));
    if (del > 0) ytext.delete(start, del);
    if (endLocal > start) ytext.insert(Math.min(start, ytext.length), local.slice(start, endLocal));
  };
  if (doc) doc.transact(apply);
  else apply();
}
