// The notebook page's live channel (socket.js): joining the notebook's room with the cursors of
// the runs it shows, and the run events it sends (output, metrics, results, errors, cell status,
// Ray usage) drawn into their cells once each and in order (seqtracker.js). Stored runs replay
// through onLiveEvent too (notebook.js renderCells), so one code path draws both.
// page: the NotebookPage (its cells, order, banners, badges, shared document and trackers).

import { connectNotebook } from "./socket.js";
import { onKernel } from "./notebook-kernel.js";
import { focusCell } from "./notebook-actions.js";
import { errorTitle } from "./output.js";
import { EVENT } from "./wire-names.js";

const FINAL = new Set(["done", "error", "interrupted", "cancelled"]);

export function connectLive(page) {
  page.live = connectNotebook({
    namespace: page.config.socketNamespace || "/",
    path: page.config.socketPath || "/socket.io",
    notebookId: page.id,
    cursors: () => ({ since: cursorMap(page, page.outputSeq), metrics_since: cursorMap(page, page.metricSeq) }),
    onEvent: (type, ev) => page.shared.onEvent(type, ev) || onLiveEvent(page, type, ev),
    onJoined: () => {
      page.syncDoc();
      page.root.dispatchEvent(new CustomEvent("live-joined")); // comments.js reads what it missed
    },
    onConnection: (state) => {
      page.connBadge.dataset.state = state;
      page.connBadge.textContent = state;
      page.root.dataset.connection = state;
    },
    onRefused: (ack) => page.banners.show("command", `${ack.type.replace("_", " ")} refused: ${ack.error || ack.status}`),
  });
}

// Runs shown on the page with the last seq each holds (0 when none yet).
function cursorMap(page, tracker) {
  const out = {};
  for (const cell of page.cells.values()) {
    const run = cell.output.runId;
    if (run) out[run] = tracker.last.get(run) || 0;
  }
  return out;
}

export function onLiveEvent(page, type, ev) {
  if (ev.notebook_id && ev.notebook_id !== page.id) return;
  if (type === EVENT.KERNEL_STATUS) return onKernel(page, ev);
  // Comments (comments.js) read the list again; the event carries no text.
  if (type === EVENT.COMMENTS_CHANGED) return void page.root.dispatchEvent(new CustomEvent("comments-changed", { detail: ev }));
  const cell = page.cells.get(ev.cell_id);
  if (!cell) {
    if (type === EVENT.ERROR) page.banners.show("kernel-error", `${ev.kind || "error"}: ${ev.message}`);
    return;
  }
  switch (type) {
    case EVENT.OUTPUT:
      if (!page.outputSeq.accept(ev.run_id, ev.seq)) return;
      useRun(page, cell, ev.run_id);
      cell.output.output(ev);
      break;
    case EVENT.OUTPUT_HIDDEN:
      if (!page.outputSeq.acceptMarker(ev.run_id, ev.last_seq)) return;
      useRun(page, cell, ev.run_id);
      cell.output.hiddenOutput(ev);
      break;
    case EVENT.METRICS:
      if (!page.metricSeq.accept(ev.run_id, ev.seq)) return;
      useRun(page, cell, ev.run_id);
      cell.output.metrics(ev);
      break;
    case EVENT.RESULT:
      useRun(page, cell, ev.run_id);
      cell.output.result(ev);
      break;
    case EVENT.ERROR:
      useRun(page, cell, ev.run_id);
      cell.output.error(ev);
      if (ev.kind === "not_run") {
        cell.showStatus();
        sayRunAllStopped(page, cell);
      }
      break;
    case EVENT.CELL_STATUS:
      onCellStatus(page, cell, ev);
      break;
    case EVENT.RAY_USAGE:
      useRun(page, cell, ev.run_id);
      cell.rayUsage(ev);
      break;
    default:
  }
}

// Output of a new run replaces the old run's; until it comes, the old one stays, dimmed.
export function useRun(page, cell, runId) {
  if (!runId || cell.output.runId === runId) return;
  cell.startRun(runId);
}

// The server cancels the rest of a Run all after a failure (console/server/sessions/kernels.py, error kind
// "not_run"); one banner names the cell it stopped at and why. notRun: a cell it
// cancelled; the failed one is the nearest failed cell above it.
function sayRunAllStopped(page, notRun) {
  const cells = page.order.map((id) => page.cells.get(id));
  const at = cells.indexOf(notRun);
  let failed = -1;
  for (let i = at - 1; i >= 0; i--) {
    if (cells[i] && cells[i].status === "error") {
      failed = i;
      break;
    }
  }
  if (failed < 0) return;
  const cell = cells[failed];
  // Each cancelled cell updates the count; once dismissed, this stop's banner stays away.
  if (page.stoppedAt === cell.output.runId && !page.banners.byKey.has("run-all")) return;
  page.stoppedAt = cell.output.runId;
  const skipped = cells.filter((c, i) => i > failed && c && c.output.notRun).length;
  const err = cell.output.lastError;
  const why = err ? `${errorTitle(err.kind)}: ${firstLine(err.message)}` : "it failed";
  page.banners.show("run-all", `Run all stopped at cell ${failed + 1} (${why}); ${skipped} cell${
    skipped === 1 ? "" : "s"} after it did not run.`,
  [["Show it", () => focusCell(page, page.order[failed], false), "show-failed"]], "warning");
}

function firstLine(text) {
  const line = String(text || "").trim().split("\n", 1)[0];
  return line.length > 160 ? `${line.slice(0, 159)}…` : line;
}

function onCellStatus(page, cell, ev) {
  if (ev.run_id !== cell.output.runId) {
    if (FINAL.has(ev.status)) useRun(page, cell, ev.run_id);
    else cell.output.markStale();
  }
  // A job's run says so on each of its events (the page then names the job, not its owner).
  if (ev.job_id) cell.setJobRun({ runId: ev.run_id, job: ev.job_name || "", jobId: ev.job_id });
  cell.setStatus(ev.status, ev.elapsed_ms, ev.run_by || "");
  if (FINAL.has(ev.status)) page.data.refreshIfOpen(); // the variable explorer after each run
}
