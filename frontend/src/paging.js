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
  const shown = received === 0 ? "no rows" : `rows ${start + 1}–${end} of ${fmt(received)}`;
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

// A cell value as table text: null visible, objects as JSON, long text cut.
export function cellText(value, max = 200) {
  if (value === null || value === undefined) return "null";
  let text = typeof value === "object" ? JSON.stringify(value) : String(value);
  if (text.length > max) text = `${text.slice(0, max)}…`;
  return text;
}
