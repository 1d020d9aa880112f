// Comments on cells (issue 34): a button on each cell's header with the count of open threads,
// opening a panel under the cell with its threads (the quoted text a thread is anchored to, the
// comments, Resolve/Reopen, a reply box, Edit and Delete on one's own) and a box for a new thread,
// anchored to the text selected in the cell's editor when there is a selection. Threads of a cell
// the notebook no longer has are listed below the cells, "on a deleted cell".
//
// Anyone who may read the notebook comments (viewers too); the server decides who may do what
// (console/server/api/comments.py), the page only leaves out Edit and Delete on others' comments.
// Every text goes in through textContent (dom.js h). The list is read again over REST when the
// notebook's room says `comments_changed` (notebook-live.js turns it into a "comments-changed"
// event on the page's root) and when the page (re)joins the room; what is being typed survives that.

import { h } from "./dom.js";
import {
  anchorFrom, groupThreads, newThreadBody, openCount, replyBody, shortQuote, textProblem, toggleLabel, when,
} from "./commentmodel.js";

const enc = encodeURIComponent;

export async function attachComments(page, api) {
  if (!(await page.loaded)) return null;
  const comments = new Comments(page, api);
  page.comments = comments; // tests read it
  await comments.load().catch(() => {});
  return comments;
}

// Keys typed in the panel are the panel's: the notebook's command keys (a, b, d d...) must not act.
function ownKeys(el, onEscape) {
  el.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && onEscape) {
      e.preventDefault();
      onEscape();
    }
    e.stopPropagation();
  });
}

export class Comments {
  constructor(page, api) {
    this.page = page;
    this.api = api;
    this.threads = [];
    this.views = new Map(); // cell id -> {cell, button, count, panel, open, anchor}
    this.editing = null; // the id of the comment whose text is being edited here
    this.loading = null;
    this.again = false;
    this.orphans = h("section.comment-orphans", { dataset: { role: "comment-orphans" }, hidden: true,
      "aria-label": "Comments on deleted cells" });
    ownKeys(this.orphans);
    page.cellList.after(this.orphans);
    this.decorate();
    page.root.addEventListener("cells-changed", () => {
      this.decorate();
      this.render();
    });
    page.root.addEventListener("comments-changed", () => this.load().catch(() => {}));
    page.root.addEventListener("live-joined", () => this.load().catch(() => {}));
  }

  url(path = "") {
    return `/notebooks/${enc(this.page.id)}/comments${path}`;
  }

  // One request at a time; a change told while one is in flight reads again after it.
  async load() {
    if (this.loading) {
      this.again = true;
      return this.loading;
    }
    this.loading = (async () => {
      try {
        do {
          this.again = false;
          const res = await this.api.request("GET", this.url());
          this.threads = res.threads || [];
          this.render();
        } while (this.again);
      } finally {
        this.loading = null;
      }
    })();
    return this.loading;
  }

  // Give each cell on the page its button and panel (a cell drawn anew gets new ones).
  decorate() {
    for (const [id, cell] of this.page.cells) {
      const view = this.views.get(id);
      if (!view || view.cell !== cell) this.views.set(id, this.makeView(cell));
    }
    for (const id of [...this.views.keys()]) if (!this.page.cells.has(id)) this.views.delete(id);
  }

  makeView(cell) {
    const count = h("span.comment-count", { dataset: { role: "comment-count" }, "aria-hidden": "true" });
    const button = h("button.icon.comment-toggle", { type: "button", title: "Comments", "aria-label": toggleLabel([]),
      "aria-expanded": "false", dataset: { role: "comments-toggle" } }, "❝", count);
    const panel = h("div.comment-panel", { dataset: { role: "comment-panel" }, hidden: true, role: "region",
      "aria-label": "Comments on this cell" });
    const view = { cell, button, count, panel, open: false, anchor: null };
    const head = cell.el.querySelector(".cell-head");
    head.insertBefore(button, cell.peersEl ? cell.peersEl.nextSibling : null);
    cell.el.append(panel);
    button.addEventListener("click", () => this.toggle(cell.id));
    const close = () => {
      this.toggle(cell.id, false);
      button.focus();
    };
    ownKeys(button);
    ownKeys(panel, close);
    return view;
  }

