// Comments on cells, without the DOM (comments.js draws them): which threads sit on which cell,
// how many are open, the anchor a selection makes, and the checks a comment's text gets before it
// is sent (the server checks it again: console/server/api/comments.py).

export const MAX_TEXT = 10000; // characters, as the server caps it
export const MAX_QUOTE = 2000;

// threads: GET /api/notebooks/<id>/comments `threads`; hasCell(id): whether the page has that cell.
// -> {byCell: Map(cell id -> threads, oldest first), orphans: threads of cells the notebook no longer has}
export function groupThreads(threads, hasCell) {
  const byCell = new Map();
  const orphans = [];
  for (const t of threads || []) {
    if (!hasCell(t.cell_id)) {
      orphans.push(t);
      continue;
    }
    if (!byCell.has(t.cell_id)) byCell.set(t.cell_id, []);
    byCell.get(t.cell_id).push(t);
  }
  return { byCell, orphans };
}

export function openCount(threads) {
  return (threads || []).filter((t) => !t.resolved).length;
}

// The accessible name of a cell's comment button.
export function toggleLabel(threads) {
  const all = (threads || []).length;
  const open = openCount(threads);
  if (!all) return "Comments: none yet (add one)";
  return `Comments: ${open} open thread${open === 1 ? "" : "s"}${all > open ? `, ${all - open} resolved` : ""}`;
}

// The anchor of a new thread from the cell editor's selection ({from, to}), or null for the whole cell.
export function anchorFrom(source, selection) {
  if (!selection || typeof source !== "string") return null;
  const start = Math.max(0, Math.min(selection.from, selection.to));
  const end = Math.min(source.length, Math.max(selection.from, selection.to));
  if (end <= start) return null;
  const quote = source.slice(start, end);
  if (!quote.trim()) return null;
  return { start, end, quote: quote.length > MAX_QUOTE ? quote.slice(0, MAX_QUOTE) : quote };
}

// Why `text` cannot be sent ("" when it can).
export function textProblem(text) {
  if (typeof text !== "string" || !text.trim()) return "Write something first.";
  if (text.length > MAX_TEXT) return `A comment is at most ${MAX_TEXT.toLocaleString("en")} characters (this one has ${text.length.toLocaleString("en")}).`;
  return "";
}

// The POST body of a new thread on a cell, or of a reply in a thread.
export function newThreadBody(cellId, text, anchor) {
  return anchor ? { cell_id: cellId, text, anchor } : { cell_id: cellId, text };
}

export function replyBody(threadId, text) {
  return { thread_id: threadId, text };
}

// "just now", "5 min ago", "3 h ago", else the date.
export function when(iso, now = Date.now()) {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return "";
  const s = Math.max(0, (now - t) / 1000);
  if (s < 60) return "just now";
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return new Date(t).toISOString().slice(0, 10);
}

// A quote shortened for its line above a thread.
export function shortQuote(quote, limit = 120) {
  const one = String(quote || "").replace(/\s+/g, " ").trim();
  return one.length > limit ? `${one.slice(0, limit - 1)}…` : one;
}
