// The live metrics chart of a cell run (uPlot): one line per metric per worker, losses on the
// left axis and accuracies on the right. Points arrive live or from the stored run after a reload;
// either way they go through MetricsSeries, so the picture is the same.

import uPlot from "uplot";
import { h } from "./dom.js";
import { MetricsSeries, scaleFor } from "./series.js";

// Canvas strokes cannot read CSS variables, so theme colours are looked up when a plot is built.
function cssVar(name, fallback) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;
}

const PALETTE = ["#2f7ed8", "#e4572e", "#17a398", "#f3a712", "#8e44ad", "#6c8ead", "#c0392b", "#27ae60"];

export class MetricsChart {
  constructor() {
    this.series = new MetricsSeries();
    this.plot = null;
    this.shape = ""; // the line keys the current plot was built for
    this.frame = 0;
    this.plotBox = h("div.chart-plot");
    this.el = h("div.chart", { dataset: { role: "chart" }, hidden: true },
      h("div.chart-title", { text: "metrics" }), this.plotBox);
    this.resize = new ResizeObserver(() => this.plot && this.plot.setSize(this.size()));
    this.resize.observe(this.el);
  }

  add(point) {
    if (this.series.add(point)) this.schedule();
  }

  schedule() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.draw();
    });
  }

  size() {
    return { width: Math.max(280, this.plotBox.clientWidth || this.el.clientWidth || 600), height: 220 };
  }

  draw() {
    if (!this.series.size) return;
    this.el.hidden = false;
    const lines = this.series.lines();
    const shape = lines.map((l) => l.key).join("|");
    const data = this.series.data();
    if (this.plot && shape === this.shape) {
      this.plot.setData(data);
      return;
    }
    this.plot?.destroy();
    this.shape = shape;
    const hasRatio = lines.some((l) => scaleFor(l.metric) === "ratio");
    const hasValue = lines.some((l) => scaleFor(l.metric) === "value");
    const ink = cssVar("--muted", "#777");
    const grid = { stroke: cssVar("--grid", "#ddd"), width: 1 };
    // Steps are epochs: ticks only at whole numbers (uPlot would put 0.5 between 0 and 1).
    const whole = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000];
    const axes = [{
      label: "epoch", stroke: ink, grid, incrs: whole,
      values: (u, splits) => splits.map((v) => (Number.isInteger(v) ? String(v) : "")),
    }];
    if (hasValue) axes.push({ scale: "value", label: "loss / value", stroke: ink, grid });
    if (hasRatio) axes.push({ scale: "ratio", label: "accuracy", side: 1, stroke: ink, grid: { ...grid, show: !hasValue } });
    const opts = {
      ...this.size(),
      scales: { x: { time: false }, ratio: { range: [0, 1] } },
      axes,
      series: [
        { label: "epoch" },
        ...lines.map((l, i) => ({
          label: l.label,
          scale: scaleFor(l.metric),
          stroke: PALETTE[i % PALETTE.length],
          dash: scaleFor(l.metric) === "ratio" ? [6, 3] : undefined,
          width: 1.5,
          spanGaps: true,
          points: { size: 4 },
        })),
      ],
      legend: { live: false },
    };
    this.plot = new uPlot(opts, data, this.plotBox);
  }

  reset() {
    this.plot?.destroy();
    this.plot = null;
    this.shape = "";
    this.series = new MetricsSeries();
    this.el.hidden = true;
  }
}
