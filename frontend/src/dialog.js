// Small in-page dialogs (ask for a name, confirm a delete) instead of window.prompt/confirm,
// which block the page, cannot be styled, and are awkward to drive from browser tests.

import { h } from "./dom.js";

function open(box, onKey) {
  const overlay = h("div.overlay.dialog", { dataset: { role: "dialog" } }, box);
  document.body.append(overlay);
  overlay.addEventListener("keydown", onKey);
  return overlay;
}

// Resolves with the entered text, or null when cancelled.
export function ask(title, value = "", { okText = "OK" } = {}) {
  return new Promise((resolve) => {
    const input = h("input", { value, dataset: { role: "dialog-input" }, "aria-label": title });
    const ok = h("button.primary", { type: "submit", text: okText, dataset: { role: "dialog-ok" } });
    const cancel = h("button", { type: "button", text: "Cancel", dataset: { role: "dialog-cancel" } });
    const form = h("form.overlay-box", {}, h("h2", { text: title }), input, h("div.dialog-buttons", {}, cancel, ok));
    const done = (v) => {
      overlay.remove();
      resolve(v);
    };
    const overlay = open(form, (e) => e.key === "Escape" && done(null));
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      done(input.value.trim() || null);
    });
    cancel.addEventListener("click", () => done(null));
    input.focus();
    input.select();
  });
}

export function confirmDialog(message, { okText = "Delete" } = {}) {
  return new Promise((resolve) => {
    const ok = h("button.danger", { type: "button", text: okText, dataset: { role: "dialog-ok" } });
    const cancel = h("button", { type: "button", text: "Cancel", dataset: { role: "dialog-cancel" } });
    const box = h("div.overlay-box", {}, h("p", { text: message }), h("div.dialog-buttons", {}, cancel, ok));
    const done = (v) => {
      overlay.remove();
      resolve(v);
    };
    const overlay = open(box, (e) => e.key === "Escape" && done(false));
    ok.addEventListener("click", () => done(true));
    cancel.addEventListener("click", () => done(false));
    ok.focus();
  });
}
