// Metrics points of one run turned into the aligned arrays uPlot draws. Pure (no DOM).
//
// A point is {values: {loss, accuracy, ...}, source, step, seq}. One line is drawn per
// (metric, source), so each Ray worker's loss is its own curve. Points without a step are placed
// by arrival order within their source, so custom metrics logged without a step still plot.

export class MetricsSeries {
  constructor() {
    this.points = new Map(); // key "metric\u0000source" -> Map(step -> value)
    this.steps = new Set();
    this.counters = new Map(); // source -> next implicit step
    this.seen = new Set(); // "run:seq" already added (replay after reconnect repeats some)
  }

  get size() {
    return this.points.size;
  }

  add(point) {
    if (point.seq) {
      const id = `${point.run_id || ""}:${point.seq}`;
      if (this.seen.has(id)) return false;
      this.seen.add(id);
    }
    const source = point.source || "driver";
    let step = point.step;
    if (step === null || step === undefined) {
      step = this.counters.get(source) || 0;
      this.counters.set(source, step + 1);
    }
    let added = false;
    for (const [metric, value] of Object.entries(point.values || {})) {
      if (typeof value !== "number" || !Number.isFinite(value)) continue;
      const key = `${metric}\u0000${source}`;
      if (!this.points.has(key)) this.points.set(key, new Map());
      this.points.get(key).set(step, value);
      this.steps.add(step);
      added = true;
    }
    return added;
  }

  // [{metric, source, label}] in a stable order: by metric, then source.
  lines() {
    return [...this.points.keys()]
      .sort()
      .map((key) => {
        const [metric, source] = key.split("\u0000");
        return { key, metric, source, label: `${metric} · ${source}` };
      });
  }

  // uPlot's data: [xs, ys1, ys2, ...] with null where a line has no point at that step.
  data() {
    const xs = [...this.steps].sort((a, b) => a - b);
    const out = [xs];
    for (const { key } of this.lines()) {
      const byStep = this.points.get(key);
      out.push(xs.map((x) => (byStep.has(x) ? byStep.get(x) : null)));
    }
    return out;
  }
}

// Rates and accuracies live in [0, 1] and losses do not: they get separate y axes.
export function scaleFor(metric) {
  return /acc|auc|precision|recall|f1/i.test(metric) ? "ratio" : "value";
}
