// The notebook's outline: a side panel of the Markdown headings and the code cells' titles
// (outlinemodel.js), a click jumping to the cell, the running cell marked; and folding, from the
// panel or a heading cell's own ▾: a folded heading hides the cells under it up to the next
// heading of the same or a higher level. Folds are this page's view only, never saved or shared.
// page: the NotebookPage (its cells, order, root); it sends "cell-edit" and "cells-changed".

import { h, debounce } from "./dom.js";
import "./findoutline.css";
import { focusCell } from "./notebook-actions.js";
import { foldedCells, foldsHiding, headingLevel, outlineRows } from "./outlinemodel.js";

export class Outline {
  constructor(page) {
    this.page = page;
    this.folded = new Set(); // heading cells folded on this page
    this.list = h("ol.outline-list", { dataset: { role: "outline-list" } });
    this.el = h("aside.outline-panel", { dataset: { role: "outline" }, hidden: true, "aria-label": "Outline" },
      h("div.outline-head", {}, h("h2", { text: "Outline" }),
        h("button.close", { type: "button", text: "×", title: "Close the outline", dataset: { role: "outline-close" } })),
      this.list);
    this.later = debounce(() => this.draw(), 120);
    page.root.addEventListener("cell-edit", () => this.later());
    page.root.addEventListener("cells-changed", () => this.later());
    this.el.addEventListener("click", (e) => {
      const b = e.target.closest("button[data-role]");
      if (!b) return;
      if (b.dataset.role === "outline-close") this.toggle(false);
      else if (b.dataset.role === "outline-fold") this.toggleFold(b.dataset.cellId);
      else if (b.dataset.role === "outline-item") this.jump(b.dataset.cellId);
    });
    page.root.addEventListener("click", (e) => {
      const b = e.target.closest(".cell-head button[data-role=fold]");
      if (b) this.toggleFold(b.closest(".cell").dataset.cellId);
    });
  }

  cells() {
    return this.page.order.map((id) => this.page.cells.get(id)).filter(Boolean)
      .map((c) => ({ id: c.id, kind: c.kind, source: c.source }));
  }

  toggle(show = this.el.hidden) {
    this.el.hidden = !show;
    document.body.classList.toggle("outline-open", show);
    this.page.root.dataset.outline = show ? "open" : "";
    if (show) this.draw();
  }

  // The panel's rows (when it is open) and the folds of the cells.
  draw() {
    const cells = this.cells();
    for (const id of this.folded) {
      const c = cells.find((x) => x.id === id);
      if (!c || !headingLevel(c)) this.folded.delete(id); // gone, or no longer a heading
    }
    const { hidden, under } = foldedCells(cells, this.folded);
    if (!this.el.hidden) this.drawRows(cells, hidden);
    for (const c of cells) this.foldCell(this.page.cells.get(c.id), headingLevel(c), hidden.has(c.id), under.get(c.id));
    this.markStatus();
  }

  drawRows(cells, hidden) {
    const seen = new Set();
    const rows = outlineRows(cells).map((row) => {
      const first = row.kind === "heading" && !seen.has(row.cellId);
      seen.add(row.cellId);
      const folded = this.folded.has(row.cellId);
      return h("li.outline-row", { dataset: { kind: row.kind, level: String(row.level), cellId: row.cellId, hidden: hidden.has(row.cellId) ? "1" : "" } },
        first ? h("button.outline-fold", { type: "button", dataset: { role: "outline-fold", cellId: row.cellId },
          title: folded ? "Unfold this section" : "Fold this section", "aria-expanded": String(!folded), text: folded ? "▸" : "▾" }) : null,
        h("button.outline-item", { type: "button", dataset: { role: "outline-item", cellId: row.cellId }, title: row.text, text: row.text }));
    });
    if (!rows.length) rows.push(h("li.muted", { text: "No headings or cells yet." }));
    this.list.replaceChildren(...rows);
  }

  // A heading cell gets its fold button; a cell in a folded section is hidden.
  foldCell(cell, level, hidden, count) {
    if (!cell) return;
    cell.el.classList.toggle("folded-away", hidden);
    let btn = cell.el.querySelector(".cell-head > button[data-role=fold]");
    if (!level) {
      btn?.remove();
      cell.el.classList.remove("section-folded");
      return;
    }
    if (!btn) {
      btn = h("button.icon.fold-toggle", { type: "button", dataset: { role: "fold" } });
      cell.el.querySelector(".cell-head").prepend(btn);
    }
    const folded = this.folded.has(cell.id);
    cell.el.classList.toggle("section-folded", folded);
    btn.textContent = folded ? `▸ ${count || 0} hidden` : "▾";
    btn.title = folded ? `Unfold the ${count || 0} cell${count === 1 ? "" : "s"} of this section` : "Fold the cells of this section";
    btn.setAttribute("aria-expanded", String(!folded));
  }

  toggleFold(cellId) {
    if (this.folded.has(cellId)) this.folded.delete(cellId);
    else this.folded.add(cellId);
    this.draw();
  }

  // Open the folds that hide `cellId` (a jump, a find match, a link to it).
  reveal(cellId) {
    const open = foldsHiding(this.cells(), this.folded, cellId);
    if (!open.length) return;
    for (const id of open) this.folded.delete(id);
    this.draw();
  }

  jump(cellId) {
    this.reveal(cellId);
    focusCell(this.page, cellId, false);
  }

  // Called by the page's clock: each row says its cell's run state (CSS marks the running one).
  markStatus() {
    if (this.el.hidden) return;
    for (const row of this.list.children) {
      const status = this.page.cells.get(row.dataset.cellId)?.status || "";
      if (row.dataset.status !== status) row.dataset.status = status;
    }
  }
}
