// The chart view of a result table: type, x, y columns with their aggregate, and a group column,
// drawn with uPlot (the library of the metrics chart) for bar, line, area and scatter, and on a
// plain canvas for pie, which uPlot does not draw. The choices come in and go out as the cell's
// saved view ({type, x, y, agg, group}); chartdata.js does the grouping.

import uPlot from "uplot";
import { h } from "./dom.js";
import { AGGREGATES, CHART_TYPES, chartData, kindOf } from "./chartdata.js";

const PALETTE = ["#2f7ed8", "#e4572e", "#17a398", "#f3a712", "#8e44ad", "#6c8ead", "#c0392b", "#27ae60",
  "#d35400", "#2c3e50"];
const HEIGHT = 260;
const MAX_PIES = 6; // small multiples for a pie of several series; more are not readable

function cssVar(name, fallback) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;
}

// Bars side by side: series k of n takes the k-th slot of each x position.
function barPaths(k, n) {
  return (u, sidx, i0, i1) => {
    const xs = u.data[0];
    const ys = u.data[sidx];
    const path = new Path2D();
    const step = xs.length > 1 ? Math.abs(u.valToPos(xs[1], "x", true) - u.valToPos(xs[0], "x", true)) : u.bbox.width / 2;
    const width = Math.max(1, (step * 0.8) / n);
    const zero = u.valToPos(0, "y", true);
    for (let i = i0; i <= i1; i++) {
      if (ys[i] === null || ys[i] === undefined) continue;
      const x = u.valToPos(xs[i], "x", true) - (step * 0.8) / 2 + k * width;
      const y = u.valToPos(ys[i], "y", true);
      path.rect(x, Math.min(y, zero), width, Math.abs(zero - y));
    }
    return { stroke: path, fill: path };
  };
}

export class ResultChart {
  // chart: the fitted choices; onChange(chart) when the user changes one.
  constructor(columns, chart, onChange) {
    this.columns = columns;
    this.chart = chart;
    this.onChange = onChange;
    this.rows = [];
    this.plot = null;
    const opt = (value, text = value) => h("option", { value, text });
    const cols = columns.map((c) => opt(c.name));
    this.type = h("select", { dataset: { role: "chart-type" }, title: "Chart type" }, CHART_TYPES.map((t) => opt(t)));
    this.x = h("select", { dataset: { role: "chart-x" }, title: "X axis column" }, cols);
    this.agg = h("select", { dataset: { role: "chart-agg" }, title: "How y values that share an x are combined" },
      AGGREGATES.map((a) => opt(a, a === "none" ? "no aggregate" : a)));
    this.group = h("select", { dataset: { role: "chart-group" }, title: "One series per value of this column" },
      opt("", "no group"), columns.map((c) => opt(c.name)));
    this.ys = h("span.chart-ys", { dataset: { role: "chart-y" } }, columns.map((c) => h("label", {},
      h("input", { type: "checkbox", value: c.name, disabled: kindOf(c.type) === "other" }), ` ${c.name}`)));
    for (const el of [this.type, this.x, this.agg, this.group, this.ys]) el.addEventListener("change", () => this.read());
    this.note = h("span.chart-note", { dataset: { role: "chart-note" } });
    this.plotBox = h("div.result-plot", { dataset: { role: "result-plot" } });
    this.el = h("div.result-chart", { dataset: { role: "result-chart" } },
      h("div.chart-controls", {}, h("label", {}, "type ", this.type), h("label", {}, "x ", this.x),
        h("span", {}, "y ", this.ys), h("label", {}, this.agg), h("label", {}, "group ", this.group)),
      this.note, this.plotBox);
    this.show();
    this.resize = new ResizeObserver(() => this.plot && this.plot.setSize(this.size()));
    this.resize.observe(this.el);
  }

  show() {
    const c = this.chart;
    this.type.value = c.type;
    this.x.value = c.x || "";
    this.agg.value = c.agg;
    this.group.value = c.group || "";
    for (const box of this.ys.querySelectorAll("input")) box.checked = c.y.includes(box.value);
    this.el.dataset.type = c.type;
  }

  read() {
    const y = [...this.ys.querySelectorAll("input:checked")].map((b) => b.value).filter((n) => n !== this.x.value);
    this.chart = { type: this.type.value, x: this.x.value || null, y, agg: this.agg.value, group: this.group.value || null };
    this.show();
    this.draw();
    this.onChange(this.chart);
  }

  setRows(rows, note = "") {
    this.rows = rows;
    this.note.textContent = note;
    this.draw();
  }

  size() {
    return { width: Math.max(280, this.plotBox.clientWidth || this.el.clientWidth || 600), height: HEIGHT };
  }

