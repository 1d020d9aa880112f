// The DOM of a cell's live log: at most `windowLines` lines are in the page, writes are batched
// into one animation frame, and a source filter (driver / each actor) narrows what is shown.
//
// Why the window: a cell that prints 50 MB must not put a million nodes in the page (the Jupyter
// and marimo freezes in notebook-anchors.md). The model keeps the lines; the page shows the tail,
// with a button that brings earlier lines in, a few hundred at a time.
//
// Runtime notices (the `system` stream: TensorFlow's and Ray's start-up lines, a library writing
// to the kernel's stderr) are not the cell's output: two or more in a row fold into one
// "system notices (N)" line that opens on a click. The engine's own status lines ("save … done")
// are written for the user and stay plain, and real stderr stays red.

import { h } from "./dom.js";
import { fmt, formatBytes } from "./paging.js";

const MAX_LINE_CHARS = 4000; // a single 50 MB line is cut for display; the download has it all
const MORE_STEP = 500;
const FOLD_MIN = 2; // a single notice is shown as it is: a fold would hide as much as it shows

export function foldable(line) {
  return line.stream === "system" && line.source !== "engine" && !line.hidden;
}

export class LogView {
  constructor(model, { windowLines = 400 } = {}) {
    this.model = model;
    this.windowLines = windowLines;
    this.filter = "";
    this.nodes = new Map(); // absolute line index -> element
    this.openFolds = new Set(); // first line index of each notices fold the user opened
    this.order = []; // absolute indexes in the page, ascending
    this.renderedEnd = 0; // model lines below this index have been considered
    this.knownSources = 0;
    this.frame = 0;
    this.full = true;

    this.select = h("select.log-filter", { title: "Show lines from one source", dataset: { role: "log-filter" } },
      h("option", { value: "", text: "all sources" }));
    this.select.addEventListener("change", () => {
      this.filter = this.select.value;
      this.full = true;
      this.schedule();
    });
    this.moreButton = h("button.log-more", { type: "button", dataset: { action: "log-more" }, hidden: true });
    this.moreButton.addEventListener("click", () => {
      this.windowLines += MORE_STEP;
      this.full = true;
      this.schedule();
    });
    this.droppedNote = h("div.log-dropped", { hidden: true });
    // The marker line may be far above the window; this note keeps "N KB hidden" in view.
    this.hiddenNote = h("div.log-hidden", { dataset: { role: "hidden-summary" }, hidden: true });
    // The scroll box stacks bottom-up (column-reverse, see style.css), so it starts at, and
    // follows, the newest line without reading the layout; the lines go in `body`, in order.
    this.body = h("div.log-body", { dataset: { role: "log-lines" } });
    this.lines = h("div.log-lines", {}, this.body);
    this.bar = h("div.log-bar", { hidden: true }, this.select);
    this.el = h("div.log", { dataset: { role: "log" }, hidden: true },
      this.bar, this.hiddenNote, this.droppedNote, this.moreButton, this.lines);
  }

