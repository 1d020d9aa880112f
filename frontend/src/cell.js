// One cell on the notebook page: its header (kind, run state, time, actions), its editor (or
// rendered Markdown) and its output. It reports what the user does as CustomEvents on its element
// ("cell-action" with {cellId, action}, "cell-edit" with {cellId, source}); the notebook decides.

import { h, emit } from "./dom.js";
import { createEditor } from "./editor.js";
import { kindFromHeader } from "./assist.js";
import { editorBindings } from "./shortcuts.js";
import { renderMarkdown } from "./markdown.js";
import { CellOutput } from "./output.js";
import { formatElapsed } from "./paging.js";
import { allows } from "./roles.js";
import { replayLocalEdit } from "./coedit.js";
import { RayUsageView } from "./rayusage.js";

const KINDS = [["mlsql", "MLSQL"], ["python", "Python"], ["markdown", "Markdown"]];
const STATUS_TEXT = {
  queued: "queued", running: "running", done: "done", error: "failed",
  interrupted: "interrupted", cancelled: "cancelled",
};

export class Cell {
  // role: the user's role on the notebook; controls it does not allow are not drawn at all.
  // results: {api, notebookId, saveView(cellId, view), pin(cellId, kind)} for result paging,
  // downloads, charts and pinning to the dashboard.
  constructor({ id, kind, source, view = null }, { downloadUrl, role = "owner", results = null }) {
    this.id = id;
    this.kind = kind;
    this.source = source;
    this.loadedSource = source; // as loaded over REST: what typing before the live sync changed
    this.ytext = null;
    this.status = "";
    this.startedAt = 0;
    this.elapsedMs = null;
    this.editing = false;
    this.readOnly = !allows(role, "edit");
    this.runBy = ""; // who ran the shown run (cell_status run_by)
    this.jobRun = null; // or the job that ran it: {runId, job, jobId} (jobs.js)

    // Icons carry their words as a tooltip and an accessible name (screen readers, tests).
    const button = (action, text, title) => allows(role, action)
      ? h("button.icon", { type: "button", title, "aria-label": title, dataset: { action }, text }) : null;
    this.kindSelect = h("select.kind", { title: "Cell kind", dataset: { role: "kind" }, disabled: this.readOnly },
      KINDS.map(([value, label]) => h("option", { value, text: label, selected: value === kind })));
    // The status opens the shown run's details (rundetails.js): what it read and wrote, a replay.
    this.statusEl = h("span.status", { dataset: { role: "status" }, title: "Run details" });
    this.statusEl.addEventListener("click", () => this.output.runId
      && emit(this.el, "run-details", { cellId: this.id, runId: this.output.runId, previous: this.previousRunId }));
    this.previousRunId = null; // the run this cell showed before the current one, to compare with
    this.peersEl = h("span.peers", { dataset: { role: "peers" } });
    this.timeEl = h("span.elapsed", { dataset: { role: "elapsed" } });
    // Who ran the shown run: the notebook's session is shared by its runners.
    this.runByEl = h("span.run-by.muted", { dataset: { role: "run-by" } });
    this.editorBox = h("div.cell-editor");
    this.ray = new RayUsageView(); // the running cell's Ray actors, tasks and CPUs (ray_usage events)
    this.markdownView = h("div.markdown-view", { dataset: { role: "markdown" }, title: this.readOnly ? undefined : "Double-click to edit" });
    this.view = view; // how the result is shown (a chart's choices), saved with the cell
    this.output = new CellOutput({ downloadUrl, results: results && {
      fetchPage: (offset, limit, sort) => results.api.resultPage(results.notebookId, id, offset, limit, sort),
      download: (format, sort) => results.api.downloadResult(results.notebookId, id, format, sort),
      view: () => this.view,
      onView: allows(role, "edit") ? (v) => { this.view = v; results.saveView(id, v); } : (v) => { this.view = v; },
      pin: allows(role, "edit") && results.pin ? (kind) => results.pin(id, kind) : null, // to the dashboard
    } });

    this.el = h("section.cell", { dataset: { cellId: id, kind }, tabIndex: -1 },
      h("div.cell-head", {},
        button("run", "▶ Run", "Run (Shift+Enter)"),
        this.kindSelect, this.statusEl, this.timeEl, this.runByEl,
        h("span.spacer"), this.peersEl,
        button("collapse-input", "⌃", "Collapse or expand the input"),
        button("collapse-output", "⌄", "Collapse or expand the output"),
        button("clear-output", "⌫", "Clear the output (an editor's clear is stored; others clear this page only)"),
        button("run-from", "▶▶", "Run from here to the end"),
        button("move-up", "↑", "Move up"),
        button("move-down", "↓", "Move down"),
        button("insert-below", "+", "Add a cell below"),
        button("delete", "✕", "Delete the cell")),
      this.editorBox, this.markdownView, this.ray.el, this.output.el);

    this.editor = createEditor(this.editorBox, {
      doc: source,
      kind,
      readOnly: this.readOnly,
      keys: editorBindings((action) => this.act(action)),
      onChange: (text) => {
        this.source = text;
        this.output.el.querySelector('[data-role="error"]')?.classList.add("outdated");
        emit(this.el, "cell-edit", { cellId: this.id, source: text });
        if (this.kind === "markdown" && !this.editing) this.showKind(); // someone else's edit
        // The header decides the kind: `--%python` typed as the first line makes it Python at once.
        const headerKind = kindFromHeader(text);
        if (headerKind && headerKind !== this.kind) this.act(`kind-${headerKind}`);
      },
    });

    this.el.addEventListener("click", (e) => {
      const b = e.target.closest("button[data-action]");
      if (b && this.el.contains(b) && b.closest(".cell-head")) this.act(b.dataset.action);
    });
    this.kindSelect.addEventListener("change", () => this.act(`kind-${this.kindSelect.value}`));
    this.markdownView.addEventListener("dblclick", () => this.startEditing());
    this.el.addEventListener("cell-error-line", (e) => this.editor.markError(e.detail.line));
    this.el.addEventListener("focusin", () => emit(this.el, "cell-select", { cellId: this.id }));
    this.showKind();
  }