  // Open or close a cell's panel; opening takes the editor's selection as the new thread's anchor.
  toggle(cellId, open) {
    const view = this.views.get(cellId);
    if (!view) return;
    view.open = open === undefined ? !view.open : open;
    view.button.setAttribute("aria-expanded", String(view.open));
    view.panel.hidden = !view.open;
    if (view.open) {
      const editor = view.cell.editor;
      view.anchor = anchorFrom(view.cell.source, editor && editor.selection ? editor.selection() : null);
      this.renderPanel(view);
      view.panel.querySelector("[data-role=comment-text]")?.focus();
    }
  }

  render() {
    const { byCell, orphans } = groupThreads(this.threads, (id) => this.page.cells.has(id));
    for (const [id, view] of this.views) {
      const threads = byCell.get(id) || [];
      const open = openCount(threads);
      view.count.textContent = open ? String(open) : "";
      view.button.setAttribute("aria-label", toggleLabel(threads));
      view.button.title = toggleLabel(threads);
      view.cell.el.dataset.comments = String(open);
      if (view.open) this.renderPanel(view, threads);
    }
    this.renderOrphans(orphans);
  }

  threadsOf(cellId) {
    return groupThreads(this.threads, (id) => this.page.cells.has(id)).byCell.get(cellId) || [];
  }

  // Drafts and focus survive a redraw: each text box has a key.
  redraw(container, build) {
    const drafts = new Map();
    let focused = null;
    for (const box of container.querySelectorAll("textarea[data-draft]")) {
      drafts.set(box.dataset.draft, box.value);
      if (box === document.activeElement) focused = box.dataset.draft;
    }
    container.replaceChildren(...build());
    for (const box of container.querySelectorAll("textarea[data-draft]")) {
      if (drafts.has(box.dataset.draft)) box.value = drafts.get(box.dataset.draft);
      if (box.dataset.draft === focused) box.focus();
    }
  }

  renderPanel(view, threads = this.threadsOf(view.cell.id)) {
    this.redraw(view.panel, () => [
      h("div.comment-error", { dataset: { role: "comment-error" }, role: "alert", hidden: true }),
      ...threads.map((t) => this.threadEl(t, view.panel)),
      this.newThreadEl(view),
    ]);
  }

  renderOrphans(orphans) {
    this.orphans.hidden = !orphans.length;
    this.redraw(this.orphans, () => orphans.length ? [
      h("h3", { text: "Comments on deleted cells" }),
      h("div.comment-error", { dataset: { role: "comment-error" }, role: "alert", hidden: true }),
      ...orphans.map((t) => this.threadEl(t, this.orphans, true)),
    ] : []);
  }

  newThreadEl(view) {
    const box = h("textarea.comment-input", { rows: 2, placeholder: "Comment on this cell…", maxLength: 10000,
      "aria-label": "New comment on this cell", dataset: { role: "comment-text", draft: "new" } });
    const send = h("button.primary", { type: "button", text: "Comment", dataset: { role: "comment-send" } });
    const submit = () => this.send(view.panel, box, () => this.api.request("POST", this.url(),
      newThreadBody(view.cell.id, box.value, view.anchor)), () => { view.anchor = null; });
    send.addEventListener("click", submit);
    submitOnModEnter(box, submit);
    const anchorLine = view.anchor ? h("div.comment-anchor-note", { dataset: { role: "comment-anchor" } },
      "On the selected text: ", h("q", { text: shortQuote(view.anchor.quote) }), " ",
      h("button.link", { type: "button", text: "comment on the whole cell instead", onclick: () => {
        view.anchor = null;
        this.renderPanel(view);
      } })) : null;
    return h("div.comment-new", {}, anchorLine, box, h("div.comment-buttons", {}, send,
      h("span.muted", { text: "Ctrl+Enter sends, Esc closes" })));
  }

