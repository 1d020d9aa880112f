// The notebook page: the toolbar, the cells, the shared document, and the live channel.
// Stored outputs (GET /api/notebooks/<id>) are drawn first, then the page joins the notebook's
// room with what it holds and continues live; `data-ready` on the root marks it interactive.
// Cells, their order, kinds and sources live in a Yjs document shared by everyone on the
// notebook (coedit.js); `data-connection="live"` means joined and that document synced. Only
// what is not in the document (the name, a result's chart) is still saved over REST (autosave.js).

import { h } from "./dom.js";
import { Cell } from "./cell.js";
import { Saver } from "./autosave.js";
import { SeqTracker } from "./seqtracker.js";
import { connectNotebook } from "./socket.js";
import { bindCommandKeys, helpOverlay } from "./shortcuts.js";
import { Banners } from "./banner.js";
import { allows, atLeast, setRoles } from "./roles.js";
import { allowRemoteImages } from "./markdown.js";
import { setAssist } from "./assist.js";
import { confirmDialog } from "./dialog.js";
import { clearOutputs } from "./clearoutputs.js";
import { SharedDoc } from "./coedit.js";
import { Presence, colourFor } from "./presence.js";
import { actionButton, notebookToolbar } from "./toolbar.js";
import { DataPanel } from "./datapanel.js";

