// The notebook page's commands: toolbar buttons, cell buttons (cell.js) and keys (shortcuts.js)
// all arrive as an action name at act(), which checks the role (roles.js) and runs it: run, run
// all, insert, delete and undo, move, change kind, select, clear, find (findbar.js), the outline. Structure changes go into the
// shared document (coedit.js); notebook.js applyDoc draws them, here and on every page.
// page: the NotebookPage (its cells, order, selection, role, shared document, live channel,
// saver, banners, help and data panel).

import { sourceDigest } from "./coedit.js";
import { allows } from "./roles.js";
import { clearOutputs } from "./clearoutputs.js";
import { restartKernel } from "./notebook-kernel.js";

const UNDO_DEPTH = 20; // deletions z can undo

function neighbour(page, cellId, delta) {
  const i = page.order.indexOf(cellId);
  return page.order[i + delta];
}

export async function act(page, action, cellId) {
  const cell = page.cells.get(cellId);
  // Keys reach here whatever the role; a runner's "run, insert below" still runs.
  if (action === "run-insert" && !allows(page.role, action)) action = "run";
  if (!allows(page.role, action)) return;
  try {
    switch (action) {
      case "run": return await run(page, cell);
      case "run-next": {
        await run(page, cell);
        const next = neighbour(page, cellId, 1);
        if (next) focusCell(page, next, true);
        else if (allows(page.role, "insert-below")) await insert(page, page.order.length, cell ? cell.kind === "markdown" ? "mlsql" : cell.kind : "mlsql", true);
        return;
      }
      case "run-insert":
        await run(page, cell);
        return await insert(page, page.order.indexOf(cellId) + 1, cell?.kind || "mlsql", true);
      case "run-from": return cell && await withSaved(page, page.order.slice(page.order.indexOf(cell.id)),
        (sources, retry) => page.live.runFrom(cell.id, sources, retry, formParams(page)));
      case "run-all": page.signal.askPermission(); return await withSaved(page, page.order,
        (sources, retry) => page.live.runAll(sources, retry, formParams(page)));
      case "interrupt": return page.live.interrupt();
      case "restart": return await restartKernel(page);
      case "clear-all": return await clearOutputs(page.api, page.id, page.role, [...page.cells.values()], true);
      case "clear-output": return cell && await clearOutputs(page.api, page.id, page.role, [cell]);
      case "collapse-input": case "collapse-output":
        return cell?.el.classList.toggle(action === "collapse-input" ? "input-collapsed" : "output-collapsed");
      case "save": return await page.saver.flush();
      case "help": return page.help.toggle();
      case "data-panel": return page.data.toggle();
      case "find": case "find-replace": return page.find.open(action === "find-replace");
      case "undo-replace": return page.find.undo();
      case "outline": return page.outline.toggle();
      case "command-mode":
        cell?.kind === "markdown" && cell.stopEditing();
        return cell?.el.focus();
      case "edit": return cell && (cell.kind === "markdown" ? cell.startEditing() : cell.editor.focus());
      case "select-prev": case "select-next": {
        const next = neighbour(page, cellId, action === "select-prev" ? -1 : 1) || (cellId ? null : page.order[0]);
        return next && focusCell(page, next, false);
      }
      case "insert-above": return await insert(page, Math.max(0, page.order.indexOf(cellId)), "mlsql", true);
      case "insert-below": return await insert(page, cell ? page.order.indexOf(cellId) + 1 : page.order.length, "mlsql", true);
      case "add-mlsql": case "add-python": case "add-markdown":
        return await insert(page, page.order.length, action.slice(4), true);
      case "delete": return cell && await remove(page, cell);
      case "undo-delete": return await undoDelete(page);
      case "move-up": case "move-down": return cell && await move(page, cell, action === "move-up" ? -1 : 1);
      case "kind-mlsql": case "kind-python": case "kind-markdown":
        return cell && await changeKind(page, cell, action.slice(5));
      default:
    }
  } catch (err) {
    if (err.status !== 409) page.banners.show("action", `${action} failed: ${err.message}`);
  }
}

// What the parameter form above the cells holds (jobs.js sets page.params), for every run.
function formParams(page) {
  return page.params ? page.params() : undefined;
}