  schedule() {
    if (this.frame) return;
    // rAF does not run in a background tab; output keeps accumulating in the model meanwhile.
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.flush();
    });
  }

  // Render what is waiting for the next frame now: a run that ended shows its last line with its
  // status, not a frame later (a test read a "done" cell without its last line under load).
  flushNow() {
    if (!this.frame) return;
    cancelAnimationFrame(this.frame);
    this.frame = 0;
    this.flush();
  }

  // Render now. It only writes to the DOM, never reads the layout: reading it once per log made a
  // cold load of 50 cells lay the page out 50 times.
  flush() {
    const m = this.model;
    if (m.sources.size !== this.knownSources) this.refreshSources();
    if (m.cut) { // the tail after the hidden marker was replaced
      m.cut = false;
      this.full = true;
    }
    if (this.full) this.renderAll();
    else this.renderIncrement();
    this.el.hidden = m.end === 0;
    this.bar.hidden = m.sources.size < 2;
    if (m.hiddenBytes && this.shownHidden !== m.hiddenBytes) {
      this.shownHidden = m.hiddenBytes;
      this.hiddenNote.replaceChildren(
        h("span", { text: `${formatBytes(m.hiddenBytes)} of this output is hidden here (head and tail shown) · ` }),
        m.hiddenUrl ? h("a", { href: m.hiddenUrl, download: "", dataset: { role: "download-log" }, text: "download the full log" }) : null);
      this.hiddenNote.hidden = false;
    }
    if (m.dropped) {
      this.droppedNote.hidden = false;
      this.droppedNote.textContent = `${fmt(m.dropped)} earlier lines are not kept in the page; download the full log for them`;
    }
  }

  matches(line) {
    return !this.filter || line.source === this.filter || !!line.hidden;
  }

  renderAll() {
    const m = this.model;
    m.takeDirty();
    const picked = [];
    let earlier = 0;
    for (let i = m.end - 1; i >= m.first; i--) {
      if (!this.matches(m.line(i))) continue;
      if (picked.length < this.windowLines) picked.push(i);
      else earlier++;
    }
    picked.reverse();
    this.nodes.clear();
    const frag = document.createDocumentFragment();
    for (const i of picked) this.place(frag, i, null);
    this.body.replaceChildren(frag);
    this.order = picked;
    this.hiddenAbove = earlier;
    this.renderedEnd = m.end;
    this.full = false;
    this.updateMore();
  }

  renderIncrement() {
    const m = this.model;
    for (const i of m.takeDirty()) {
      const node = this.nodes.get(i);
      if (node) this.fillLine(node, m.line(i));
    }
    const frag = document.createDocumentFragment();
    const before = this.body.lastElementChild; // a fold there goes on with this frame's notices
    for (let i = Math.max(this.renderedEnd, m.first); i < m.end; i++) {
      if (!this.matches(m.line(i))) continue;
      this.place(frag, i, before);
      this.order.push(i);
    }
    this.renderedEnd = m.end;
    this.body.append(frag);
    // Keep the page bounded: drop the oldest rendered lines (and any the model already dropped).
    let cut = 0;
    while (this.order.length - cut > this.windowLines || (cut < this.order.length && this.order[cut] < m.first)) cut++;
    if (cut) {
      for (const i of this.order.slice(0, cut)) {
        this.dropLine(this.nodes.get(i));
        this.nodes.delete(i);
      }
      this.order = this.order.slice(cut);
      this.hiddenAbove += cut;
    }
    this.updateMore();
  }

  updateMore() {
    this.moreButton.hidden = !this.hiddenAbove;
    if (this.hiddenAbove) this.moreButton.textContent = `show ${fmt(Math.min(MORE_STEP, this.hiddenAbove))} earlier lines (${fmt(this.hiddenAbove)} hidden)`;
  }

  makeLine(i) {
    const line = this.model.line(i);
    if (line.hidden) return this.makeMarker(i, line.hidden);
    const el = document.createElement("div");
    el.className = line.stream === "stderr" ? "line err" : line.stream === "system" ? "line sys" : "line";
    if (line.source !== "driver") {
      const tag = document.createElement("span");
      tag.className = "src";
      tag.textContent = line.source;
      el.append(tag);
    }
    el.append(document.createTextNode(""));
    el.dataset.source = line.source;
    this.nodes.set(i, el);
    this.fillLine(el, line);
    return el;
  }

  // Append line i to `frag`: a notice joins the fold it follows (the last one in `frag`, or
  // `before`, the body's last element, when `frag` is still empty), else starts one.
  place(frag, i, before) {
    const el = this.makeLine(i);
    if (!foldable(this.model.line(i))) {
      frag.append(el);
      return;
    }
    const tail = frag.lastElementChild || (frag.firstChild ? null : before);
    let fold = tail && tail.classList.contains("sys-fold") ? tail : null;
    if (!fold) {
      fold = this.makeFold(i);
      frag.append(fold);
    }
    fold.lastElementChild.append(el);
    this.updateFold(fold);
  }

  makeFold(first) {
    const summary = h("button.sys-summary", { type: "button", dataset: { action: "toggle-notices" },
      title: "Runtime notices (library start-up lines), not the cell's output" });
    const fold = h("div.sys-fold", { dataset: { role: "system-notices", first: String(first) } },
      summary, h("div.sys-lines"));
    summary.addEventListener("click", () => {
      const open = !this.openFolds.has(first);
      if (open) this.openFolds.add(first);
      else this.openFolds.delete(first);
      this.updateFold(fold);
    });
    return fold;
  }

  updateFold(fold) {
    const [summary, lines] = fold.children;
    const n = lines.childElementCount;
    const open = this.openFolds.has(Number(fold.dataset.first));
    fold.dataset.count = String(n);
    fold.classList.toggle("open", open);
    summary.hidden = n < FOLD_MIN;
    lines.hidden = n >= FOLD_MIN && !open;
    summary.textContent = `${open ? "▾" : "▸"} system notices (${fmt(n)})`;
  }

  dropLine(el) {
    if (!el) return;
    const fold = el.parentElement?.parentElement;
    el.remove();
    if (!fold?.classList.contains("sys-fold")) return;
    if (fold.lastElementChild.childElementCount) this.updateFold(fold);
    else fold.remove();
  }

  makeMarker(i, { bytes, url }) {
    const el = h("div.line.hidden-marker", { dataset: { role: "hidden-marker" } },
      h("span", { text: `… ${formatBytes(bytes)} hidden … ` }),
      url ? h("a", { href: url, download: "", dataset: { role: "download-log" }, text: "download the full log" }) : null);
    this.nodes.set(i, el);
    return el;
  }

  fillLine(el, line) {
    if (line.hidden) return;
    let text = line.text;
    if (text.length > MAX_LINE_CHARS) text = `${text.slice(0, MAX_LINE_CHARS)} … (${fmt(line.text.length - MAX_LINE_CHARS)} more characters)`;
    el.lastChild.data = text;
    if (line.stream === "stderr") el.classList.add("err");
  }

  refreshSources() {
    const have = new Set([...this.select.options].map((o) => o.value));
    for (const s of [...this.model.sources].sort()) {
      if (!have.has(s)) this.select.append(h("option", { value: s, text: s }));
    }
    this.knownSources = this.model.sources.size;
  }

  // The whole log as text, for "copy" and the download fallback.
  text() {
    const m = this.model;
    const out = [];
    for (let i = m.first; i < m.end; i++) out.push(m.line(i).text);
    return out.join("\n");
  }

  reset() {
    this.model.clear();
    this.filter = "";
    this.select.replaceChildren(h("option", { value: "", text: "all sources" }));
    this.knownSources = 0;
    this.openFolds.clear();
    this.windowLines = Math.min(this.windowLines, 400);
    this.hiddenAbove = 0;
    this.droppedNote.hidden = true;
    this.hiddenNote.hidden = true;
    this.shownHidden = 0;
    this.full = true;
    this.schedule();
  }
}
