// The notebook's find bar: find across all cells (Ctrl-F in command mode), and replace (Ctrl-H),
// with a match count, case and regex toggles, next / previous (the match marked in its cell and
// scrolled to), replace one and replace all. A replacement is an edit of the shared document
// (coedit.js replaceRanges): everyone on the notebook sees it, and each is one undo step here
// (the bar's Undo, or Ctrl-Z in command mode). The matching itself is findmatch.js.
// page: the NotebookPage (its cells, order, role, selection, shared document, outline and root).

import { h, debounce } from "./dom.js";
import "./findoutline.css";
import { allows } from "./roles.js";
import { findAll, makeMatcher, nearestMatch, replacementEdits } from "./findmatch.js";

function toggle(text, title, role) {
  return h("button.find-toggle", { type: "button", title, "aria-label": title, "aria-pressed": "false", dataset: { role }, text });
}

function button(text, title, role) {
  return h("button", { type: "button", title, dataset: { role }, text });
}

export class FindBar {
  constructor(page) {
    this.page = page;
    this.matches = [];
    this.at = -1;
    this.marked = new Set(); // cells whose editors hold marks
    this.opened = new Set(); // Markdown cells shown as source to show a match in them
    this.query = h("input.find-query", { type: "text", placeholder: "Find in all cells", "aria-label": "Find", dataset: { role: "find-query" }, spellcheck: false });
    this.caseBtn = toggle("Aa", "Match case (Alt-C)", "find-case");
    this.regexBtn = toggle(".*", "Regular expression (Alt-R)", "find-regex");
    this.count = h("span.find-count", { dataset: { role: "find-count" }, "aria-live": "polite" });
    this.replacement = h("input.find-replacement", { type: "text", placeholder: "Replace with", "aria-label": "Replace with", dataset: { role: "find-replacement" }, spellcheck: false });
    this.undoBtn = button("Undo", "Undo the last replacement (Ctrl-Z in command mode)", "find-undo");
    this.undoBtn.hidden = true;
    this.said = h("span.find-said.muted", { dataset: { role: "find-said" } });
    this.replaceRow = h("div.find-row", { hidden: true },
      this.replacement, button("Replace", "Replace this match (Enter)", "replace-one"),
      button("Replace all", "Replace every match in every cell (one undo step)", "replace-all"), this.undoBtn, this.said);
    this.el = h("div.find-bar", { dataset: { role: "find-bar" }, hidden: true, role: "search" },
      h("div.find-row", {}, this.query, this.caseBtn, this.regexBtn, this.count,
        button("↑", "Previous match (Shift-Enter)", "find-prev"), button("↓", "Next match (Enter)", "find-next"),
        button("×", "Close (Escape)", "find-close")),
      this.replaceRow);
    this.later = debounce(() => this.refresh(false), 80);
    this.bind();
  }

  bind() {
    const on = { "find-prev": () => this.go(-1), "find-next": () => this.go(1), "find-close": () => this.close(),
      "replace-one": () => this.replaceOne(), "replace-all": () => this.replaceAll(), "find-undo": () => this.undo(),
      "find-case": () => this.flip(this.caseBtn), "find-regex": () => this.flip(this.regexBtn) };
    this.el.addEventListener("click", (e) => {
      const b = e.target.closest("button[data-role]");
      if (b && on[b.dataset.role]) on[b.dataset.role]();
    });
    this.query.addEventListener("input", () => this.refresh(true));
    // Keys typed in the bar are the bar's: none reaches the notebook's command keys.
    this.el.addEventListener("keydown", (e) => {
      e.stopPropagation();
      const mod = e.ctrlKey || e.metaKey;
      if (e.key === "Escape") this.close();
      else if (e.key === "Enter" && e.target === this.replacement) this.replaceOne();
      else if (e.key === "Enter") this.go(e.shiftKey ? -1 : 1);
      else if (mod && e.key.toLowerCase() === "f") this.open(false);
      else if (mod && e.key.toLowerCase() === "h") this.open(true);
      else if (e.altKey && e.code === "KeyC") this.flip(this.caseBtn);
      else if (e.altKey && e.code === "KeyR") this.flip(this.regexBtn);
      else return;
      e.preventDefault();
    });
    this.page.root.addEventListener("cell-edit", () => this.el.hidden || this.later());
    this.page.root.addEventListener("cells-changed", () => this.el.hidden || this.later());
  }

  get canReplace() {
    return allows(this.page.role, "edit");
  }

  // replace: show the replace row too (for an editor); the query starts as the selected text.
  open(replace, query) {
    const picked = query ?? String(document.getSelection() || "");
    if (picked && !picked.includes("\n")) this.query.value = picked;
    this.el.hidden = false;
    if (replace && this.canReplace) this.replaceRow.hidden = false;
    this.page.root.dataset.find = "open";
    (replace && this.canReplace && this.query.value ? this.replacement : this.query).focus();
    this.query.select();
    this.refresh(true);
  }

  close() {
    this.el.hidden = true;
    this.replaceRow.hidden = true;
    delete this.page.root.dataset.find;
    this.mark([], -1, false);
    for (const id of this.opened) {
      const cell = this.page.cells.get(id);
      if (cell && !cell.el.contains(document.activeElement)) cell.stopEditing();
    }
    this.opened.clear();
    this.page.cells.get(this.page.selected)?.focus(); // back to command mode on the selected cell
  }

