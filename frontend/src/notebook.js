// The notebook page: the toolbar, the cells, the shared document, and the live channel.
// Its parts: the live channel's events in notebook-live.js, the kernel's badge, card and restart
// in notebook-kernel.js, the commands that buttons and keys (shortcuts.js) send in notebook-actions.js,
// the toolbar in toolbar.js, find and replace in findbar.js, the outline and folding in outline.js; this module builds the page, keeps its cells and saves.
// Stored outputs (GET /api/notebooks/<id>) are drawn first, then the page joins the notebook's
// room with what it holds and continues live; `data-ready` on the root marks it interactive.
// Cells, their order, kinds and sources live in a Yjs document shared by everyone on the
// notebook (coedit.js); `data-connection="live"` means joined and that document synced. Only
// what is not in the document (the name, a result's chart) is still saved over REST (autosave.js).

import { h } from "./dom.js";
import { Cell } from "./cell.js";
import { Saver } from "./autosave.js";
import { SeqTracker } from "./seqtracker.js";
import { bindCommandKeys, helpOverlay } from "./shortcuts.js";
import { Banners } from "./banner.js";
import { allows, atLeast, setRoles } from "./roles.js";
import { allowRemoteImages } from "./markdown.js";
import { setAssist } from "./assist.js";
import { SharedDoc } from "./coedit.js";
import { Presence, colourFor } from "./presence.js";
import { actionButton, notebookToolbar } from "./toolbar.js";
import { DataPanel } from "./datapanel.js";
import { connectLive, onLiveEvent, useRun } from "./notebook-live.js";
import { kernelBadge, kernelCard } from "./notebook-kernel.js";
import { act, insertSource } from "./notebook-actions.js";
import { RunSignal } from "./runsignal.js";
import { FindBar, openFromHash } from "./findbar.js";
import { Outline } from "./outline.js";
import { openRunDetails } from "./rundetails.js";

const SAVE_TEXT = { saved: "saved", dirty: "editing…", saving: "saving…", conflict: "not saved: conflict", offline: "not saved: retrying" };

export class NotebookPage {
  constructor(root, { api, config, notebookId }) {
    this.root = root;
    this.api = api;
    this.config = config;
    this.id = notebookId;
    this.cells = new Map(); // id -> Cell
    this.order = []; // cell ids top to bottom
    this.selected = null;
    this.outputSeq = new SeqTracker();
    this.metricSeq = new SeqTracker();
    this.deleted = []; // cells this page deleted, last last: what z brings back
    this.signal = new RunSignal(); // the tab's title and favicon say running / done / failed
    this.role = "viewer"; // until the notebook says otherwise (GET /api/notebooks/<id> has `role`)
    // The extension point of the notebook page: what adds to it (jobs.js, comments.js, the
    // dashboard link) waits on this, true once the page is drawn and interactive, false if it
    // could not load, instead of watching the DOM for data-ready.
    this.loaded = new Promise((resolve) => { this.markLoaded = resolve; });
    this.presence = new Presence({
      cellLabel: (id) => (this.order.includes(id) ? `cell ${this.order.indexOf(id) + 1}` : ""),
      onCells: (byCell) => { for (const [id, cell] of this.cells) cell.setPeers(byCell.get(id) || []); },
    });
  }

  async start() {
    this.buildShell();
    let nb;
    let runs;
    let me;
    try {
      [nb, runs, me] = await Promise.all([this.api.getNotebook(this.id), this.api.getRuns(this.id).catch(() => null),
        this.api.me().catch(() => null)]);
    } catch (err) {
      this.banners.show("load", `Could not open this notebook: ${err.message}`, [["Back to the workspace", () => { location.href = "/"; }]]);
      this.root.dataset.ready = "error";
      this.markLoaded(false);
      return;
    }
    performance.mark("console-fetched");
    this.nb = nb;
    if (me && me.user) this.config.userId = String(me.user.id);
    setRoles(me && me.roles, me); // and the account's site role (roles.js)
    allowRemoteImages(Boolean(me && me.markdown_remote_images));
    this.showRole(nb.role);
    this.saver = new Saver({
      notebookId: this.id,
      revision: nb.revision,
      patchSource: (cellId, source, base) => this.api.patchCell(this.id, cellId, { source, base_revision: base }),
      onState: (s) => this.showSaveState(s),
      onConflict: (err) => this.showConflict(err),
      onRevision: (rev) => { this.root.dataset.revision = String(rev); },
    });
    this.root.dataset.revision = String(nb.revision);
    this.saver.clearBackup(); // sources are kept by the shared document now, not in this browser
    const who = me && me.user;
    const userId = who ? who.id : "local";
    this.shared = new SharedDoc({
      send: (type, fields) => this.live.send(type, fields),
      user: { id: userId, name: (who && (who.display_name || who.username)) || "you", ...colourFor(userId) },
      onAttach: () => this.watchDoc(),
      onSaved: (rev) => this.saver.advance({ revision: rev }),
      onUnsaved: () => this.showSaveState(this.saver.state || "saved"),
      onRefused: (message) => this.banners.show("coedit", `Not saved: ${message}`),
    });
    this.setTitle(nb.name);
    this.renderCells(nb.cells, runs && runs.runs);
    this.outline.draw();
    performance.mark("console-drawn");
    this.bindEvents();
    this.clock = setInterval(() => this.tickRunning(), 250);
    document.addEventListener("visibilitychange", () => { if (!document.hidden) this.signal.seen(); });
    // Completion and hover ask this user's kernel; only a runner has one (a viewer's editor is read-only).
    if (allows(this.role, "run")) {
      setAssist({
        complete: (source, cursor, kind) => this.api.complete(this.id, { source, cursor, kind }),
        inspect: (name) => this.api.inspect(this.id, name),
      });
    }
    openFromHash(this); // a link from the workspace's search: #cell=<id>&find=<text>
    this.root.dataset.ready = "1";
    this.markLoaded(true);
    performance.mark("console-ready"); // bench/page_load.py reads these two
    requestAnimationFrame(() => setTimeout(() => performance.mark("console-painted")));
    connectLive(this);
  }

