// Result charts without the DOM: column kinds, default choices, and the grouped series to draw.
// Values arrive as the kernel sends them (console/kernel/results.py json_safe): numbers, text,
// or {"$": kind, ...} markers for exact big numbers, NaN and the like.

export const CHART_TYPES = ["bar", "line", "area", "scatter", "pie"];
export const AGGREGATES = ["sum", "avg", "count", "min", "max", "none"];
const MAX_GROUPS = 20; // more groups than this are not readable as separate series

// type: Spark's name (console/coltypes.py), or Arrow's in runs stored before types were.
export function kindOf(type) {
  const t = String(type || "").toLowerCase();
  if (/^(?:(?:u?int\d*|integer|tinyint|smallint|bigint|long|short|byte|float|double|halffloat)\b|decimal)/.test(t)) return "number";
  if (/^(date|timestamp|time)/.test(t)) return "time";
  if (/^(string|large_string|bool)/.test(t)) return "text";
  return "other";
}

// A value as a number for plotting, or null (text that is not a number, nulls, lists).
export function numberOf(v) {
  if (typeof v === "number") return Number.isFinite(v) ? v : null;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (v && typeof v === "object" && typeof v.text === "string") {
    const n = Number(v.text);
    return Number.isFinite(n) ? n : null;
  }
  if (typeof v === "string" && v.trim() !== "") {
    const n = Number(v);
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

// Seconds since the epoch of an ISO date or timestamp (what uPlot's time axis reads).
export function timeOf(v) {
  if (typeof v !== "string") return null;
  const ms = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(v) || v.length <= 10 ? v : `${v}Z`);
  return Number.isFinite(ms) ? ms / 1000 : null;
}

export function keyText(v) {
  if (v === null || v === undefined) return "null";
  if (typeof v === "object") return v.text ?? JSON.stringify(v);
  return String(v);
}

// First look: a date/time or text column across, the numbers up; a line over time, bars otherwise.
export function defaultChart(columns) {
  const kinds = columns.map((c) => kindOf(c.type));
  let xi = kinds.indexOf("time");
  if (xi < 0) xi = kinds.indexOf("text");
  if (xi < 0) xi = 0;
  const ys = columns.filter((c, i) => i !== xi && kinds[i] === "number").slice(0, 3).map((c) => c.name);
  const type = kinds[xi] === "time" || kinds[xi] === "number" ? "line" : "bar";
  return { type, x: columns[xi] ? columns[xi].name : null, y: ys, agg: ys.length ? "sum" : "count", group: null };
}

// A saved chart against this result: choices naming columns it no longer has fall back to defaults.
export function fitChart(chart, columns) {
  const names = new Set(columns.map((c) => c.name));
  const base = defaultChart(columns);
  if (!chart || !CHART_TYPES.includes(chart.type)) return base;
  const x = names.has(chart.x) ? chart.x : base.x;
  const y = (chart.y || []).filter((n) => names.has(n) && n !== x);
  return {
    type: chart.type,
    x,
    y: y.length || chart.agg === "count" ? y : base.y,
    agg: AGGREGATES.includes(chart.agg) ? chart.agg : base.agg,
    group: names.has(chart.group) && chart.group !== x ? chart.group : null,
  };
}

function reduce(acc, agg) {
  if (!acc || acc.n === 0) return agg === "count" ? 0 : null;
  switch (agg) {
    case "count": return acc.n;
    case "avg": return acc.sum / acc.n;
    case "min": return acc.min;
    case "max": return acc.max;
    default: return acc.sum;
  }
}

// {xKind, xs (plot positions), labels (axis text), series: [{label, values}]}: one point per
// distinct x (aggregated), one series per y column and group value. agg "none" plots rows as they are.
export function chartData(columns, rows, chart) {
  const idx = (name) => columns.findIndex((c) => c.name === name);
  const xi = idx(chart.x);
  if (xi < 0) return { xKind: "text", xs: [], labels: [], series: [] };
  const xKind = kindOf(columns[xi].type);
  const gi = chart.group ? idx(chart.group) : -1;
  const ys = chart.y.map(idx).filter((i) => i >= 0);
  const yCols = ys.length ? ys : [-1]; // no y: count rows
  const agg = ys.length ? chart.agg : "count";
  const groups = [];
  const groupOf = new Map();
  const xKeys = [];
  const xIndex = new Map();
  const cells = new Map(); // `${x}\u0000${g}\u0000${y}` -> accumulator
  rows.forEach((row, r) => {
    const g = gi >= 0 ? keyText(row[gi]) : "";
    if (!groupOf.has(g)) {
      if (groups.length >= MAX_GROUPS) return;
      groupOf.set(g, groups.length);
      groups.push(g);
    }
    const raw = row[xi];
    const xk = agg === "none" ? `${r}` : keyText(raw);
    if (!xIndex.has(xk)) {
      xIndex.set(xk, xKeys.length);
      xKeys.push({ key: xk, raw });
    }
    for (const yc of yCols) {
      const v = yc < 0 ? 1 : numberOf(row[yc]);
      const id = `${xIndex.get(xk)}\u0000${groupOf.get(g)}\u0000${yc}`;
      let acc = cells.get(id);
      if (!acc) cells.set(id, (acc = { n: 0, sum: 0, min: Infinity, max: -Infinity }));
      if (v === null) continue;
      acc.n += 1;
      acc.sum += v;
      acc.min = Math.min(acc.min, v);
      acc.max = Math.max(acc.max, v);
    }
  });
  const position = (raw) => (xKind === "time" ? timeOf(raw) : xKind === "number" ? numberOf(raw) : null);
  let order = xKeys.map((k, i) => i);
  const numericX = (xKind === "time" || xKind === "number") && xKeys.every((k) => position(k.raw) !== null);
  if (numericX) order.sort((a, b) => position(xKeys[a].raw) - position(xKeys[b].raw));
  const series = [];
  groups.forEach((g, gIdx) => {
    for (const yc of yCols) {
      const yName = yc < 0 ? "count" : columns[yc].name;
      const label = gi < 0 ? yName : yCols.length > 1 ? `${g} · ${yName}` : g;
      const values = order.map((xIdx) => {
        const acc = cells.get(`${xIdx}\u0000${gIdx}\u0000${yc}`);
        return acc ? reduce(acc, agg === "none" ? "sum" : agg) : null;
      });
      series.push({ label, values });
    }
  });
  return {
    xKind: numericX ? xKind : "text",
    xs: order.map((xIdx, i) => (numericX ? position(xKeys[xIdx].raw) : i)),
    labels: order.map((xIdx) => keyText(xKeys[xIdx].raw)),
    series,
  };
}
