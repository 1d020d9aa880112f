// "Clear output" (one cell) and "clear all": the page forgets the output at once; for an editor
// the server also deletes the stored runs (POST /api/notebooks/<id>/outputs/clear), so a reload,
// the export and the published page agree. A viewer or runner clears only their own page: what
// every viewer sees is the editors' to change (console/server/access.py).

import { atLeast } from "./roles.js";

// cells: the Cell objects to clear; all: true for "clear all" (every cell, also ones not shown).
export async function clearOutputs(api, notebookId, role, cells, all = false) {
  for (const c of cells) c.output.clear();
  if (!atLeast(role, "editor") || (!all && !cells.length)) return null;
  const body = all ? { all: true } : { cell_id: cells[0].id };
  return api.request("POST", `/notebooks/${encodeURIComponent(notebookId)}/outputs/clear`, body);
}
