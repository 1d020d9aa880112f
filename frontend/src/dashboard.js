// The dashboard (issue 34 item 5): a notebook's pinned results and charts as a grid, at /d/<id>
// (DashboardPage, logged in) and at /p/<token>/dashboard (a read-only link: startLinkDashboard).
//
// Each tile shows its cell's latest stored run (GET /api/notebooks/<id>/dashboard carries them,
// console/server/api/dashboards.py) drawn with the notebook page's own components, the way the
// published page draws them (storedrun.js fillOutput, output.js CellOutput, results.js): a
// "chart" tile shows the result as the cell's saved chart (and a metrics chart), a "result" tile
// the output and the table. The page reads the dashboard again every few seconds (every second
// while a run of the notebook is going on), so a Refresh, a Run all on the notebook page or a
// job run shows up in the tiles when it ends; a tile whose cell is running keeps what it showed,
// marked as refreshing. Editors move tiles (◀ ▶) and size them (− + for width, ⇕ for height) and
// unpin them; runners get the notebook's parameters as inputs and Refresh (Run all with those
// values, through the run endpoint). Every text goes in through textContent (dom.js h).

import { h } from "./dom.js";
import { CellOutput } from "./output.js";
import { fillOutput } from "./storedrun.js";
import { allowRemoteImages } from "./markdown.js";
import {
  arrangementBody, isBusy, moveTile, refreshParams, removeTile, resizeTile, runStamp, tileKey, tileTitle,
  MAX_HEIGHT, MAX_WIDTH,
} from "./dashboardmodel.js";

const enc = encodeURIComponent;
const SLOW_MS = 3000;
const FAST_MS = 1000;

class Tile {
  constructor(view, data) {
    this.view = view;
    this.stamp = null;
    this.output = null;
    this.title = h("span.dash-tile-title", { dataset: { role: "tile-title" } });
    this.busy = h("span.dash-tile-busy", { dataset: { role: "tile-busy" }, text: "refreshing…", hidden: true });
    this.controls = h("span.dash-tile-controls", { dataset: { role: "tile-controls" } });
    this.body = h("div.dash-tile-body", { dataset: { role: "tile-body" } });
    this.el = h("section.dash-tile", { dataset: { role: "tile" } },
      h("header.dash-tile-head", {}, this.title, h("span.dash-tile-kind", { text: data.kind }), this.busy,
        h("span.spacer"), this.controls),
      this.body);
    this.update(data);
  }

  update(data) {
    this.data = data;
    const d = this.el.dataset;
    Object.assign(d, { cellId: data.cell_id, kind: data.kind, width: String(data.width), height: String(data.height),
      status: data.run ? data.run.status : "none", deleted: data.cell ? "" : "1" });
    this.el.style.gridColumn = `span ${data.width}`; // CSSOM, which the page's CSP allows
    this.el.className = `dash-tile dash-h${data.height}`;
    this.title.textContent = tileTitle(data);
    this.title.title = tileTitle(data);
    this.busy.hidden = !isBusy(data);
    this.drawControls();
    // A running cell keeps the last run it showed: only a run that ended is drawn again.
    if (isBusy(data) && this.output) return;
    const stamp = runStamp(data);
    if (stamp === this.stamp) return;
    this.stamp = stamp;
    this.drawBody();
  }

  drawBody() {
    const { data } = this;
    for (const v of this.output?.views || []) v.destroy();
    this.output = null;
    if (!data.cell) return this.body.replaceChildren(h("p.muted", { text: "This cell is no longer in the notebook." }));
    const run = data.run;
    if (!run) return this.body.replaceChildren(h("p.muted", { text: "Not run yet: Refresh, or run the notebook." }));
    if (isBusy(data)) return this.body.replaceChildren(h("p.muted", { text: "Running…" }));
    const chartView = data.cell.view && data.cell.view.chart ? data.cell.view.chart : null;
    const view = data.kind === "chart" ? { mode: "chart", chart: chartView } : { mode: "table", chart: chartView };
    // No kernel behind a tile: the result works on the stored rows, the chart as the cell saved it.
    const output = new CellOutput({ downloadUrl: () => "", results: { view: () => view } });
    fillOutput(output, data.cell_id, run, data.kind === "chart" ? "chart" : "all");
    const empty = data.kind === "chart" && !run.result && !(run.metrics || []).length && !run.error;
    this.body.replaceChildren(empty ? h("p.muted", { text: "This run made no result to chart." }) : output.el);
    if (run.finished_at) {
      this.body.append(h("p.dash-tile-when.muted", { dataset: { role: "tile-when" },
        text: `${run.status} · ${new Date(run.finished_at).toLocaleString()}` }));
    }
    this.output = output;
  }