export function focusCell(page, cellId, edit) {
  const cell = page.cells.get(cellId);
  if (!cell) return;
  page.select(cellId);
  if (edit && cell.kind !== "markdown" && !cell.readOnly) cell.editor.focus();
  else cell.focus();
}

// The server runs the stored source: every change made here reaches it first (it stores the
// shared document before it runs), and the REST writes still queued are sent. The run carries
// what this page shows of the cells it runs; should the server not hold that (an edit it lacks),
// nothing runs, the page syncs again (which sends what the server lacks) and asks once more.
async function withSaved(page, cellIds, send) {
  const sources = () => Object.fromEntries(cellIds.map((id) => page.cells.get(id))
    .filter((c) => c && c.kind !== "markdown").map((c) => [c.id, sourceDigest(c.editor.text())]));
  await page.shared.whenSent();
  await page.saver.flush();
  const ack = await send(sources(), true);
  if (ack && ack.ok === false && ack.status === 409 && Array.isArray(ack.stale)) {
    await page.shared.sync();
    await page.shared.whenSent();
    await send(sources(), false);
  }
}

async function run(page, cell) {
  if (!cell) return;
  if (cell.kind === "markdown") {
    cell.stopEditing();
    return;
  }
  page.select(cell.id);
  await withSaved(page, [cell.id], (sources, retry) => page.live.runCell(cell.id, sources, retry, formParams(page)));
}

async function insert(page, position, kind, focus) {
  await page.shared.ready;
  const id = page.shared.insertCell(position, kind);
  const cell = page.cells.get(id);
  if (focus) {
    if (kind === "markdown") cell.startEditing();
    focusCell(page, cell.id, true);
  }
  return cell;
}

// A cell the data panel inserts (a load, a preview): below the selected cell, or at the end.
export async function insertSource(page, source, andRun = false) {
  await page.shared.ready;
  const at = page.selected && page.order.includes(page.selected) ? page.order.indexOf(page.selected) + 1 : page.order.length;
  const id = page.shared.insertCell(at, "mlsql", source);
  focusCell(page, id, false);
  if (andRun && allows(page.role, "run")) await run(page, page.cells.get(id));
  return id;
}

// A deletion can be undone (z, or the banner's button): the cell comes back where it was, with
// its id (so its stored runs stay its own), its text, and the output this page showed.
async function remove(page, cell) {
  const next = neighbour(page, cell.id, 1) || neighbour(page, cell.id, -1);
  const index = page.order.indexOf(cell.id);
  await page.shared.ready;
  page.deleted.push({ id: cell.id, kind: cell.kind, source: cell.editor.text(), index, output: cell.output, view: cell.view });
  if (page.deleted.length > UNDO_DEPTH) page.deleted.shift();
  page.shared.deleteCell(cell.id);
  if (next) focusCell(page, next, false);
  page.banners.show("undo-delete", `Cell ${index + 1} deleted.`, [["Undo (z)", () => act(page, "undo-delete"), "undo-delete"]], "info");
  clearTimeout(page.undoTimer);
  page.undoTimer = setTimeout(() => page.banners.hide("undo-delete"), 15000);
}

async function undoDelete(page) {
  const last = page.deleted.pop();
  page.banners.hide("undo-delete");
  if (!last) return;
  await page.shared.ready;
  const present = page.shared.list().some((c) => c.id === last.id); // someone else brought it back
  if (!present) page.shared.insertCell(Math.min(last.index, page.order.length), last.kind, last.source, last.id);
  const cell = page.cells.get(last.id);
  if (!cell) return;
  if (!present) cell.adoptOutput(last.output, last.view);
  focusCell(page, cell.id, false);
}

async function move(page, cell, delta) {
  const from = page.order.indexOf(cell.id);
  const to = from + delta;
  if (to < 0 || to >= page.order.length) return;
  await page.shared.ready;
  page.shared.moveCell(cell.id, to);
  cell.focus();
}

async function changeKind(page, cell, kind) {
  if (cell.kind === kind) return;
  cell.setKind(kind);
  await page.shared.ready;
  page.shared.setKind(cell.id, kind);
}