const KERNEL_TEXT = { starting: "kernel starting", idle: "kernel idle", busy: "kernel busy", dead: "kernel dead", none: "no kernel" };
const SAVE_TEXT = { saved: "saved", dirty: "editing…", saving: "saving…", conflict: "not saved: conflict", offline: "not saved: retrying" };
const FINAL = new Set(["done", "error", "interrupted", "cancelled"]);
const UNDO_DEPTH = 20; // deletions z can undo
const RUN_ALL_STOPPED = /a cell above it failed/; // the server's reason for the cells it did not run

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
    this.pendingRuns = new Map(); // cellId -> run id announced by cell_status, not yet drawn
    this.deleted = []; // cells this page deleted, last last: what z brings back
    this.role = "viewer"; // until the notebook says otherwise (GET /api/notebooks/<id> has `role`)
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
      onRebuild: () => this.watchDoc(),
      onSaved: (rev) => this.saver.advance({ revision: rev }),
      onUnsaved: () => this.showSaveState(this.saver.state || "saved"),
      onRefused: (message) => this.banners.show("coedit", `Not saved: ${message}`),
    });
    this.setTitle(nb.name);
    this.renderCells(nb.cells, runs && runs.runs);
    performance.mark("console-drawn");
    this.bindEvents();
    this.clock = setInterval(() => this.tickRunning(), 250);
    // Completion and hover ask this user's kernel; only a runner has one (a viewer's editor is read-only).
    if (allows(this.role, "run")) {
      setAssist({
        complete: (source, cursor, kind) => this.api.complete(this.id, { source, cursor, kind }),
        inspect: (name) => this.api.inspect(this.id, name),
      });
    }
    this.root.dataset.ready = "1";
    performance.mark("console-ready"); // bench/page_load.py reads these two
    requestAnimationFrame(() => setTimeout(() => performance.mark("console-painted")));
    this.connect();
  }

  buildShell() {
    const btn = actionButton;
    this.titleInput = h("input.nb-name", { dataset: { role: "name" }, "aria-label": "Notebook name" });
    this.saveState = h("span.save-state", { dataset: { role: "save-state" }, text: "saved" });
    this.kernelBadge = h("span.kernel", { dataset: { role: "kernel", status: "none" }, text: KERNEL_TEXT.none });
    this.connBadge = h("span.conn", { dataset: { role: "connection", state: "connecting" }, text: "connecting" });
    this.help = helpOverlay();
    this.banners = new Banners();
    this.kernelCard = h("div.kernel-card", { dataset: { role: "kernel-dead" }, hidden: true });
    this.cellList = h("div.cells", { dataset: { role: "cells" } });
    this.data = new DataPanel({ api: this.api, notebookId: this.id, insertCell: (source, run) => this.insertSource(source, run) });
    const toolbar = notebookToolbar(this);
    const addBar = h("div.add-bar", { dataset: { needs: "editor" } },
      btn("add-mlsql", "+ MLSQL", "Add an MLSQL cell at the end"),
      btn("add-python", "+ Python", "Add a Python cell at the end"),
      btn("add-markdown", "+ Markdown", "Add a Markdown cell at the end"));
    this.root.replaceChildren(toolbar, this.banners.el, this.kernelCard,
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
    document.title = `${name} · MLSQL Console`;
  }

  makeCell(data) {
    const cell = new Cell(data, { downloadUrl: (runId) => this.api.logUrl(runId), role: this.role, results: {
      api: this.api, notebookId: this.id,
      saveView: (cellId, view) => this.saver.saveView(cellId, view, (v, base) => this.api.patchCell(this.id, cellId, { view: v, base_revision: base })),
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
      for (const ev of run.events || []) this.onEvent(ev.type, ev);
      this.useRun(cell, run.id);
      if (run.status === "running" && run.started_at) cell.startedAt = Date.parse(run.started_at);
      cell.output.log.flush(); // paint now, so the page is complete when it says ready
      cell.output.chart?.draw();
      cell.tick();
    }
  }

  // ------------------------------------------------------------------ live channel

  connect() {
    this.live = connectNotebook({
      namespace: this.config.socketNamespace || "/",
      path: this.config.socketPath || "/socket.io",
      notebookId: this.id,
      cursors: () => ({ since: this.cursorMap(this.outputSeq), metrics_since: this.cursorMap(this.metricSeq) }),
      onEvent: (type, ev) => this.shared.onEvent(type, ev) || this.onEvent(type, ev),
      onJoined: () => this.syncDoc(),
      onConnection: (state) => {
        this.connBadge.dataset.state = state;
        this.connBadge.textContent = state;
        this.root.dataset.connection = state;
      },
      onRefused: (ack) => this.banners.show("command", `${ack.type.replace("_", " ")} refused: ${ack.error || ack.status}`),
    });
  }

  // ------------------------------------------------------------------ the shared document

  async syncDoc() {
    const first = !this.shared.epoch;
    if (!(await this.shared.sync())) return;
    if (first) this.watchDoc();
    this.root.dataset.doc = "synced";
  }

  // (Re)attach to the document (first sync, or rebuilt after the server's restarted).
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
  }

  // Runs shown on the page with the last seq each holds (0 when none yet).
  cursorMap(tracker) {
    const out = {};
    for (const cell of this.cells.values()) {
      const run = cell.output.runId;
      if (run) out[run] = tracker.last.get(run) || 0;
    }
    return out;
  }

  onEvent(type, ev) {
    if (ev.notebook_id && ev.notebook_id !== this.id) return;
    if (type === "kernel_status") return this.onKernel(ev);
    const cell = this.cells.get(ev.cell_id);
    if (!cell) {
      if (type === "error") this.banners.show("kernel-error", `${ev.kind || "error"}: ${ev.message}`);
      return;
    }
    switch (type) {
      case "output":
        if (!this.outputSeq.accept(ev.run_id, ev.seq)) return;
        this.useRun(cell, ev.run_id);
        cell.output.output(ev);
        break;
      case "output_hidden":
        if (ev.last_seq && !this.outputSeq.accept(ev.run_id, ev.last_seq)) return;
        this.useRun(cell, ev.run_id);
        cell.output.hiddenOutput(ev);
        break;
      case "metrics":
        if (!this.metricSeq.accept(ev.run_id, ev.seq)) return;
        this.useRun(cell, ev.run_id);
        cell.output.metrics(ev);
        break;
      case "result":
        this.useRun(cell, ev.run_id);
        cell.output.result(ev);
        break;
      case "error":
        this.useRun(cell, ev.run_id);
        cell.output.error(ev);
        if (RUN_ALL_STOPPED.test(ev.message || "")) this.sayRunAllStopped();
        break;
      case "cell_status":
        this.onCellStatus(cell, ev);
        break;
      case "ray_usage":
        this.useRun(cell, ev.run_id);
        cell.rayUsage(ev);
        break;
      default:
    }
  }

  // Output of a new run replaces the old run's; until it comes, the old one stays, dimmed.
  useRun(cell, runId) {
    if (!runId || cell.output.runId === runId) return;
    cell.startRun(runId);
    this.pendingRuns.delete(cell.id);
  }

  // The server cancels the rest of a Run all after a failure (console/server/kernels.py); the
  // banner names the cell it stopped at, once per stop.
  sayRunAllStopped() {
    const failed = this.order.map((id) => this.cells.get(id)).findIndex((c) => c && c.status === "error");
    if (failed < 0 || this.stoppedAt === this.cells.get(this.order[failed]).output.runId) return;
    this.stoppedAt = this.cells.get(this.order[failed]).output.runId;
    this.banners.show("run-all", `Run all stopped at cell ${failed + 1}, which failed; the cells after it did not run.`,
      [["Show it", () => this.focusCell(this.order[failed], false), "show-failed"]], "warning");
  }

  onCellStatus(cell, ev) {
    if (ev.run_id !== cell.output.runId) {
      if (FINAL.has(ev.status)) this.useRun(cell, ev.run_id);
      else {
        this.pendingRuns.set(cell.id, ev.run_id);
        cell.output.markStale();
      }
    }
    cell.setStatus(ev.status, ev.elapsed_ms, ev.run_by || "");
  }

  // Restart asks first (it clears the session), then says when the new kernel is ready.
  async restart() {
    // A dead kernel has nothing left to clear: its card's button starts a new one at once.
    const ok = this.root.dataset.kernel === "dead" || await confirmDialog("Restart the kernel? This clears the session's tables, variables and "
      + "Python state (globals, Ray actors kept by them). Saved notebooks and outputs are kept.", { okText: "Restart" });
    if (!ok) return;
    this.restarting = true;
    this.banners.show("restart", "Restarting the kernel…", [], "info");
    this.live.restart();
  }

  onKernel(ev) {
    if (ev.user_id !== undefined && ev.user_id !== null && this.config.userId && String(ev.user_id) !== this.config.userId) return;
    if (ev.action) this.sayKernelAction(ev);
    const status = ev.status || "none";
    if (this.restarting && status === "idle") {
      this.restarting = false;
      this.banners.show("restart", "Kernel restarted: a fresh session (no tables, variables or Python state).", [], "info");
      setTimeout(() => this.banners.hide("restart"), 6000);
    }
    this.kernelBadge.dataset.status = status;
    this.kernelBadge.textContent = KERNEL_TEXT[status] || status;
    this.root.dataset.kernel = status;
    if (status === "dead") {
      this.kernelCard.replaceChildren(
        h("strong", { text: "The kernel stopped." }),
        h("span", { text: ` ${ev.reason || "It exited without saying why."} Tables and variables of this session are gone; saved notebooks and outputs are kept.` }),
        allows(this.role, "restart") ? h("button", { type: "button", dataset: { action: "restart" }, text: "Start a new kernel" }) : null);
      this.kernelCard.hidden = false;
    } else if (status === "starting" || status === "idle") {
      this.kernelCard.hidden = true;
    }
  }

  // The session is shared: whoever restarts, interrupts or shuts it down, everyone on the page is told.
  sayKernelAction(ev) {
    const by = ev.by || "someone";
    const text = { restart: `${by} restarted the kernel: the session's tables and variables are gone.`,
      interrupt: `${by} interrupted the kernel.`,
      shutdown: `${by} shut the session down; the next run starts a new kernel.` }[ev.action];
    if (!text) return;
    this.banners.show("kernel-action", text, [], ev.action === "interrupt" ? "info" : "warning");
    setTimeout(() => this.banners.hide("kernel-action"), 8000);
  }

  tickRunning() {
    for (const cell of this.cells.values()) if (cell.status === "running") cell.tick();
  }

  // ------------------------------------------------------------------ user actions

  bindEvents() {
    this.root.addEventListener("cell-action", (e) => this.act(e.detail.action, e.detail.cellId));
    this.root.addEventListener("cell-select", (e) => this.select(e.detail.cellId));
    this.root.addEventListener("click", (e) => {
      const b = e.target.closest("button[data-action]");
      if (!b || b.closest(".cell") || b.closest(".overlay") || b.closest(".banner") || b.closest(".log")) return;
      this.act(b.dataset.action, this.selected);
    });
    this.titleInput.addEventListener("change", () => this.rename(this.titleInput.value.trim()));
    this.titleInput.addEventListener("keydown", (e) => {
      if (e.key === "Enter") this.titleInput.blur();
    });
    bindCommandKeys(document, (action) => this.act(action, this.selected), {
      inEditor: (target) => !!(target.closest && target.closest(".cm-editor")),
    });
    // Back/Forward may show this page from the browser's cache, as it was when left: what it shows
    // (sources, revision, outputs) may be old, and typing there would conflict with the user's own
    // later edits. Reload it from the server unless edits are still waiting to be saved.
    window.addEventListener("pageshow", (e) => {
      if (e.persisted && !this.saver.dirty) location.reload();
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

  neighbour(cellId, delta) {
    const i = this.order.indexOf(cellId);
    return this.order[i + delta];
  }

  async act(action, cellId) {
    const cell = this.cells.get(cellId);
    // Keys reach here whatever the role; a runner's "run, insert below" still runs.
    if (action === "run-insert" && !allows(this.role, action)) action = "run";
    if (!allows(this.role, action)) return;
    try {
      switch (action) {
        case "run": return await this.run(cell);
        case "run-next": {
          await this.run(cell);
          const next = this.neighbour(cellId, 1);
          if (next) this.focusCell(next, true);
          else if (allows(this.role, "insert-below")) await this.insert(this.order.length, cell ? cell.kind === "markdown" ? "mlsql" : cell.kind : "mlsql", true);
          return;
        }
        case "run-insert":
          await this.run(cell);
          return await this.insert(this.order.indexOf(cellId) + 1, cell?.kind || "mlsql", true);
        case "run-from": return await this.withSaved(() => cell && this.live.runFrom(cell.id));
        case "run-all": return await this.withSaved(() => this.live.runAll());
        case "interrupt": return this.live.interrupt();
        case "restart": return await this.restart();
        case "clear-all": return await clearOutputs(this.api, this.id, this.role, [...this.cells.values()], true);
        case "clear-output": return cell && await clearOutputs(this.api, this.id, this.role, [cell]);
        case "collapse-input": case "collapse-output":
          return cell?.el.classList.toggle(action === "collapse-input" ? "input-collapsed" : "output-collapsed");
        case "save": return await this.saver.flush();
        case "help": return this.help.toggle();
        case "data-panel": return this.data.toggle();
        case "command-mode":
          cell?.kind === "markdown" && cell.stopEditing();
          return cell?.el.focus();
        case "edit": return cell && (cell.kind === "markdown" ? cell.startEditing() : cell.editor.focus());
        case "select-prev": case "select-next": {
          const next = this.neighbour(cellId, action === "select-prev" ? -1 : 1) || (cellId ? null : this.order[0]);
          return next && this.focusCell(next, false);
        }
        case "insert-above": return await this.insert(Math.max(0, this.order.indexOf(cellId)), "mlsql", true);
        case "insert-below": return await this.insert(cell ? this.order.indexOf(cellId) + 1 : this.order.length, "mlsql", true);
        case "add-mlsql": case "add-python": case "add-markdown":
          return await this.insert(this.order.length, action.slice(4), true);
        case "delete": return cell && await this.remove(cell);
        case "undo-delete": return await this.undoDelete();
        case "move-up": case "move-down": return cell && await this.move(cell, action === "move-up" ? -1 : 1);
        case "kind-mlsql": case "kind-python": case "kind-markdown":
          return cell && await this.changeKind(cell, action.slice(5));
        default:
      }
    } catch (err) {
      if (err.status !== 409) this.banners.show("action", `${action} failed: ${err.message}`);
    }
  }

  focusCell(cellId, edit) {
    const cell = this.cells.get(cellId);
    if (!cell) return;
    this.select(cellId);
    if (edit && cell.kind !== "markdown" && !cell.readOnly) cell.editor.focus();
    else cell.focus();
  }

  // The server runs the stored source: every change made here reaches it first (it stores the
  // shared document before it runs), and the REST writes still queued are sent.
  async withSaved(fn) {
    await this.shared.whenSent();
    await this.saver.flush();
    fn();
  }

  async run(cell) {
    if (!cell) return;
    if (cell.kind === "markdown") {
      cell.stopEditing();
      return;
    }
    this.select(cell.id);
    await this.withSaved(() => this.live.runCell(cell.id));
  }

  // Structure changes go into the shared document; applyDoc draws them, here and on every page.
  async insert(position, kind, focus) {
    await this.shared.ready;
    const id = this.shared.insertCell(position, kind);
    const cell = this.cells.get(id);
    if (focus) {
      if (kind === "markdown") cell.startEditing();
      this.focusCell(cell.id, true);
    }
    return cell;
  }

  // A deletion can be undone (z, or the banner's button): the cell comes back where it was, with
  // its id (so its stored runs stay its own), its text, and the output this page showed.
  // A cell the data panel inserts (a load, a preview): below the selected cell, or at the end.
  async insertSource(source, run = false) {
    await this.shared.ready;
    const at = this.selected && this.order.includes(this.selected) ? this.order.indexOf(this.selected) + 1 : this.order.length;
    const id = this.shared.insertCell(at, "mlsql", source);
    this.focusCell(id, false);
    if (run && allows(this.role, "run")) await this.run(this.cells.get(id));
    return id;
  }

  async remove(cell) {
    const next = this.neighbour(cell.id, 1) || this.neighbour(cell.id, -1);
    const index = this.order.indexOf(cell.id);
    await this.shared.ready;
    this.deleted.push({ id: cell.id, kind: cell.kind, source: cell.editor.text(), index, output: cell.output, view: cell.view });
    if (this.deleted.length > UNDO_DEPTH) this.deleted.shift();
    this.shared.deleteCell(cell.id);
    if (next) this.focusCell(next, false);
    this.banners.show("undo-delete", `Cell ${index + 1} deleted.`, [["Undo (z)", () => this.act("undo-delete"), "undo-delete"]], "info");
    clearTimeout(this.undoTimer);
    this.undoTimer = setTimeout(() => this.banners.hide("undo-delete"), 15000);
  }

  async undoDelete() {
    const last = this.deleted.pop();
    this.banners.hide("undo-delete");
    if (!last) return;
    await this.shared.ready;
    const present = this.shared.list().some((c) => c.id === last.id); // someone else brought it back
    if (!present) this.shared.insertCell(Math.min(last.index, this.order.length), last.kind, last.source, last.id);
    const cell = this.cells.get(last.id);
    if (!cell) return;
    if (!present) cell.adoptOutput(last.output, last.view);
    this.focusCell(cell.id, false);
  }

  async move(cell, delta) {
    const from = this.order.indexOf(cell.id);
    const to = from + delta;
    if (to < 0 || to >= this.order.length) return;
    await this.shared.ready;
    this.shared.moveCell(cell.id, to);
    cell.focus();
  }

  async changeKind(cell, kind) {
    if (cell.kind === kind) return;
    cell.setKind(kind);
    await this.shared.ready;
    this.shared.setKind(cell.id, kind);
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
