// The published page (/p/<token>): the notebook as the app's read-only view shows it, drawn from
// the data the page carries in an attribute (console/server/api/publish.py) with the app's own components: the output
// model that collapses \r redraws (logmodel.js), the folded log window (logview.js), typed result
// tables and the cell's saved chart (results.js), the metrics chart with axes (chart.js), error
// cards, figures. It asks the server for nothing and runs nothing: no kernel, no socket, no
// paging beyond the rows the page holds. Every value goes in as text; Markdown is sanitized.
// The same bundle draws the link's dashboard (/p/<token>/dashboard: dashboard.js), which reads
// GET /api/links/<token>/dashboard again every few seconds.

import "uplot/dist/uPlot.min.css";
import "./style.css";
import "./dashboard.css";
import { h } from "./dom.js";
import { CellOutput } from "./output.js";
import { allowRemoteImages, renderMarkdown } from "./markdown.js";
import { formatElapsed } from "./paging.js";
import { fillOutput } from "./storedrun.js";
import { startLinkDashboard } from "./dashboard.js";

export { fillOutput };

const KIND_NAMES = { mlsql: "MLSQL", python: "Python", markdown: "Markdown" };

function cellView(cell) {
  const head = h("div.cell-head", {}, h("span.kind-name", { text: KIND_NAMES[cell.kind] || cell.kind }));
  const el = h("section.cell.published-cell", { dataset: { cellId: cell.id, kind: cell.kind } }, head);
  if (cell.kind === "markdown") {
    const view = h("div.markdown-view", { dataset: { role: "markdown" } });
    renderMarkdown(cell.source, view);
    el.append(view);
    return el;
  }
  el.append(h("pre.published-source", { dataset: { role: "source" }, text: cell.source }));
  const run = cell.last_run;
  const shows = run && ((run.outputs || []).length || (run.metrics || []).length || run.result || run.error || run.hidden);
  if (run) {
    head.append(h("span.status", { dataset: { role: "status", status: run.status }, text: run.status }));
    if (run.elapsed_ms != null) head.append(h("span.elapsed", { text: formatElapsed(run.elapsed_ms) }));
  }
  if (shows) { // a run that printed nothing leaves no empty box behind
    // No kernel behind this page: the result view works on the rows it holds, the chart as saved.
    const output = new CellOutput({ downloadUrl: () => "", results: { view: () => cell.view || null } });
    el.append(output.el);
    fillOutput(output, cell.id, run);
  }
  return el;
}

export function renderPublished(root, data) {
  allowRemoteImages(Boolean(data.markdown_remote_images));
  const updated = data.updated_at ? new Date(data.updated_at).toLocaleString() : "";
  root.replaceChildren(
    h("header.published-head", {},
      h("h1", { dataset: { role: "published-name" }, text: data.name }),
      h("p.muted", { text: `Read-only view · revision ${data.revision}${updated ? ` · ${updated}` : ""}` })),
    h("div.cells.published-cells", { dataset: { role: "cells" } }, (data.cells || []).map(cellView)));
}

function start() {
  if (startLinkDashboard()) return; // /p/<token>/dashboard: the link's dashboard (dashboard.js)
  const island = document.getElementById("published-data");
  const root = document.getElementById("published-app");
  if (!island || !root) return;
  renderPublished(root, JSON.parse(island.dataset.json || "{}"));
  // Charts and logs draw in the next animation frame; tests and screenshots wait for this.
  requestAnimationFrame(() => requestAnimationFrame(() => { root.dataset.ready = "1"; }));
}

start();
