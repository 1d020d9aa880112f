// The output area under a cell: live log, hidden-bytes marker, result tables, metrics chart and
// error card of the cell's current run. Fed the same way from stored runs (after a reload) and
// from live Socket.IO events, so a reloaded page looks like the one that watched the run.

import { h, emit } from "./dom.js";
import { LogModel } from "./logmodel.js";
import { LogView } from "./logview.js";
import { MetricsChart } from "./chart.js";
import { ResultView } from "./results.js";

const ERROR_TITLES = {
  parse: "Parse error",
  sql: "SQL error",
  python: "Python error",
  data: "Data error",
  worker: "Worker error",
  kernel: "Kernel error",
  interrupted: "Interrupted",
  not_run: "Not run",
};

export function errorTitle(kind) {
  return ERROR_TITLES[kind] || "Error";
}

export class CellOutput {
  // results: what result views need of the page (results.js ctx, with view() the cell's saved view)
  constructor({ downloadUrl, results = null }) {
    this.downloadUrl = downloadUrl; // (runId) -> URL of the run's full log
    this.resultCtx = results;
    this.views = [];
    this.runId = "";
    this.notRun = false; // the run was cancelled because a cell above it failed in a Run all
    this.lastError = null; // the run's error event, for the page's Run all banner
    this.log = new LogView(new LogModel());
    this.results = h("div.results");
    this.chart = null; // created at the first metric: most cells never have one
    this.chartSlot = h("div.chart-slot");
    this.errorSlot = h("div.error-slot");
    this.images = h("div.output-images", { dataset: { role: "images" } });
    this.el = h("div.output", { dataset: { role: "output" } },
      this.chartSlot, this.log.el, this.images, this.results, this.errorSlot);
  }

  // A new run of this cell replaces the previous run's output.
  startRun(runId) {
    if (runId === this.runId) return false;
    this.runId = runId;
    this.notRun = false;
    this.lastError = null;
    this.log.reset();
    this.images.replaceChildren();
    for (const v of this.views) v.destroy();
    this.views = [];
    this.results.replaceChildren();
    this.errorSlot.replaceChildren();
    this.chart?.reset();
    this.el.classList.remove("stale");
    return true;
  }

  markStale() {
    this.el.classList.add("stale");
  }

  output(ev) {
    // A figure (Utils.show_plt, display(fig)): one base64 PNG per chunk, drawn as an image.
    if (ev.stream === "image") {
      this.images.append(h("img.output-image", { src: `data:image/png;base64,${ev.text}`, alt: "figure", dataset: { role: "image" } }));
      return;
    }
    this.log.model.append(ev.text, ev.source || "driver", ev.stream || "stdout");
    this.log.schedule();
  }

  metrics(ev) {
    if (!this.chart) {
      this.chart = new MetricsChart();
      this.chartSlot.append(this.chart.el);
    }
    this.chart.add(ev);
  }

  result(ev) {
    const existing = ev.name && this.results.querySelector(`[data-table="${CSS.escape(ev.name)}"]`);
    const ctx = this.resultCtx;
    const view = new ResultView(ev, ctx ? { ...ctx, view: ctx.view() } : {});
    this.views.push(view);
    if (existing) existing.replaceWith(view.el);
    else this.results.append(view.el);
  }

  error(ev) {
    this.lastError = ev;
    // A cell Run all did not reach: a quiet note, not an error; the page's banner says why.
    if (ev.kind === "not_run") {
      this.notRun = true;
      this.errorSlot.replaceChildren(h("div.not-run-note", { dataset: { role: "not-run" },
        text: "Not run: Run all stopped at a failed cell above." }));
      return;
    }
    const title = ERROR_TITLES[ev.kind] || "Error";
    const where = ev.line ? ` at line ${ev.line}${ev.column ? `, column ${ev.column}` : ""}` : "";
    const card = h("div.error-card", { dataset: { role: "error", kind: ev.kind || "", line: ev.line || "" } },
      h("div.error-title", { text: `${title}${where}` }),
      h("pre.error-message", { text: ev.message || "" }));
    if (ev.traceback) {
      card.append(h("details.traceback", {}, h("summary", { text: "traceback" }), h("pre", { text: ev.traceback })));
    }
    this.errorSlot.replaceChildren(card);
    if (ev.line) emit(this.el, "cell-error-line", { line: ev.line });
  }

  // The server kept the head and tail of a big log inline; the marker sits where the middle was.
  hiddenOutput(ev) {
    this.log.model.hidden(ev.hidden_bytes, ev.log_url || this.downloadUrl(this.runId));
    this.log.schedule();
  }

  clear() {
    this.runId = null; // startRun("") then empties everything (it does nothing for the current run)
    this.startRun("");
  }
}
