// The revisions panel: the notebook's history with author and time, the diff of cell sources
// between a revision and the current one, and restore (editors; a new revision, history stays;
// the button is left out for viewers and runners).

import { h } from "./dom.js";
import { errorLine, openPanel, when } from "./overlay.js";

const base = (id) => `/notebooks/${encodeURIComponent(id)}/revisions`;

// A unified diff as lines, each a span classed by its first character; text only.
export function diffView(text) {
  return h("pre.diff", {}, text.split("\n").map((line) => {
    const cls = line.startsWith("+++") || line.startsWith("---") ? "file"
      : line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : line.startsWith("@@") ? "hunk" : "ctx";
    return h(`span.${cls}`, { text: `${line}\n` });
  }));
}

export function openRevisionsPanel(api, notebookId, { onRestored, canRestore = true } = {}) {
  const panel = openPanel("History", "revisions-panel");
  const list = h("ol.revision-list", { dataset: { role: "revisions" } });
  const detail = h("div.revision-detail", { dataset: { role: "revision-diff" } });
  panel.body.append(list, detail);

  async function show(rev, current) {
    detail.replaceChildren(h("p.muted", { text: `Revision ${rev.number} → current (${current})` }));
    try {
      const diff = await api.request("GET", `${base(notebookId)}/diff?from=${rev.number}&to=${current}`);
      const changed = diff.cells.filter((c) => c.status !== "same");
      if (diff.name.from !== diff.name.to) detail.append(h("p", { text: `name: ${diff.name.from} → ${diff.name.to}` }));
      if (!changed.length) detail.append(h("p.muted", { text: "No differences in cell sources." }));
      for (const c of changed) detail.append(h("h4", { text: `${c.kind} cell ${c.id}: ${c.status}` }), diffView(c.diff));
      const restore = h("button", { type: "button", text: `Restore revision ${rev.number}`, dataset: { secAction: "restore" } });
      restore.addEventListener("click", async () => {
        try {
          const nb = await api.request("POST", `${base(notebookId)}/${rev.number}/restore`, { base_revision: current });
          panel.close();
          onRestored?.(nb);
        } catch (err) {
          detail.append(errorLine(err));
        }
      });
      if (canRestore && rev.number !== current) detail.append(restore);
    } catch (err) {
      detail.append(errorLine(err));
    }
  }

  api.request("GET", base(notebookId)).then(({ revisions }) => {
    const current = revisions.length ? revisions[0].number : 0;
    list.replaceChildren(...revisions.map((rev) => {
      const b = h("button.link", { type: "button", dataset: { secAction: "show-revision", number: String(rev.number) },
        text: `#${rev.number} · ${rev.author || "unknown"} · ${when(rev.created_at)}` });
      b.addEventListener("click", () => show(rev, current));
      return h("li", {}, b);
    }));
  }).catch((err) => list.replaceChildren(errorLine(err)));
  return panel;
}