  threadEl(t, container, orphan = false) {
    const comments = [t, ...(t.replies || [])];
    const state = t.resolved ? "resolved" : "open";
    const resolve = h("button", { type: "button", text: t.resolved ? "Reopen" : "Resolve",
      dataset: { role: t.resolved ? "thread-reopen" : "thread-resolve" } });
    resolve.addEventListener("click", () => this.act(container, () => this.api.request("PATCH", this.url(`/${enc(t.id)}`),
      { resolved: !t.resolved })));
    const reply = h("textarea.comment-input", { rows: 1, placeholder: "Reply…", maxLength: 10000,
      "aria-label": "Reply to this thread", dataset: { role: "reply-text", draft: `reply:${t.id}` } });
    const replySend = h("button", { type: "button", text: "Reply", dataset: { role: "reply-send" } });
    const submit = () => this.send(container, reply, () => this.api.request("POST", this.url(), replyBody(t.id, reply.value)));
    replySend.addEventListener("click", submit);
    submitOnModEnter(reply, submit);
    const status = t.resolved
      ? h("span.comment-status", { text: `Resolved${t.resolved_by_name ? ` by ${t.resolved_by_name}` : ""}` }) : null;
    return h("article.comment-thread", { dataset: { threadId: t.id, state, role: "comment-thread" },
      "aria-label": `Comment thread${t.resolved ? " (resolved)" : ""}` },
    orphan ? h("div.comment-orphan", { dataset: { role: "comment-orphan" }, text: "on a deleted cell" }) : null,
    t.anchor ? h("blockquote.comment-quote", { dataset: { role: "comment-quote" }, text: shortQuote(t.anchor.quote, 300) }) : null,
    ...comments.map((c) => this.commentEl(c, container)),
    h("div.comment-buttons", {}, status, resolve),
    t.resolved ? null : h("div.comment-reply", {}, reply, replySend));
  }

  commentEl(c, container) {
    const meta = h("div.comment-meta", {},
      h("strong", { dataset: { role: "comment-author" }, text: c.author || "a deleted account" }),
      h("time", { dateTime: c.created_at, title: new Date(c.created_at).toLocaleString(), text: when(c.created_at) }),
      c.edited_at ? h("span.muted", { text: "(edited)" }) : null);
    if (c.deleted) {
      return h("div.comment.deleted", { dataset: { commentId: c.id } }, h("em.muted", { text: "This comment was deleted." }));
    }
    if (this.editing === c.id) {
      const box = h("textarea.comment-input", { rows: 3, maxLength: 10000, "aria-label": "Edit your comment",
        dataset: { role: "comment-edit-text", draft: `edit:${c.id}` } });
      box.value = c.text;
      const save = h("button.primary", { type: "button", text: "Save", dataset: { role: "comment-save" } });
      const done = () => {
        this.editing = null;
        this.render();
      };
      const submit = () => this.send(container, box, () => this.api.request("PATCH", this.url(`/${enc(c.id)}`),
        { text: box.value }), done);
      save.addEventListener("click", submit);
      submitOnModEnter(box, submit);
      return h("div.comment", { dataset: { commentId: c.id } }, meta, box, h("div.comment-buttons", {}, save,
        h("button", { type: "button", text: "Cancel", dataset: { role: "comment-cancel" }, onclick: done })));
    }
    const own = c.mine ? [
      h("button.link", { type: "button", text: "Edit", dataset: { role: "comment-edit" }, onclick: () => {
        this.editing = c.id;
        this.render();
        container.querySelector(`textarea[data-draft="edit:${CSS.escape(c.id)}"]`)?.focus();
      } }),
      h("button.link", { type: "button", text: "Delete", dataset: { role: "comment-delete" }, onclick: () => {
        if (!confirm("Delete this comment?")) return;
        this.act(container, () => this.api.request("DELETE", this.url(`/${enc(c.id)}`)));
      } }),
    ] : [];
    return h("div.comment", { dataset: { commentId: c.id, mine: c.mine ? "1" : "" } }, meta,
      h("div.comment-text", { dataset: { role: "comment-text-shown" }, text: c.text }),
      own.length ? h("div.comment-own", {}, ...own) : null);
  }

  // A text box's request: checked first, the box emptied once the server took it (before the
  // list is drawn again, which would keep what the box held as a draft). The list may already have
  // been drawn again while the request was out (the server's comment event can come before its
  // answer), carrying the text over into a new box as its draft: whichever box holds it now is emptied.
  async send(container, box, request, after) {
    const problem = textProblem(box.value);
    if (problem) return this.fail(container, problem);
    const key = box.dataset.draft;
    await this.act(container, request, () => {
      box.value = "";
      for (const now of container.querySelectorAll(`textarea[data-draft="${CSS.escape(key)}"]`)) now.value = "";
      after?.();
    });
  }

  async act(container, request, done) {
    try {
      await request();
    } catch (err) {
      this.fail(container, err.message || String(err));
      return;
    }
    done?.();
    await this.load().catch(() => {});
  }

  fail(container, message) {
    const el = container.querySelector("[data-role=comment-error]");
    if (!el) return;
    el.hidden = false;
    el.textContent = message;
  }
}

function submitOnModEnter(box, submit) {
  box.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      submit();
    }
  });
}
