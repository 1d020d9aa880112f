// A drop-down menu of toolbar actions (<details>): the toolbar keeps the few everyday controls
// on one line from 1000 px up, and the rest are one click away. The items keep their own
// data-action / data-sec-action handlers; choosing one, Escape or a click elsewhere closes it.

import { h } from "./dom.js";

// listRole: the data-role of the list, where other modules add their items (the notebook's
// "More" list is data-role="sec-tools", which jobs.js appends Schedule… and Jobs to).
export function dropdown(label, title, items, role, listRole = "") {
  const summary = h("summary.button", { title, "aria-label": title, text: label });
  const list = h("div.menu-items", { role: "menu", dataset: listRole ? { role: listRole } : {} }, items);
  const el = h("details.menu", { dataset: { role } }, summary, list);
  list.addEventListener("click", (e) => {
    if (e.target.closest("button, a")) el.open = false;
  });
  el.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && el.open) {
      e.stopPropagation();
      el.open = false;
      summary.focus();
    }
  });
  document.addEventListener("click", (e) => {
    if (el.open && !el.contains(e.target)) el.open = false;
  });
  return el;
}
