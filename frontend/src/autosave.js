// Autosave of what goes over REST: writes go to the server one at a time, each carrying the
// revision it was based on. A stale write (409) stops the queue and keeps every unsaved edit, in
// memory and in localStorage, until the user picks reload or keep-a-copy. The notebook page keeps
// cells and sources in the shared document (coedit.js) instead; what it still sends here (a
// result's chart) does not depend on the sources, so a 409 caused by a live save is retried once
// on the revision the server names.

import { debounce } from "./dom.js";

const DELAY_MS = 700;

// States the page shows: saved, dirty (typing), saving, conflict, offline (retrying).
export class Saver {
  constructor({ notebookId, revision, onState, onConflict, onRevision, patchSource }) {
    this.notebookId = notebookId;
    this.revision = revision;
    this.onState = onState || (() => {});
    this.onConflict = onConflict || (() => {});
    this.onRevision = onRevision || (() => {});
    this.patchSource = patchSource; // (cellId, source, baseRevision) -> Promise<{revision}>
    this.pending = new Map(); // cellId -> source not yet sent
    this.ops = []; // queued structural writes: (baseRevision) => Promise<response>
    this.running = null; // Promise of the loop draining the queue
    this.conflict = null;
    this.retryMs = 1000;
    this.scheduled = debounce(() => this.drain(), DELAY_MS);
    this.key = `mlsql-console:unsaved:${notebookId}`;
    this.views = new Map(); // cellId -> {view, patch}: chart choices waiting for the clicking to pause
    this.viewTimer = null;
  }

  // A chart choice still waiting for its timer is unsaved too: the page must not say "saved", nor
  // let the tab close without asking, while one is.
  get dirty() {
    return this.pending.size > 0 || this.ops.length > 0 || this.running !== null || this.views.size > 0;
  }

  edit(cellId, source) {
    this.pending.set(cellId, source);
    this.backup();
    this.setState("dirty");
    if (!this.conflict) this.scheduled();
  }

  // A structural change (add/move/delete/kind). Resolves with the server's answer.
  // rebase: the write does not depend on the content, so a 409 retries it once on the current revision.
  op(fn, { rebase = false } = {}) {
    return new Promise((resolve, reject) => {
      this.ops.push({ fn, resolve, reject, rebase });
      if (!this.conflict) this.drain();
    });
  }

  // A cell's result view (chart choices): the last choice per cell is sent once the clicking
  // pauses, as a structural write (it carries the revision it was based on, like the others).
  // patch(view, baseRevision) -> Promise<notebook>.
  saveView(cellId, view, patch) {
    this.views.set(cellId, { view, patch });
    this.setState("dirty");
    if (!this.viewTimer) this.viewTimer = setTimeout(() => this.sendViews(), DELAY_MS);
  }

  sendViews() {
    clearTimeout(this.viewTimer);
    this.viewTimer = null;
    const views = [...this.views.values()];
    this.views.clear();
    for (const v of views) this.op((base) => v.patch(v.view, base), { rebase: true }).catch(() => {});
  }

  // Save everything now (before a run: the server runs the stored source).
  async flush() {
    this.scheduled.flush();
    if (this.views.size) this.sendViews();
    await this.drain();
    if (this.conflict) throw this.conflict;
  }

  drain() {
    if (!this.running) {
      this.running = this.loop().finally(() => {
        this.running = null;
      });
    }
    return this.running;
  }

  async loop() {
    while (!this.conflict && (this.pending.size || this.ops.length)) {
      this.setState("saving");
      try {
        if (this.ops.length) {
          const op = this.ops[0];
          // Source edits typed before a structural change go first, so its base is current.
          if (this.pending.size) await this.sendEdits();
          try {
            const res = await op.fn(this.revision);
            this.ops.shift();
            this.advance(res);
            op.resolve(res);
          } catch (err) {
            if (err.status === 409 && op.rebase && !op.rebased && typeof err.currentRevision === "number") {
              op.rebased = true; // a co-editor's save moved the revision on: once more on the new one
              this.advance({ revision: err.currentRevision });
              continue;
            }
            if (err.status === 409 || err.status === undefined) throw err;
            this.ops.shift(); // a refused op (404, 400) is the caller's to report, not a save failure
            op.reject(err);
          }
        } else {
          await this.sendEdits();
        }
        this.retryMs = 1000;
      } catch (err) {
        if (err.status === 409) {
          this.conflict = err;
          this.setState("conflict");
          this.onConflict(err);
          return;
        }
        // Network or server fault: keep everything, try again later.
        this.setState("offline");
        await new Promise((r) => setTimeout(r, this.retryMs));
        this.retryMs = Math.min(this.retryMs * 2, 15000);
      }
    }
    if (!this.conflict) {
      this.setState(this.views.size ? "dirty" : "saved"); // a chart choice chosen meanwhile waits for its timer
      this.clearBackup();
    }
  }

  async sendEdits() {
    for (const [cellId, source] of [...this.pending]) {
      const res = await this.patchSource(cellId, source, this.revision);
      // Only forget the edit if the user did not type more while it was in flight.
      if (this.pending.get(cellId) === source) this.pending.delete(cellId);
      this.advance(res);
    }
  }

  advance(res) {
    const rev = res && (res.revision ?? res.notebook?.revision);
    if (typeof rev === "number" && rev !== this.revision) {
      this.revision = rev;
      this.onRevision(rev);
    }
  }

  // After "reload": the server's copy wins and the local edits are dropped on purpose.
  reset(revision) {
    this.pending.clear();
    for (const op of this.ops) op.reject(new Error("discarded"));
    this.ops = [];
    this.conflict = null;
    this.revision = revision;
    this.clearBackup();
    this.setState("saved");
  }

  setState(state) {
    this.state = state;
    this.onState(state);
  }

  // Unsaved edits survive a closed tab: they are restored, or offered, on the next visit.
  backup() {
    try {
      localStorage.setItem(this.key, JSON.stringify({ revision: this.revision, cells: Object.fromEntries(this.pending), at: Date.now() }));
    } catch {
      // storage full or disabled: the in-memory copy and the beforeunload prompt remain
    }
  }

  clearBackup() {
    try {
      localStorage.removeItem(this.key);
    } catch {
      // ignore
    }
  }

  readBackup() {
    try {
      return JSON.parse(localStorage.getItem(this.key) || "null");
    } catch {
      return null;
    }
  }
}