  buildShell() {
    const btn = actionButton;
    this.titleInput = h("input.nb-name", { dataset: { role: "name" }, "aria-label": "Notebook name" });
    this.saveState = h("span.save-state", { dataset: { role: "save-state" }, text: "saved" });
    this.kernelBadge = kernelBadge();
    this.connBadge = h("span.conn", { dataset: { role: "connection", state: "connecting" }, text: "connecting" });
    this.help = helpOverlay();
    this.banners = new Banners();
    this.kernelCard = kernelCard();
    this.cellList = h("div.cells", { dataset: { role: "cells" } });
    this.find = new FindBar(this);
    this.outline = new Outline(this);
    this.data = new DataPanel({ api: this.api, notebookId: this.id, insertCell: (source, run) => insertSource(this, source, run) });
    const toolbar = notebookToolbar(this);
    const addBar = h("div.add-bar", { dataset: { needs: "editor" } },
      btn("add-mlsql", "+ MLSQL", "Add an MLSQL cell at the end"),
      btn("add-python", "+ Python", "Add a Python cell at the end"),
      btn("add-markdown", "+ Markdown", "Add a Markdown cell at the end"));
    this.root.replaceChildren(toolbar, this.banners.el, this.kernelCard, this.find.el, this.outline.el,
      h("main.notebook", {}, this.cellList, addBar), this.data.el, this.help.el);
    this.root.dataset.page = "notebook";
  }

  // The page shows only what the role can do (roles.js); the server enforces it either way.
  showRole(role) {
    this.role = role || "viewer";
    this.root.dataset.userRole = this.role;
    for (const el of this.root.querySelectorAll("[data-needs]")) el.hidden = !atLeast(this.role, el.dataset.needs);
    this.titleInput.readOnly = !allows(this.role, "rename");
  }

  setTitle(name) {
    this.titleInput.value = name;
    this.titleInput.title = name; // the field may cut a long name; the tooltip shows it whole
    this.signal.setName(name);
  }

  makeCell(data) {
    const cell = new Cell(data, { downloadUrl: (runId) => this.api.logUrl(runId), role: this.role, results: {
      api: this.api, notebookId: this.id,
      saveView: (cellId, view) => this.saver.saveView(cellId, view, (v, base) => this.api.patchCell(this.id, cellId, { view: v, base_revision: base })),
      pin: (cellId, kind) => this.api.pinTile(this.id, cellId, kind), // the dashboard (dashboard.js)
    } });
    this.cells.set(cell.id, cell);
    return cell;
  }

  // Stored runs come as the same events the live channel sends (GET .../runs replays them with
  // big logs cut to head + marker + tail), so one code path draws both.
  renderCells(cells, runs) {
    const frag = document.createDocumentFragment();
    this.order = [];
    for (const data of cells) {
      const cell = this.makeCell(data);
      this.order.push(cell.id);
      frag.append(cell.el);
    }
    this.cellList.replaceChildren(frag);
    performance.mark("console-cells");
    for (const [cellId, run] of Object.entries(runs || {})) {
      const cell = this.cells.get(cellId);
      if (!cell) continue;
      for (const ev of run.events || []) onLiveEvent(this, ev.type, ev);
      useRun(this, cell, run.id);
      if (run.status === "running" && run.started_at) cell.startedAt = Date.parse(run.started_at);
      cell.output.log.flush(); // paint now, so the page is complete when it says ready
      cell.output.chart?.draw();
      cell.tick();
    }
  }

  tickRunning() {
    for (const cell of this.cells.values()) if (cell.status === "running") cell.tick();
    this.signal.update([...this.cells.values()].map((c) => c.status));
    this.outline.markStatus();
  }

  // ------------------------------------------------------------------ the shared document

  async syncDoc() {
    if (!(await this.shared.sync())) return;
    this.root.dataset.doc = "synced";
  }

