// A result table: column names with their types, rows paged in the browser, and the total row
// count of the table (the server sends only its first rows).

import { h } from "./dom.js";
import { pageOf, describeRows, cellText } from "./paging.js";

const PAGE_SIZE = 20;

export function renderResult(result) {
  const columns = result.columns || [];
  const rows = result.rows || [];
  const total = result.total_rows ?? rows.length;
  let page = 0;

  const head = h("tr", {}, columns.map((c) =>
    h("th", { title: `${c.name}: ${c.type}` }, h("span.col-name", { text: c.name }), h("span.col-type", { text: c.type }))));
  const body = h("tbody");
  const info = h("span.table-info", { dataset: { role: "table-info" } });
  const prev = h("button", { type: "button", text: "‹ prev", dataset: { action: "page-prev" } });
  const next = h("button", { type: "button", text: "next ›", dataset: { action: "page-next" } });
  const pager = h("div.pager", {}, prev, info, next);

  function draw() {
    const p = pageOf(rows, page, PAGE_SIZE);
    page = p.page;
    const frag = document.createDocumentFragment();
    for (const row of p.rows) {
      const tr = document.createElement("tr");
      for (let c = 0; c < columns.length; c++) {
        const td = document.createElement("td");
        const v = row[c];
        td.textContent = cellText(v);
        if (v === null || v === undefined) td.className = "null";
        else if (typeof v === "number") td.className = "num";
        tr.append(td);
      }
      frag.append(tr);
    }
    body.replaceChildren(frag);
    info.textContent = describeRows(p.start, p.end, rows.length, total);
    prev.hidden = next.hidden = p.pages <= 1;
    prev.disabled = p.page === 0;
    next.disabled = p.page >= p.pages - 1;
  }
  prev.addEventListener("click", () => { page -= 1; draw(); });
  next.addEventListener("click", () => { page += 1; draw(); });
  draw();

  return h("div.result", { dataset: { role: "result", table: result.name || "", totalRows: String(total) } },
    h("div.result-title", {}, h("span", { text: result.name ? `table ${result.name}` : "result" })),
    h("div.table-wrap", {}, h("table.grid", {}, h("thead", {}, head), body)),
    pager);
}
