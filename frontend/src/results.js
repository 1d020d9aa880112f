// One result of a cell: the table (sorted and paged through the WHOLE result, which the user's
// kernel keeps), a chart view, and CSV/Parquet downloads. The first rows come with the result
// event; any other range, or any sort, is asked of GET .../cells/<cell>/result. Without a kernel
// that keeps the result (a reader, a restarted kernel) it works on the rows it received and says so.

import { h } from "./dom.js";
import { ResultGrid } from "./table.js";
import { ResultChart } from "./resultchart.js";
import { fitChart, numberOf } from "./chartdata.js";
import { describeRows, fmt, valueText } from "./paging.js";

export const PAGE_SIZE = 20;
const CHART_ROWS = 10000; // the most rows a chart asks for (the server's page limit)

function compare(a, b) {
  if (a === null || a === undefined) return b === null || b === undefined ? 0 : 1; // nulls last
  if (b === null || b === undefined) return -1;
  const x = numberOf(a);
  const y = numberOf(b);
  if (x !== null && y !== null && typeof a !== "string") return x - y;
  const s = typeof a === "object" ? valueText(a) : String(a);
  const t = typeof b === "object" ? valueText(b) : String(b);
  return s < t ? -1 : s > t ? 1 : 0;
}

export class ResultView {
  // ctx: fetchPage(offset, limit, sort) and download(format, sort) (both Promises; absent on pages
  // without a kernel), view (the cell's saved view) and onView(view) to save a change (or null).
  constructor(result, ctx = {}) {
    this.ctx = ctx;
    this.name = result.name || "";
    this.columns = result.columns || [];
    this.received = result.rows || [];
    this.total = result.total_rows ?? this.received.length;
    this.local = this.total <= this.received.length || !ctx.fetchPage; // everything is here, or nothing more can come
    this.sort = [];
    this.offset = 0;
    this.loading = 0;
    this.view = { mode: ctx.view?.mode === "chart" ? "chart" : "table", chart: ctx.view?.chart || null };
    this.chart = null;

    this.grid = new ResultGrid(this.columns, (col) => this.toggleSort(col));
    const button = (action, text, title) => h("button", { type: "button", dataset: { action }, text, title });
    this.first = button("page-first", "«", "First rows");
    this.prev = button("page-prev", "‹ prev", "Previous rows");
    this.next = button("page-next", "next ›", "Next rows");
    this.last = button("page-last", "»", "Last rows");
    this.rowInput = h("input.row-input", { type: "number", min: 1, dataset: { role: "row-input" }, title: "Go to row", "aria-label": "Go to row" });
    this.info = h("span.table-info", { dataset: { role: "table-info" } });
    this.first.addEventListener("click", () => this.load(0));
    this.prev.addEventListener("click", () => this.load(this.offset - PAGE_SIZE));
    this.next.addEventListener("click", () => this.load(this.offset + PAGE_SIZE));
    this.last.addEventListener("click", () => this.load(Math.floor((this.rowCount() - 1) / PAGE_SIZE) * PAGE_SIZE));
    this.rowInput.addEventListener("change", () => this.load(Number(this.rowInput.value) - 1));
    this.pager = h("div.pager", {}, this.first, this.prev, h("span", { text: "row" }), this.rowInput, this.next, this.last, this.info);
    this.note = h("div.result-note", { dataset: { role: "result-note" }, hidden: true });

    this.tableButton = button("view-table", "Table", "Show the result as a table");
    this.chartButton = button("view-chart", "Chart", "Show the result as a chart");
    this.tableButton.addEventListener("click", () => this.setMode("table", true));
    this.chartButton.addEventListener("click", () => this.setMode("chart", true));
    const downloads = ctx.download ? ["csv", "parquet"].map((f) => {
      const b = button(`download-${f}`, `⤓ ${f.toUpperCase()}`, `Download the whole result as ${f.toUpperCase()}`);
      b.addEventListener("click", () => this.download(f, b));
      return b;
    }) : [];
    // 📌 Pin: this result (as the table, or as the chart when it shows one) to the notebook's
    // dashboard (dashboard.js); only where the page may (an editor's notebook page: ctx.pin).
    this.pinButton = ctx.pin ? button("pin", "📌 Pin", "Pin this result (or its chart) to the notebook's dashboard") : null;
    this.pinButton?.addEventListener("click", () => this.pin());
    this.tableBox = h("div.result-table", {}, this.grid.el, this.pager);
    this.chartBox = h("div.result-chart-slot");
    this.el = h("div.result", { dataset: { role: "result", table: this.name, totalRows: String(this.total) } },
      h("div.result-title", {},
        h("span", { text: this.name ? `table ${this.name}` : "result" }),
        h("span.result-modes", {}, this.tableButton, this.chartButton),
        h("span.spacer"), this.pinButton, ...downloads),
      this.note, this.tableBox, this.chartBox);
    this.load(0);
    this.setMode(this.view.mode, false);
  }

  rowCount() {
    return this.local ? Math.min(this.total, this.received.length) : this.total;
  }

  setNote(text) {
    this.note.textContent = text;
    this.note.hidden = !text;
  }

  // Only the received rows from here on: the kernel cannot answer (gone, restarted, a reader's page).
  goLocal(err) {
    if (this.local) return;
    this.local = true;
    this.setNote(`${err.message} Sorting, paging and charts use the ${fmt(this.received.length)} rows received of ${fmt(this.total)}.`);
  }