  drawControls() {
    const { width, height } = this.data;
    const i = this.view.tiles.indexOf(this);
    const key = JSON.stringify([Boolean(this.view.data?.can_edit), width, height, i, this.view.tiles.length]);
    if (key === this.controlsKey) return; // buttons stay the same elements between reads
    this.controlsKey = key;
    if (!this.view.data?.can_edit) return this.controls.replaceChildren();
    const b = (action, text, title, disabled = false) => h("button.icon", { type: "button", text, title,
      "aria-label": title, disabled, dataset: { action }, onclick: () => this.view.arrange(this, action) });
    this.controls.replaceChildren(
      b("tile-earlier", "◀", "Move earlier", i <= 0),
      b("tile-later", "▶", "Move later", i < 0 || i >= this.view.tiles.length - 1),
      b("tile-narrower", "−", "Narrower", width <= 1),
      b("tile-wider", "+", "Wider", width >= MAX_WIDTH),
      b("tile-taller", "⇕", height >= MAX_HEIGHT ? "Back to the smallest height" : "Taller"),
      b("tile-unpin", "✕", "Unpin from the dashboard"));
  }

  destroy() {
    for (const v of this.output?.views || []) v.destroy();
    this.el.remove();
  }
}

export class DashboardView {
  // source: load() -> the dashboard; and, where the caller may, arrange(body), run(params).
  // notebookUrl: the notebook's page (none through a link).
  constructor(root, { source, notebookUrl = "" }) {
    this.root = root;
    this.source = source;
    this.data = null;
    this.tiles = [];
    this.byKey = new Map();
    this.inputs = new Map();
    this.timer = null;
    this.loading = false;
    this.fastUntilIdle = false;
    this.name = h("h1.dash-name", { dataset: { role: "dashboard-name" } });
    this.sub = h("p.muted", { dataset: { role: "dashboard-sub" } });
    this.status = h("span.dash-status", { dataset: { role: "dashboard-status" } });
    this.note = h("p.dash-note", { dataset: { role: "dashboard-note" }, hidden: true });
    this.form = h("form.dash-params", { dataset: { role: "dashboard-params" }, hidden: true });
    this.form.addEventListener("submit", (e) => {
      e.preventDefault();
      this.refresh();
    });
    this.grid = h("div.dash-grid", { dataset: { role: "dashboard-grid" } });
    this.empty = h("p.dash-empty.muted", { dataset: { role: "dashboard-empty" }, hidden: true,
      text: "Nothing is pinned yet. On the notebook page, a result's 📌 Pin puts its table or chart here." });
    const links = notebookUrl ? h("a.button", { href: notebookUrl, text: "Open the notebook", dataset: { role: "dashboard-notebook" } }) : null;
    root.replaceChildren(h("div.dashboard", { dataset: { page: "dashboard" } },
      h("header.dash-head", {}, h("div", {}, this.name, this.sub), h("span.spacer"), this.status, links),
      this.form, this.note, this.empty, this.grid));
    document.addEventListener("visibilitychange", () => {
      if (!document.hidden) this.poll(0);
    });
  }

  async start() {
    try {
      this.apply(await this.source.load());
    } catch (err) {
      this.say(err.message || String(err));
      this.root.dataset.ready = "0";
      return;
    }
    this.root.dataset.ready = "1";
    this.poll();
  }

  say(text) {
    this.note.textContent = text || "";
    this.note.hidden = !text;
  }

  apply(data) {
    const first = this.data === null;
    this.data = data;
    allowRemoteImages(Boolean(data.markdown_remote_images));
    this.name.textContent = data.name;
    document.title = `${data.name} · dashboard`;
    this.sub.textContent = `Dashboard · ${data.tiles.length} tile${data.tiles.length === 1 ? "" : "s"}` +
      (data.link ? " · read-only link" : "");
    this.status.textContent = data.running ? "A run of the notebook is going on…" : "";
    Object.assign(this.root.dataset, { revision: String(data.revision), running: data.running ? "1" : "" });
    if (first) this.drawParams();
    this.drawTiles(data.tiles);
    this.empty.hidden = data.tiles.length > 0;
  }

  drawParams() {
    const { params = [], can_run: canRun } = this.data;
    if (!canRun) return;
    const fields = params.map((p) => {
      const input = h("input", { placeholder: p.default, "aria-label": p.name, dataset: { role: "dashboard-param", param: p.name } });
      this.inputs.set(p.name, input);
      return h("label", {}, `${p.name} `, input);
    });
    this.refreshButton = h("button", { type: "submit", dataset: { role: "dashboard-refresh" },
      text: params.length ? "↻ Refresh with these values" : "↻ Refresh",
      title: "Run all of the notebook (with these values) and show the new results here" });
    this.form.replaceChildren(h("span.job-label", { text: params.length ? "Parameters" : "" }), ...fields, this.refreshButton);
    this.form.hidden = false;
  }