  // (Re)attach to the document (first sync, or rebuilt after the server's restarted): called by
  // the shared document itself, before its `ready` lets a waiting action (insert, move…) go on.
  watchDoc() {
    this.shared.observe(() => this.applyDoc());
    this.presence.watch(this.shared.awareness);
    if (this.selected) this.shared.setCell(this.selected);
    this.applyDoc();
  }

  // Make the page's cells what the document holds: new ones drawn, gone ones removed, kinds set,
  // each editor bound to its cell's text, and the order followed without moving a cell that did
  // not move (moving the element holding the focus would take it away from its typist).
  applyDoc() {
    const list = this.shared.list();
    const ids = new Set(list.map((c) => c.id));
    for (const [id, cell] of [...this.cells]) {
      if (ids.has(id)) continue;
      this.cells.delete(id);
      if (this.selected === id) this.selected = null;
      cell.destroy();
    }
    list.forEach(({ id, kind, text }, i) => {
      let cell = this.cells.get(id);
      if (!cell) cell = this.makeCell({ id, kind, source: text.toString() });
      if (cell.kind !== kind) cell.setKind(kind);
      cell.bind(text, this.shared.awareness);
      const at = this.cellList.children[i];
      if (at !== cell.el) this.cellList.insertBefore(cell.el, at || null);
    });
    this.order = list.map((c) => c.id);
    this.presence.draw();
    this.root.dispatchEvent(new CustomEvent("cells-changed")); // the outline and the find bar follow
  }

  // ------------------------------------------------------------------ user actions (run by notebook-actions.js)

  bindEvents() {
    this.root.addEventListener("cell-action", (e) => act(this, e.detail.action, e.detail.cellId));
    this.root.addEventListener("run-details", (e) => openRunDetails(this.api, e.detail.runId, e.detail.previous,
      allows(this.role, "run")));
    this.root.addEventListener("cell-select", (e) => this.select(e.detail.cellId));
    this.root.addEventListener("click", (e) => {
      const b = e.target.closest("button[data-action]");
      if (!b || b.closest(".cell") || b.closest(".overlay") || b.closest(".banner") || b.closest(".log")) return;
      act(this, b.dataset.action, this.selected);
    });
    this.titleInput.addEventListener("change", () => this.rename(this.titleInput.value.trim()));
    this.titleInput.addEventListener("keydown", (e) => {
      if (e.key === "Enter") this.titleInput.blur();
    });
    bindCommandKeys(document, (action) => act(this, action, this.selected), {
      inEditor: (target) => !!(target.closest && target.closest(".cm-editor")),
    });
    // Back/Forward may show this page from the browser's cache, as it was when left: what it shows
    // (sources, revision, outputs) may be old, and typing there would conflict with the user's own
    // later edits. Reload it from the server unless edits are still waiting to be saved: typing the
    // shared document had not seen stored yet (maybe not even sent when the page was frozen) stays,
    // and goes out when the socket joins again (a reload dropped it).
    window.addEventListener("pageshow", (e) => {
      if (e.persisted && !this.saver.dirty && !this.shared?.unsaved) location.reload();
    });
    window.addEventListener("beforeunload", (e) => {
      if (this.shared.inFlight || this.saver.dirty || this.saver.conflict) {
        e.preventDefault();
        e.returnValue = "";
      }
    });
  }

  select(cellId) {
    if (this.selected === cellId) return;
    this.cells.get(this.selected)?.el.classList.remove("selected");
    this.selected = cellId;
    this.cells.get(cellId)?.el.classList.add("selected");
    this.shared?.setCell(cellId); // presence: which cell this user is in
  }

  async rename(name) {
    if (!name || name === this.nb.name || !allows(this.role, "rename")) return;
    const res = await this.saver.op((base) => this.api.renameNotebook(this.id, name, base));
    this.nb.name = res.name;
    this.setTitle(res.name);
  }

  // ------------------------------------------------------------------ saving

  // The REST queue's state, unless this page has typed what the server has not stored yet.
  showSaveState(state) {
    if ((state === "saved" || !state) && this.shared?.unsaved) state = "dirty";
    this.saveState.dataset.state = state;
    this.saveState.textContent = SAVE_TEXT[state] || state;
  }

  localCells() {
    return this.order.map((id) => {
      const c = this.cells.get(id);
      return { kind: c.kind, source: c.source };
    });
  }

  showConflict(err) {
    const rev = err.currentRevision;
    this.root.dataset.conflict = "1";
    this.banners.show("conflict",
      `This notebook was changed somewhere else (it is now at revision ${rev ?? "?"}). Your latest edits here are not saved yet; nothing has been thrown away.`,
      [
        ["Reload their version", () => this.reloadTheirs(), "reload"],
        ["Keep my copy as a new notebook", () => this.keepCopy(), "keep-copy"],
      ], "warning");
  }

  reloadTheirs() {
    this.saver.reset(this.saver.revision);
    location.reload();
  }

  async keepCopy() {
    const copy = await this.api.createNotebook({
      name: `${this.nb.name} (my copy)`,
      folder: this.nb.folder || "/",
      cells: this.localCells(),
    });
    this.saver.reset(this.saver.revision);
    location.href = `/notebooks/${encodeURIComponent(copy.id)}`;
  }
}
