// A closable panel on the page's overlay (the same look as dialog.js), for the share dialog,
// link management and the revisions panel. Content is built with h(): text only, never HTML.

import { h } from "./dom.js";

export function openPanel(title, role) {
  const body = h("div.panel-body");
  const close = h("button.close", { type: "button", title: "Close", text: "×", dataset: { secAction: "close" } });
  const box = h("div.overlay-box.panel", {}, h("div.overlay-head", {}, h("h2", { text: title }), close), body);
  const overlay = h("div.overlay", { dataset: { role } }, box);
  const done = () => overlay.remove();
  close.addEventListener("click", done);
  overlay.addEventListener("keydown", (e) => e.key === "Escape" && done());
  overlay.addEventListener("click", (e) => e.target === overlay && done());
  document.body.append(overlay);
  close.focus();
  return { overlay, body, close: done };
}

export function errorLine(err) {
  return h("p.panel-error", { role: "alert", text: err && err.message ? err.message : String(err) });
}

export function when(iso) {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? String(iso) : d.toLocaleString();
}