  drawTiles(list) {
    const seen = new Set();
    const next = [];
    for (const data of list) {
      const key = tileKey(data);
      seen.add(key);
      let tile = this.byKey.get(key);
      if (!tile) {
        tile = new Tile(this, data);
        this.byKey.set(key, tile);
      }
      next.push(tile);
    }
    for (const [key, tile] of this.byKey) {
      if (!seen.has(key)) {
        tile.destroy();
        this.byKey.delete(key);
      }
    }
    this.tiles = next;
    next.forEach((tile, i) => {
      this.grid.append(tile.el); // in the dashboard's order (append moves an element already there)
      tile.update(list[i]);
    });
  }

  // Read the dashboard again after `ms`: soon while a run goes on, every few seconds otherwise.
  poll(ms = this.data && (this.data.running || this.fastUntilIdle) ? FAST_MS : SLOW_MS) {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.reload(), ms);
  }

  async reload() {
    if (this.loading || document.hidden) return this.poll();
    this.loading = true;
    try {
      const data = await this.source.load();
      if (!data.running && this.sawRunning) this.fastUntilIdle = false;
      if (data.running) this.sawRunning = true;
      this.apply(data);
    } catch (err) {
      this.say(`Could not read the dashboard: ${err.message}`);
    } finally {
      this.loading = false;
      this.poll();
    }
  }

  async refresh() {
    if (!this.source.run) return;
    this.refreshButton.disabled = true;
    this.say("");
    const typed = Object.fromEntries([...this.inputs].map(([name, input]) => [name, input.value]));
    try {
      await this.source.run(refreshParams(this.data.params, typed));
      this.status.textContent = "Refreshing: running the notebook…";
      this.fastUntilIdle = true;
      this.sawRunning = false;
      this.poll(300);
    } catch (err) {
      this.say(`Refresh failed: ${err.message}`);
    } finally {
      this.refreshButton.disabled = false;
    }
  }

  async arrange(tile, action) {
    const i = this.tiles.indexOf(tile);
    const tiles = this.data.tiles;
    const next = {
      "tile-earlier": () => moveTile(tiles, i, -1),
      "tile-later": () => moveTile(tiles, i, 1),
      "tile-narrower": () => resizeTile(tiles, i, -1, 0),
      "tile-wider": () => resizeTile(tiles, i, 1, 0),
      "tile-taller": () => resizeTile(tiles, i, 0, tiles[i].height >= MAX_HEIGHT ? 1 - MAX_HEIGHT : 1),
      "tile-unpin": () => removeTile(tiles, i),
    }[action]?.();
    if (!next || next === tiles || !this.source.arrange) return;
    const base = this.data.revision;
    this.apply({ ...this.data, tiles: next }); // at once; the server's answer follows
    try {
      this.apply(await this.source.arrange(arrangementBody(next, base)));
      this.say("");
    } catch (err) {
      const stale = err.status === 409;
      this.say(stale ? "Someone else changed this dashboard meanwhile: here it is as they left it." : `Not saved: ${err.message}`);
      this.apply(await this.source.load().catch(() => ({ ...this.data, tiles })));
    }
  }
}

// /d/<notebook id>: the logged-in page (main.js).
export class DashboardPage {
  constructor(root, { api, notebookId }) {
    const url = `/notebooks/${enc(notebookId)}/dashboard`;
    this.root = root;
    this.view = new DashboardView(root, {
      notebookUrl: `/notebooks/${enc(notebookId)}`,
      source: {
        load: () => api.request("GET", url),
        arrange: (body) => api.request("PUT", url, body),
        run: (params) => api.request("POST", `/notebooks/${enc(notebookId)}/run`, { all: true, params }),
      },
    });
  }

  start() {
    this.root.dataset.page = "dashboard";
    return this.view.start();
  }
}

// The notebook page's link to its dashboard, with Schedule… and Jobs (jobs.js) once the page is drawn.
export function attachDashboardLink(page) {
  const add = () => {
    const tools = page.root.querySelector('[data-role="sec-tools"]');
    if (!tools || tools.querySelector('[data-role="dashboard-link"]')) return;
    tools.append(h("a.button", { href: `/d/${enc(page.id)}`, text: "Dashboard", dataset: { role: "dashboard-link" },
      title: "The results and charts pinned from this notebook, with its parameters and Refresh" }));
  };
  page.loaded.then((ok) => { if (ok) add(); });
}

// /p/<token>/dashboard: the read-only link's dashboard (publish.js); true when this is that page.
export function startLinkDashboard() {
  const root = document.getElementById("dashboard-app");
  const island = document.getElementById("dashboard-data");
  const m = location.pathname.match(/^\/p\/([^/]+)\/dashboard\/?$/);
  if (!root || !island || !m) return false;
  let first = JSON.parse(island.dataset.json || "{}");
  const load = async () => {
    if (first) {
      const data = first;
      first = null;
      return data;
    }
    const res = await fetch(`/api/links/${m[1]}/dashboard`, { headers: { Accept: "application/json" }, credentials: "omit" });
    if (!res.ok) throw new Error(res.status === 404 ? "This link was revoked." : `HTTP ${res.status}`);
    return res.json();
  };
  const view = new DashboardView(root, { source: { load } });
  window.consolePage = view;
  view.start();
  return true;
}