  flip(btn) {
    btn.setAttribute("aria-pressed", btn.getAttribute("aria-pressed") === "true" ? "false" : "true");
    this.refresh(true);
  }

  options() {
    return { caseSensitive: this.caseBtn.getAttribute("aria-pressed") === "true", regex: this.regexBtn.getAttribute("aria-pressed") === "true" };
  }

  texts() {
    return this.page.order.map((id) => {
      const cell = this.page.cells.get(id);
      return { id, text: cell.ytext ? cell.ytext.toString() : cell.editor.text() };
    });
  }

  // Find again (the texts or the query changed). jump: show the first match from the top, else
  // the one nearest to where the shown one was, without scrolling to it.
  refresh(jump) {
    const matcher = makeMatcher(this.query.value, this.options());
    const before = this.matches[this.at];
    this.el.dataset.state = matcher.error ? "invalid" : "";
    this.matches = matcher.error ? [] : findAll(this.texts(), matcher);
    this.at = jump ? (this.matches.length ? 0 : -1) : nearestMatch(this.matches, this.page.order, before);
    if (matcher.error) this.count.textContent = matcher.error;
    this.show(jump && this.at >= 0);
  }

  go(delta) {
    const n = this.matches.length;
    if (!n) return;
    this.at = (this.at + delta + n) % n;
    this.show(true);
  }

  // The count, and the marks of every cell; scroll: bring the current match into view.
  show(scroll) {
    const n = this.matches.length;
    if (this.el.dataset.state !== "invalid") {
      this.count.textContent = this.query.value ? (n ? `${this.at + 1} of ${n}` : "no results") : "";
    }
    this.count.dataset.matches = String(n);
    const current = this.matches[this.at];
    if (scroll && current) this.reveal(current.cellId);
    this.mark(this.matches, this.at, scroll);
  }

  mark(matches, at, scroll) {
    const byCell = new Map();
    matches.forEach((m, i) => {
      if (!byCell.has(m.cellId)) byCell.set(m.cellId, { ranges: [], at: -1 });
      const entry = byCell.get(m.cellId);
      if (i === at) entry.at = entry.ranges.length;
      entry.ranges.push(m);
    });
    for (const id of new Set([...this.marked, ...byCell.keys()])) {
      const cell = this.page.cells.get(id);
      const entry = byCell.get(id) || { ranges: [], at: -1 };
      cell?.editor.findMarks(entry.ranges, entry.at, scroll && entry.at >= 0);
    }
    this.marked = new Set(byCell.keys());
  }

  // The match's cell: out of a folded section, its source shown (a Markdown cell), selected.
  reveal(cellId) {
    const cell = this.page.cells.get(cellId);
    if (!cell) return;
    this.page.outline?.reveal(cellId);
    if (cell.kind === "markdown" && !cell.editing) {
      cell.editing = true;
      cell.showKind();
      this.opened.add(cellId);
    }
    this.page.select(cellId);
    cell.el.scrollIntoView({ block: "nearest" });
  }

  // Only cells bound to the shared document are replaced in: what is replaced reaches everyone.
  edit(matches) {
    const shared = this.page.shared;
    const live = matches.filter((m) => this.page.cells.get(m.cellId)?.ytext);
    if (!this.canReplace || !shared || !shared.epoch || !live.length) {
      this.said.textContent = live.length || !matches.length ? "" : "Not connected yet: nothing replaced.";
      return 0;
    }
    shared.replaceRanges(replacementEdits(live, this.replacement.value, this.options().regex));
    this.undoBtn.hidden = false;
    return live.length;
  }

  replaceOne() {
    const m = this.matches[this.at];
    if (!m) return;
    const [edit] = replacementEdits([m], this.replacement.value, this.options().regex);
    if (!this.edit([m])) return;
    this.said.textContent = "";
    // Go on from just after the inserted text.
    this.matches = [{ cellId: m.cellId, from: m.from + edit.insert.length }];
    this.at = 0;
    this.refresh(false);
    this.show(true);
  }

  replaceAll() {
    const matches = this.matches;
    const done = this.edit(matches);
    if (!done) return;
    const cells = new Set(matches.map((m) => m.cellId)).size;
    this.said.textContent = `Replaced ${done} in ${cells} cell${cells === 1 ? "" : "s"}.`;
    this.refresh(false);
  }

  undo() {
    if (!this.page.shared?.undoReplace()) return false;
    this.undoBtn.hidden = !this.page.shared.findUndo.undoStack.length;
    this.said.textContent = "Replacement undone.";
    if (!this.el.hidden) this.refresh(false);
    return true;
  }
}

// A link from the workspace's search (#cell=<id>&find=<text>): the cell shown, the text found in it.
export function openFromHash(page) {
  const params = new URLSearchParams(location.hash.slice(1));
  const cellId = params.get("cell");
  if (!cellId || !page.cells.has(cellId)) return;
  const query = params.get("find");
  page.select(cellId);
  if (!query) {
    page.outline?.reveal(cellId);
    page.cells.get(cellId).focus();
    return;
  }
  page.find.open(false, query);
  const i = page.find.matches.findIndex((m) => m.cellId === cellId);
  if (i >= 0) {
    page.find.at = i;
    page.find.show(true);
  }
}
