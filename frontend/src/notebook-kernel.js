// The notebook page's kernel: its badge on the toolbar, the card shown when it died, Restart (which
// asks first), and the banners that tell everyone on the shared session who restarted,
// interrupted or shut it down. page: the NotebookPage (its root, banners, role, config, live
// channel, and the badge and card made here).

import { h } from "./dom.js";
import { allows } from "./roles.js";
import { confirmDialog } from "./dialog.js";

const KERNEL_TEXT = { starting: "kernel starting", idle: "kernel idle", busy: "kernel busy", dead: "kernel dead", none: "no kernel" };

export function kernelBadge() {
  return h("span.kernel", { dataset: { role: "kernel", status: "none" }, text: KERNEL_TEXT.none });
}

export function kernelCard() {
  return h("div.kernel-card", { dataset: { role: "kernel-dead" }, hidden: true });
}

// Restart asks first (it clears the session), then says when the new kernel is ready.
export async function restartKernel(page) {
  // A dead kernel has nothing left to clear: its card's button starts a new one at once.
  const ok = page.root.dataset.kernel === "dead" || await confirmDialog("Restart the kernel? This clears the session's tables, variables and "
    + "Python state (globals, Ray actors kept by them). Saved notebooks and outputs are kept.", { okText: "Restart" });
  if (!ok) return;
  page.restarting = true;
  page.banners.show("restart", "Restarting the kernel…", [], "info");
  page.live.restart();
}

export function onKernel(page, ev) {
  if (ev.user_id !== undefined && ev.user_id !== null && page.config.userId && String(ev.user_id) !== page.config.userId) return;
  if (ev.action) sayKernelAction(page, ev);
  const status = ev.status || "none";
  if (page.restarting && status === "idle") {
    page.restarting = false;
    page.banners.show("restart", "Kernel restarted: a fresh session (no tables, variables or Python state).", [], "info");
    setTimeout(() => page.banners.hide("restart"), 6000);
  }
  page.kernelBadge.dataset.status = status;
  page.kernelBadge.textContent = KERNEL_TEXT[status] || status;
  page.root.dataset.kernel = status;
  if (status === "dead") {
    page.kernelCard.replaceChildren(
      h("strong", { text: "The kernel stopped." }),
      h("span", { text: ` ${ev.reason || "It exited without saying why."} Tables and variables of this session are gone; saved notebooks and outputs are kept.` }),
      allows(page.role, "restart") ? h("button", { type: "button", dataset: { action: "restart" }, text: "Start a new kernel" }) : null);
    page.kernelCard.hidden = false;
  } else if (status === "starting" || status === "idle") {
    page.kernelCard.hidden = true;
  }
}

// The session is shared: whoever restarts, interrupts or shuts it down, everyone on the page is told.
function sayKernelAction(page, ev) {
  const by = ev.by || "someone";
  const text = { restart: `${by} restarted the kernel: the session's tables and variables are gone.`,
    interrupt: `${by} interrupted the kernel.`,
    shutdown: `${by} shut the session down; the next run starts a new kernel.` }[ev.action];
  if (!text) return;
  page.banners.show("kernel-action", text, [], ev.action === "interrupt" ? "info" : "warning");
  setTimeout(() => page.banners.hide("kernel-action"), 8000);
}
