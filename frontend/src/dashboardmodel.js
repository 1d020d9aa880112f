// What the dashboard page (dashboard.js) does to its tiles, without the DOM: moving a tile in the
// order, making it wider, narrower, taller or shorter within the grid's bounds (the server's:
// console/store/dashboards.py), the PUT body of the arrangement, a tile's title, and whether a
// tile's run changed since it was drawn.

export const MAX_WIDTH = 4;
export const MAX_HEIGHT = 3;
export const BUSY = new Set(["queued", "running"]);

const clamp = (n, lo, hi) => Math.max(lo, Math.min(hi, n));

// The tiles with the one at `index` moved by `step` places (-1 earlier, +1 later); the same list
// when it cannot move.
export function moveTile(tiles, index, step) {
  const to = index + step;
  if (index < 0 || index >= tiles.length || to < 0 || to >= tiles.length) return tiles;
  const out = tiles.slice();
  const [tile] = out.splice(index, 1);
  out.splice(to, 0, tile);
  return out;
}

// The tiles with the one at `index` resized by dw columns and dh rows, kept within the grid.
export function resizeTile(tiles, index, dw, dh) {
  const tile = tiles[index];
  if (!tile) return tiles;
  const width = clamp((tile.width || 2) + dw, 1, MAX_WIDTH);
  const height = clamp((tile.height || 2) + dh, 1, MAX_HEIGHT);
  if (width === tile.width && height === tile.height) return tiles;
  return tiles.map((t, i) => (i === index ? { ...t, width, height } : t));
}

export function removeTile(tiles, index) {
  return tiles.filter((_, i) => i !== index);
}

// PUT /api/notebooks/<id>/dashboard's body: only the fields a tile has, and the revision it is based on.
export function arrangementBody(tiles, baseRevision) {
  return {
    tiles: tiles.map(({ cell_id, kind, width, height }) => ({ cell_id, kind, width, height })),
    base_revision: baseRevision,
  };
}

export function tileTitle(tile) {
  if (!tile.cell) return "A deleted cell (unpin it, or restore a revision that has it)";
  return tile.cell.title || `cell ${tile.cell.position}`;
}

export function tileKey(tile) {
  return `${tile.kind}:${tile.cell_id}`;
}

// What decides whether a tile is drawn again: its run (status, end, what it holds) and the cell's view.
export function runStamp(tile) {
  return JSON.stringify([tile.run || null, tile.cell ? tile.cell.view : null, tile.cell ? tile.cell.title : null]);
}

export function isBusy(tile) {
  return Boolean(tile.run && BUSY.has(tile.run.status));
}

// The values a Refresh sends: every declared parameter, an empty input as its default (as the
// notebook's parameter form does: an open session may hold an earlier run's value).
export function refreshParams(declared, typed) {
  return Object.fromEntries((declared || []).map((p) => [p.name, (typed && typed[p.name]) || p.default]));
}
