// The revisions panel: the notebook's history (a revision per settled burst of edits, run or named
// version) with its authors, label and time; the diff of any two revisions, or of one and the
// current content, with cells named by position and first line; restore (editors; a new revision,
// history stays; the button is left out for viewers and runners) and "Save version".

import { h } from "./dom.js";
import { ask } from "./dialog.js";
import { errorLine, openPanel, when } from "./overlay.js";

const base = (id) => `/notebooks/${encodeURIComponent(id)}/revisions`;
const CURRENT = ""; // the value of "the current content" in the compare menus

// A unified diff as lines, each a span classed by its first character; text only.
export function diffView(text) {
  return h("pre.diff", {}, text.split("\n").map((line) => {
    const cls = line.startsWith("+++") || line.startsWith("---") ? "file"
      : line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : line.startsWith("@@") ? "hunk" : "ctx";
    return h(`span.${cls}`, { text: `${line}\n` });
  }));
}

export function saveVersion(api, notebookId, label) {
  return api.request("POST", base(notebookId), label ? { label } : {});
}

// "#12 · first draft · ann, bob · 3/1/2026, 10:02"
export function revisionText(rev) {
  const who = rev.authors && rev.authors.length ? rev.authors.join(", ") : rev.author || "unknown";
  return [`#${rev.number}`, rev.label, who, when(rev.created_at)].filter(Boolean).join(" · ");
}

// The diff without its "--- r1/<id>" / "+++ r2/<id>" lines: the heading names the cell.
export function hunks(diff) {
  const lines = diff.split("\n");
  let i = 0;
  while (i < lines.length && (lines[i].startsWith("--- ") || lines[i].startsWith("+++ "))) i += 1;
  return lines.slice(i).join("\n");
}

const STATUS = { changed: "changed", added: "added", removed: "removed", same: "unchanged" };

// The diff answer (GET .../diff) as headings and diffs; unchanged cells are left out.
export function diffBody(diff) {
  const out = [];
  if (diff.name.from !== diff.name.to) out.push(h("p", { text: `name: ${diff.name.from} → ${diff.name.to}` }));
  const changed = diff.cells.filter((c) => c.status !== "same");
  if (!changed.length) out.push(h("p.muted", { text: "No differences in cell sources." }));
  for (const c of changed) {
    const moved = c.moved_from ? ` (was cell ${c.moved_from})` : "";
    out.push(h("h4", { dataset: { role: "diff-cell", status: c.status }, title: `cell id ${c.id}`,
      text: `${c.title || `cell ${c.position}`} — ${STATUS[c.status] || c.status}${moved}` }), diffView(hunks(c.diff)));
  }
  return out;
}

export function openRevisionsPanel(api, notebookId, { onRestored, canRestore = true, flush } = {}) {
  const panel = openPanel("History", "revisions-panel");
  const list = h("ol.revision-list", { dataset: { role: "revisions" } });
  const detail = h("div.revision-detail", { dataset: { role: "revision-diff" } });
  const from = h("select", { "aria-label": "Compare from", dataset: { role: "diff-from" } });
  const to = h("select", { "aria-label": "Compare to", dataset: { role: "diff-to" } });
  const compare = h("button", { type: "button", text: "Compare", dataset: { secAction: "compare" } });
  const save = h("button", { type: "button", text: "Save version…", dataset: { secAction: "save-version" }, hidden: !canRestore });
  panel.body.append(h("div.revision-tools", {}, h("span", { text: "Compare" }), from, h("span", { text: "with" }), to, compare, save),
    list, detail);
  let revisions = [];
  let current = 0;

  async function show(fromN, toN) {
    const target = toN === CURRENT ? "the current content" : `revision ${toN}`;
    detail.replaceChildren(h("p.muted", { text: `Revision ${fromN} → ${target}` }));
    try {
      const q = `from=${fromN}${toN === CURRENT ? "" : `&to=${toN}`}`;
      const diff = await api.request("GET", `${base(notebookId)}/diff?${q}`);
      detail.append(...diffBody(diff));
      if (canRestore && Number(fromN) !== current) {
        const restore = h("button", { type: "button", text: `Restore revision ${fromN}`, dataset: { secAction: "restore" } });
        restore.addEventListener("click", async () => {
          try {
            if (flush) await flush();
            const nb = await api.request("GET", `/notebooks/${encodeURIComponent(notebookId)}`);
            const res = await api.request("POST", `${base(notebookId)}/${fromN}/restore`, { base_revision: nb.revision });
            panel.close();
            onRestored?.(res);
          } catch (err) {
            detail.append(errorLine(err));
          }
        });
        detail.append(restore);
      }
    } catch (err) {
      detail.append(errorLine(err));
    }
  }

  function option(value, text, selected) {
    return h("option", { value: String(value), text, selected });
  }

  async function load() {
    ({ revisions } = await api.request("GET", base(notebookId)));
    current = revisions.length ? revisions[0].number : 0;
    from.replaceChildren(...revisions.map((r, i) => option(r.number, revisionText(r), i === 1 || revisions.length === 1)));
    to.replaceChildren(option(CURRENT, "the current content", true), ...revisions.map((r) => option(r.number, revisionText(r), false)));
    list.replaceChildren(...revisions.map((rev) => {
      const b = h("button.link", { type: "button", dataset: { secAction: "show-revision", number: String(rev.number) },
        text: revisionText(rev) });
      b.addEventListener("click", () => {
        from.value = String(rev.number);
        to.value = CURRENT;
        show(rev.number, CURRENT);
      });
      return h("li", { dataset: { label: rev.label || "" } }, b);
    }));
  }

  compare.addEventListener("click", () => show(from.value, to.value));
  save.addEventListener("click", async () => {
    const label = await ask("Name this version", "", { okText: "Save version" });
    if (!label) return;
    try {
      if (flush) await flush();
      await saveVersion(api, notebookId, label);
      await load();
    } catch (err) {
      detail.replaceChildren(errorLine(err));
    }
  });
  load().catch((err) => list.replaceChildren(errorLine(err)));
  return panel;
}
