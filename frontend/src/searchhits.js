// The workspace search's second half: notebooks whose cells hold the text (GET /api/search, which
// keeps to what the caller may read), each matching cell a link that opens the notebook at that
// cell with the text found in it (findbar.js openFromHash reads #cell=<id>&find=<text>).

import { h } from "./dom.js";
import "./findoutline.css";

export function cellLink(notebookId, cellId, query) {
  const hash = new URLSearchParams({ cell: cellId, find: query }).toString();
  return `/notebooks/${encodeURIComponent(notebookId)}#${hash}`;
}

function snippetNode(hit) {
  const text = hit.snippet;
  return h("code.hit-snippet", {}, hit.cut ? "…" : "", text.slice(0, hit.start),
    h("mark", { text: text.slice(hit.start, hit.end) }), text.slice(hit.end));
}

// answer: the endpoint's {query, notebooks, truncated}; only notebooks with matching cells show.
export function cellHits(answer) {
  const found = answer.notebooks.filter((nb) => nb.cells.length);
  const rows = found.map((nb) => h("li.hit-notebook", { dataset: { id: nb.id } },
    h("a.name", { href: `/notebooks/${encodeURIComponent(nb.id)}`, text: nb.name }),
    h("span.where", { text: ` ${nb.folder}` }),
    h("span.muted", { text: ` · ${nb.cell_matches} cell${nb.cell_matches === 1 ? "" : "s"}` }),
    h("ul.hit-cells", {}, nb.cells.map((c) => h("li", {},
      h("a.hit-cell", { href: cellLink(nb.id, c.id, answer.query), dataset: { role: "cell-hit", cellId: c.id },
        title: `cell ${c.index + 1}, line ${c.line}` },
      h("span.muted", { text: `cell ${c.index + 1} · ${c.kind} · line ${c.line} ` }), snippetNode(c)))))));
  return h("section.search-cells", { dataset: { role: "search-cells" } },
    h("h3", { text: found.length ? "In cell text" : "No cell holds this text." }),
    found.length ? h("ul", {}, rows) : null,
    answer.truncated ? h("p.muted", { text: "More notebooks match: type more to narrow the search." }) : null);
}