  // Bind to the cell's text in the shared document (coedit.js). What was typed here before the
  // first sync is replayed into it, so no keystroke is lost.
  bind(ytext, awareness) {
    if (this.ytext === ytext) return;
    if (!this.ytext && !this.readOnly) replayLocalEdit(ytext, this.loadedSource, this.editor.text());
    this.ytext = ytext;
    this.editor.bind(ytext, awareness);
    this.source = ytext.toString();
    this.el.dataset.live = "1";
  }

  // The other people whose cursor is in this cell: [{name, color}].
  setPeers(peers) {
    this.peersEl.replaceChildren(...peers.map((p) => {
      const dot = h("span.peer", { title: `${p.name} is here`, dataset: { user: p.name } });
      dot.style.backgroundColor = p.color || "#888";
      return dot;
    }));
  }

  act(action) {
    emit(this.el, "cell-action", { cellId: this.id, action });
  }

  setKind(kind) {
    this.kind = kind;
    this.el.dataset.kind = kind;
    this.kindSelect.value = kind;
    this.editor.setKind(kind);
    this.showKind();
  }

  // Markdown cells show their rendering until edited; code cells always show the editor.
  showKind() {
    const md = this.kind === "markdown";
    const rendered = md && !this.editing;
    this.editorBox.hidden = rendered;
    this.markdownView.hidden = !rendered;
    if (rendered) renderMarkdown(this.source, this.markdownView);
  }

  startEditing() {
    if (this.readOnly) return;
    this.editing = true;
    this.showKind();
    this.editor.focus();
  }

  stopEditing() {
    this.editing = false;
    this.showKind();
  }

  setSource(source) {
    this.source = source;
    this.editor.setText(source);
    this.showKind();
  }

  // cell_status event: queued/running/done/error/interrupted/cancelled (+ elapsed_ms at the end).
  setStatus(status, elapsedMs, runBy) {
    if (runBy !== undefined) {
      this.runBy = runBy;
      this.showRunBy();
    }
    this.status = status;
    if (status !== "running" && status !== "queued") this.output.log.flushNow(); // the output before the end
    this.showStatus();
    if (status === "running" && !this.startedAt) this.startedAt = Date.now();
    if (elapsedMs !== undefined && elapsedMs !== null) this.elapsedMs = elapsedMs;
    if (status !== "running" && status !== "queued") this.startedAt = 0;
    if (status !== "running") this.ray.ended();
    this.tick();
  }

  // Who ran the shown run: the job that made it (jobs.js says so: {runId, job, jobId}), else the
  // person; one attribution, never both.
  setJobRun(jobRun) {
    this.jobRun = jobRun;
    this.showRunBy();
  }

  showRunBy() {
    const job = this.jobRun && this.jobRun.runId === this.output.runId ? this.jobRun : null;
    if (job) {
      this.runByEl.replaceChildren(h("a.run-by-job", { href: `/jobs?job=${encodeURIComponent(job.jobId)}`,
        dataset: { role: "run-by-job" }, text: `run by job ${job.job}` }));
      this.runByEl.title = `the job ${job.job} ran this cell`;
      return;
    }
    const by = this.runBy || "";
    this.runByEl.textContent = by ? `run by ${by}` : "";
    this.runByEl.title = by ? `${by} ran this cell in the notebook's shared session` : "";
  }

  // The status as text; a cancelled cell that Run all never reached says "not run", quietly.
  showStatus() {
    const notRun = this.status === "cancelled" && this.output.notRun;
    this.el.dataset.status = this.status;
    this.el.classList.toggle("not-run", notRun);
    this.statusEl.textContent = notRun ? "not run" : (STATUS_TEXT[this.status] || this.status);
  }

  // A ray_usage event of the cell's run: what its Ray job holds now.
  rayUsage(ev) {
    this.ray.show(ev, this.status === "running");
  }

  // Called by the notebook's clock while the cell runs.
  tick() {
    if (this.status === "running" && this.startedAt) this.timeEl.textContent = formatElapsed(Date.now() - this.startedAt);
    else if (this.status === "queued") this.timeEl.textContent = "";
    else this.timeEl.textContent = formatElapsed(this.elapsedMs);
  }

  // A new run of this cell: its output replaces the old one.
  startRun(runId) {
    if (this.output.runId && this.output.runId !== runId) this.previousRunId = this.output.runId;
    this.el.dataset.runId = runId || ""; // the shown run, for the page's own parts and its tests
    // The new run's status events came first and set startedAt; only the old result goes.
    if (this.output.startRun(runId)) {
      this.editor.clearError();
      this.elapsedMs = null;
    }
    if (this.ray.runId !== runId) this.ray.clear();
  }

  // A deleted cell brought back (undo): the output it had, as it was on this page.
  adoptOutput(output, view) {
    this.output.el.replaceWith(output.el);
    this.output = output;
    this.view = view;
  }

  focus() {
    this.el.focus({ preventScroll: false });
    this.el.scrollIntoView({ block: "nearest" });
  }

  destroy() {
    this.editor.destroy();
    this.el.remove();
  }
}