  localRows() {
    if (!this.sort.length) return this.received;
    const key = JSON.stringify(this.sort);
    if (this.sortedKey !== key) {
      const [col, dir] = this.sort[0];
      const i = this.columns.findIndex((c) => c.name === col);
      const sign = dir === "desc" ? -1 : 1;
      this.sorted = this.received.map((row, n) => [row, n])
        .sort((a, b) => sign * compare(a[0][i], b[0][i]) || a[1] - b[1]).map((x) => x[0]);
      this.sortedKey = key;
    }
    return this.sorted;
  }

  toggleSort(col) {
    const [cur, dir] = this.sort[0] || [];
    this.sort = cur !== col ? [[col, "asc"]] : dir === "asc" ? [[col, "desc"]] : [];
    this.load(0);
  }

  async load(offset) {
    const count = this.rowCount();
    offset = Math.max(0, Math.min(Number.isFinite(offset) ? Math.floor(offset) : 0, Math.max(0, count - 1)));
    const token = ++this.loading;
    let rows = null;
    const here = this.local || (!this.sort.length && offset + PAGE_SIZE <= this.received.length);
    if (!here) {
      this.el.dataset.loading = "1";
      try {
        const page = await this.ctx.fetchPage(offset, PAGE_SIZE, this.sort);
        if (token !== this.loading) return;
        rows = page.rows;
        offset = page.offset;
        this.total = page.total_rows;
      } catch (err) {
        if (token !== this.loading) return;
        this.goLocal(err);
      } finally {
        if (token === this.loading) delete this.el.dataset.loading;
      }
    }
    if (rows === null) {
      offset = Math.min(offset, Math.max(0, this.rowCount() - 1));
      rows = this.localRows().slice(offset, offset + PAGE_SIZE);
    }
    this.offset = offset;
    this.grid.draw(rows, offset);
    this.grid.showSort(this.sort);
    this.showPager(rows.length);
  }

  showPager(shown) {
    const count = this.rowCount();
    const end = this.offset + shown;
    this.info.textContent = describeRows(this.offset, end, count, this.total);
    this.rowInput.value = String(this.offset + 1);
    this.rowInput.max = String(Math.max(1, count));
    const many = count > PAGE_SIZE;
    for (const el of [this.first, this.prev, this.next, this.last, this.rowInput]) el.hidden = !many;
    this.first.disabled = this.prev.disabled = this.offset === 0;
    this.next.disabled = this.last.disabled = end >= count;
    this.el.dataset.offset = String(this.offset);
    this.el.dataset.sort = this.sort.length ? `${this.sort[0][0]} ${this.sort[0][1]}` : "";
  }

  setMode(mode, save) {
    this.view = { ...this.view, mode };
    this.el.dataset.mode = mode;
    this.tableButton.classList.toggle("on", mode === "table");
    this.chartButton.classList.toggle("on", mode === "chart");
    this.tableBox.hidden = mode !== "table";
    this.chartBox.hidden = mode !== "chart";
    if (mode === "chart" && !this.chart) {
      this.view.chart = fitChart(this.view.chart, this.columns);
      this.chart = new ResultChart(this.columns, this.view.chart, (chart) => {
        this.view = { ...this.view, chart };
        this.save();
      });
      this.chartBox.append(this.chart.el);
      this.chartRows();
    }
    if (save) this.save();
  }

  save() {
    this.ctx.onView?.({ mode: this.view.mode, chart: this.view.chart });
  }

  // A chart is of the whole result where the kernel can send it (up to CHART_ROWS rows).
  async chartRows() {
    if (this.local) {
      const partial = this.total > this.received.length;
      this.chart.setRows(this.received, partial ? `Chart of the first ${fmt(this.received.length)} rows of ${fmt(this.total)}.` : "");
      return;
    }
    try {
      const page = await this.ctx.fetchPage(0, CHART_ROWS, []);
      const note = page.total_rows > page.rows.length ? `Chart of the first ${fmt(page.rows.length)} rows of ${fmt(page.total_rows)}.` : "";
      this.chart.setRows(page.rows, note);
    } catch (err) {
      this.goLocal(err);
      this.chartRows();
    }
  }

  async pin() {
    const kind = this.view.mode === "chart" ? "chart" : "result";
    this.pinButton.disabled = true;
    try {
      const dashboard = await this.ctx.pin(kind);
      this.pinButton.textContent = "📌 Pinned";
      this.pinButton.dataset.pinned = "1";
      this.pinButton.title = `On the dashboard as a ${kind === "chart" ? "chart" : "table"}: ${dashboard?.url || ""}`;
    } catch (err) {
      this.setNote(`Pin failed: ${err.message}`);
    } finally {
      this.pinButton.disabled = false;
    }
  }

  async download(format, button) {
    button.disabled = true;
    try {
      const { blob, name } = await this.ctx.download(format, this.sort);
      const url = URL.createObjectURL(blob);
      const a = h("a", { href: url, download: name || `${this.name || "result"}.${format}` });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60000);
    } catch (err) {
      this.setNote(`Download failed: ${err.message}`);
    } finally {
      button.disabled = false;
    }
  }

  destroy() {
    this.chart?.destroy();
  }
}
