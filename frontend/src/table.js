// A result table: column names with their types (a click on one sorts), and rows drawn readably
// (console/kernel/results.py json_safe markers through paging.js). Paging and sorting decide
// elsewhere (results.js); this only draws what it is given.

import { h } from "./dom.js";
import { cellText, cellClass } from "./paging.js";

const ARROWS = { asc: " ▲", desc: " ▼" };

export class ResultGrid {
  // onSort(column name) when a header is clicked.
  constructor(columns, onSort) {
    this.columns = columns;
    this.heads = columns.map((c) => h("th", { title: `${c.name}: ${c.type} (click to sort)`, dataset: { column: c.name } },
      h("span.col-name", { text: c.name }), h("span.col-sort"), h("span.col-type", { text: c.type })));
    this.heads.forEach((th, i) => th.addEventListener("click", () => onSort(columns[i].name)));
    this.body = h("tbody");
    this.el = h("div.table-wrap", {}, h("table.grid", {}, h("thead", {}, h("tr", {}, this.heads)), this.body));
  }

  showSort(sort) {
    const [col, dir] = sort[0] || [];
    this.heads.forEach((th, i) => {
      const on = this.columns[i].name === col;
      th.dataset.sort = on ? dir : "";
      th.querySelector(".col-sort").textContent = on ? ARROWS[dir] : "";
    });
  }

  draw(rows, firstRow) {
    const frag = document.createDocumentFragment();
    rows.forEach((row, r) => {
      const tr = document.createElement("tr");
      tr.dataset.row = String(firstRow + r + 1);
      for (let c = 0; c < this.columns.length; c++) {
        const td = document.createElement("td");
        const v = row[c];
        td.textContent = cellText(v);
        const cls = cellClass(v);
        if (cls) td.className = cls;
        tr.append(td);
      }
      frag.append(tr);
    });
    this.body.replaceChildren(frag);
  }
}
