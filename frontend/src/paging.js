// Paging arithmetic for result tables and the log's "show earlier lines". Pure (no DOM).

export function pageOf(rows, page, pageSize) {
  const pages = Math.max(1, Math.ceil(rows.length / pageSize));
  const current = Math.min(Math.max(0, page), pages - 1);
  const start = current * pageSize;
  return {
    page: current,
    pages,
    start,
    end: Math.min(rows.length, start + pageSize),
    rows: rows.slice(start, start + pageSize),
  };
}

// "rows 1–20 of 100 shown (12,345 in the table)": what the pager says under a table.
export function describeRows(start, end, received, total) {
  const shown = received === 0 ? "no rows" : `rows ${fmt(start + 1)}–${fmt(end)} of ${fmt(received)}`;
  if (total > received) return `${shown} received · ${fmt(total)} rows in the table`;
  return `${shown} · ${fmt(total)} rows`;
}

export function fmt(n) {
  return Number(n).toLocaleString("en-US");
}

export function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${Math.round(n / 1024)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

export function formatElapsed(ms) {
  if (ms === null || ms === undefined) return "";
  if (ms < 1000) return `${ms} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  return `${m} min ${Math.round(s - m * 60)} s`;
}

// A cell value as table text: null visible, the kernel's markers ({"$": kind}, see
// console/kernel/results.py json_safe) as what they stand for, nested values as JSON, long text cut.
export function cellText(value, max = 200) {
  if (value === null || value === undefined) return "null";
  let text = typeof value === "object" ? valueText(value) : String(value);
  if (text.length > max) text = `${text.slice(0, max)}…`;
  return text;
}

function hexOfBase64(b64) {
  try {
    return Array.from(atob(b64), (ch) => ch.charCodeAt(0).toString(16).padStart(2, "0")).join("");
  } catch {
    return "";
  }
}

export function valueText(v) {
  if (v === null || v === undefined) return "null";
  if (Array.isArray(v)) return `[${v.map(valueText).join(",")}]`;
  if (typeof v !== "object") return typeof v === "string" ? JSON.stringify(v) : String(v);
  switch (v.$) {
    case "int":
    case "decimal":
    case "float":
      return v.text;
    case "binary": {
      const hex = v.base64 !== undefined ? hexOfBase64(v.base64) : v.hex;
      const whole = v.base64 !== undefined;
      return `0x${hex}${whole ? "" : "…"} (${fmt(v.size)} byte${v.size === 1 ? "" : "s"})`;
    }
    case "list":
      return `[${v.items.map(valueText).join(",")},… ${fmt(v.more)} more]`;
    case "map":
      return valueText(v.value);
    default:
      return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}:${valueText(x)}`).join(",")}}`;
  }
}

// The class a table cell gets for its value: null, num (right-aligned) or "" for text.
export function cellClass(v) {
  if (v === null || v === undefined) return "null";
  if (typeof v === "number" || (v && typeof v === "object" && ["int", "decimal", "float"].includes(v.$))) return "num";
  if (v && typeof v === "object" && v.$ === "binary") return "binary";
  return "";
}
