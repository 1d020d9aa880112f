// The notebook page's toolbar: one line from 1000 px up (style.css .toolbar). The everyday
// controls stay on it (Run all, Stop, Restart, Data, who is here, the kernel, Share, History);
// the rest is in its More menu (menu.js), whose list other modules add to (data-role=sec-tools).

import { h } from "./dom.js";
import { dropdown } from "./menu.js";
import { notebookMenu } from "./notebook-menu.js";
import { allows, needs } from "./roles.js";

export function actionButton(action, text, title) {
  return h("button", { type: "button", dataset: { action, needs: needs(action) }, title, text });
}

// page: the NotebookPage (its api, id, banners, role, saver, badges, title and presence).
export function notebookToolbar(page) {
  const btn = actionButton;
  // The notebook's own actions (notebook-menu.js): Share and History here, the rest in "More".
  const nbMenu = notebookMenu(page.api, page.id, {
    onRestored: () => location.reload(),
    onError: (err) => page.banners.show("sharing", err.message),
    canRestore: () => allows(page.role, "restore"),
    flush: () => page.saver.flush(), // the name and views; the server stores the live cells itself
  });
  const more = dropdown("More ▾", "More actions", [
    btn("clear-all", "Clear all outputs", "Clear every cell's output (an editor's clear is stored; others clear this page only)"),
    h("a.button", { href: `${page.api.exportUrl(page.id)}?outputs=1`, download: "", title: "Download as a notebook file (with outputs)", text: "Export notebook" }),
    ...nbMenu.items,
    btn("find-replace", "Find and replace (Ctrl-H)", "Find and replace in all cells"),
    btn("help", "Keyboard shortcuts (?)", "Keyboard shortcuts"),
    nbMenu.account,
  ], "more", "sec-tools");
  return h("header.toolbar", {},
    h("a.home", { href: "/", title: "Workspace", "aria-label": "Workspace" }, h("span.logo", { text: "◧" }), h("span.home-text", { text: " MLSQL Console" })),
    page.titleInput, page.saveState,
    h("span.spacer"),
    btn("run-all", "▶▶ Run all", "Run every cell; stops at the first that fails"),
    btn("interrupt", "■ Stop", "Interrupt the running cell (i i)"),
    btn("restart", "↻ Restart", "Restart the kernel (0 0)"),
    btn("outline", "Outline", "The notebook's headings and cells: jump to one, fold a section"),
    btn("data-panel", "Data", "The lake: tables, their history, files, and uploads"),
    page.presence.el, page.kernelBadge, page.connBadge,
    nbMenu.tools, more);
}
