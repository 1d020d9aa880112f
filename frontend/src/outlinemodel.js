// The notebook's outline as pure functions (tested under node): the headings of Markdown cells,
// the titles of code cells, and which cells a folded heading hides. outline.js draws them.

const HEADING = /^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/;
const FENCE = /^ {0,3}(```|~~~)/;
const ANNOTATION = /^(--%|#%)/; // a Python cell's header lines (`--%python`): not its title

// ATX headings of a Markdown source, outside fenced code: [{level, text}].
export function headingsOf(source) {
  const out = [];
  let fence = null;
  for (const line of String(source || "").split("\n")) {
    const f = line.match(FENCE);
    if (f) {
      if (!fence) fence = f[1];
      else if (f[1] === fence) fence = null;
      continue;
    }
    if (fence) continue;
    const m = line.match(HEADING);
    if (m && m[2].trim()) out.push({ level: m[1].length, text: m[2].trim() });
  }
  return out;
}

// A code cell's title: its first line that says something (blank and header lines skipped).
export function cellTitle(source) {
  for (const line of String(source || "").split("\n")) {
    const t = line.trim();
    if (t && !ANNOTATION.test(t)) return t.length > 80 ? `${t.slice(0, 79)}…` : t;
  }
  return "";
}

// The outline's rows for cells [{id, kind, source}]: a row per heading (level 1-6) and one per
// code cell (level: one below the heading above it). A cell's `level` for folding is its
// strongest heading (0: none).
export function outlineRows(cells) {
  const rows = [];
  let depth = 0;
  for (const c of cells) {
    if (c.kind === "markdown") {
      for (const hd of headingsOf(c.source)) {
        rows.push({ cellId: c.id, kind: "heading", level: hd.level, text: hd.text });
        depth = hd.level;
      }
    } else {
      rows.push({ cellId: c.id, kind: c.kind, level: depth + 1, text: cellTitle(c.source) || `(empty ${c.kind} cell)` });
    }
  }
  return rows;
}

export function headingLevel(cell) {
  if (cell.kind !== "markdown") return 0;
  const levels = headingsOf(cell.source).map((hd) => hd.level);
  return levels.length ? Math.min(...levels) : 0;
}

// Which cells are hidden when the heading cells in `folded` are: a folded heading hides what
// follows it up to the next heading of the same or a higher level (a smaller number).
// Returns {hidden: Set of cell ids, under: Map heading cell id -> how many cells it hides}.
export function foldedCells(cells, folded) {
  const hidden = new Set();
  const under = new Map();
  let by = null; // the folded heading hiding what comes now: {id, level}
  for (const c of cells) {
    const level = headingLevel(c);
    if (by && level && level <= by.level) by = null;
    if (by) {
      hidden.add(c.id);
      under.set(by.id, (under.get(by.id) || 0) + 1);
      continue;
    }
    if (level && folded.has(c.id)) {
      by = { id: c.id, level };
      under.set(c.id, 0);
    }
  }
  return { hidden, under };
}

// The folded headings to open so that `cellId` shows: each folded heading above it whose section
// reaches it (no heading between them of the same or a higher level).
export function foldsHiding(cells, folded, cellId) {
  const at = cells.findIndex((c) => c.id === cellId);
  const open = [];
  let between = Infinity; // the strongest heading level met so far, going up from the cell
  for (const c of cells.slice(0, Math.max(0, at)).reverse()) {
    const level = headingLevel(c);
    if (!level) continue;
    if (folded.has(c.id) && level < between) open.push(c.id);
    between = Math.min(between, level);
  }
  return open;
}