  draw() {
    this.plot?.destroy();
    this.plot = null;
    this.plotBox.replaceChildren();
    const data = chartData(this.columns, this.rows, this.chart);
    this.el.dataset.points = String(data.xs.length);
    this.el.dataset.series = data.series.map((s) => s.label).join("|");
    if (!data.xs.length || !data.series.length) {
      this.plotBox.append(h("div.chart-empty", { text: "Nothing to draw: pick an x column and a numeric y column." }));
      return;
    }
    if (this.chart.type === "pie") {
      this.drawPie(data);
      return;
    }
    const ink = cssVar("--muted", "#777");
    const grid = { stroke: cssVar("--grid", "#ddd"), width: 1 };
    const text = data.xKind === "text";
    const type = this.chart.type;
    const n = data.series.length;
    const xAxis = { stroke: ink, grid, label: this.chart.x };
    if (text || (type === "bar" && data.xKind === "number")) {
      // Ticks at the bars (or categories) themselves, labelled with their x values.
      const every = Math.max(1, Math.ceil(data.xs.length / 30));
      xAxis.splits = () => data.xs.filter((x, i) => i % every === 0);
      xAxis.values = (u, splits) => splits.map((x) => data.labels[data.xs.indexOf(x)] ?? "");
    }
    const opts = {
      ...this.size(),
      scales: {
        x: { time: data.xKind === "time", ...(text || type === "bar" ? { range: (u, lo, hi) => [lo - 0.6 * this.step(data), hi + 0.6 * this.step(data)] } : {}) },
        y: { range: (u, lo, hi) => [Math.min(0, lo), hi === lo ? hi + 1 : hi] },
      },
      axes: [xAxis, { stroke: ink, grid }],
      series: [
        { label: this.chart.x, value: (u, v, si, i) => (i === null || i === undefined ? "" : data.labels[i]) },
        ...data.series.map((s, k) => {
          const color = PALETTE[k % PALETTE.length];
          const base = { label: s.label, stroke: color, width: 1.5, spanGaps: true };
          if (type === "bar") return { ...base, fill: color, paths: barPaths(k, n), points: { show: false } };
          if (type === "scatter") return { ...base, paths: () => null, points: { show: true, size: 6, fill: color } };
          if (type === "area") return { ...base, fill: `${color}55`, points: { show: false } };
          return { ...base, points: { show: data.xs.length < 60, size: 4 } };
        }),
      ],
      legend: { live: false },
      cursor: { drag: { x: false, y: false } },
    };
    this.plot = new uPlot(opts, [data.xs, ...data.series.map((s) => s.values)], this.plotBox);
  }

  step(data) {
    return data.xs.length > 1 ? Math.abs(data.xs[1] - data.xs[0]) || 1 : 1;
  }

  // Pie: one per series (a y column, or a group's values), as small multiples with a note, so a
  // grouped pie never shows one group's slices as if they were the whole; slices beyond the ten
  // largest are summed as "other".
  drawPie(data) {
    const shown = data.series.slice(0, MAX_PIES);
    const many = shown.length > 1;
    const side = many ? Math.min(220, Math.max(160, Math.floor(this.size().width / Math.min(shown.length, 3)) - 20)) : Math.min(this.size().width, 360);
    const pies = shown.map((series, k) => this.pie(data, series, side, many ? k : -1));
    const extra = data.series.length - shown.length;
    const note = many
      ? `${data.series.length} series: one pie each${extra > 0 ? ` (the first ${MAX_PIES} shown; ${extra} more in the table)` : ""}.`
      : "";
    if (note) this.plotBox.append(h("div.chart-note", { dataset: { role: "pie-note" }, text: note }));
    this.plotBox.append(h("div.pies", {}, pies));
  }

  pie(data, series, side, index) {
    const values = series.values.map((v, i) => ({ label: data.labels[i], v: Math.max(0, v || 0) }))
      .sort((a, b) => b.v - a.v);
    const top = values.slice(0, 10);
    const rest = values.slice(10).reduce((s, x) => s + x.v, 0);
    if (rest > 0) top.push({ label: "other", v: rest });
    const sum = top.reduce((s, x) => s + x.v, 0);
    const total = sum || 1;
    const height = index < 0 ? HEIGHT : side;
    const canvas = h("canvas", { width: side * devicePixelRatio, height: height * devicePixelRatio });
    canvas.style.width = `${side}px`;
    canvas.style.height = `${height}px`;
    const ctx = canvas.getContext("2d");
    ctx.scale(devicePixelRatio, devicePixelRatio);
    const r = Math.min(side, height) / 2 - 10;
    const cx = side / 2;
    let angle = -Math.PI / 2;
    top.forEach((slice, k) => {
      const sweep = (slice.v / total) * Math.PI * 2;
      ctx.beginPath();
      ctx.moveTo(cx, height / 2);
      ctx.arc(cx, height / 2, r, angle, angle + sweep);
      ctx.closePath();
      ctx.fillStyle = PALETTE[k % PALETTE.length];
      ctx.fill();
      angle += sweep;
    });
    const swatch = (k) => {
      const el = h("span.swatch");
      el.style.background = PALETTE[k % PALETTE.length]; // CSSOM, which the page's CSP allows
      return el;
    };
    const legend = h("ul.pie-legend", {}, top.map((slice, k) => h("li", {}, swatch(k),
      `${slice.label}: ${slice.v.toLocaleString("en-US")} (${((slice.v / total) * 100).toFixed(1)}%)`)));
    const title = index < 0 ? null : h("div.pie-title", { text: `${series.label} (total ${sum.toLocaleString("en-US")})` });
    return h("div.pie", { dataset: { role: "pie", series: series.label } }, h("div.pie-plot", {}, title, canvas), legend);
  }

  destroy() {
    this.resize.disconnect();
    this.plot?.destroy();
  }
}
