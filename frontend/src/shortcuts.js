// Keyboard shortcuts: one table drives both the key handling and the help overlay, so the
// overlay cannot drift from what the keys do. Jupyter-style: keys typed in an editor go to the
// editor (except the run keys); with no editor focused, single keys act on the selected cell.

import { h } from "./dom.js";

// mode "edit": works inside the editor too; "command": only when no editor has focus.
export const SHORTCUTS = [
  { keys: "Shift-Enter", mode: "edit", action: "run-next", help: "run the cell, go to the next" },
  { keys: "Mod-Enter", mode: "edit", action: "run", help: "run the cell, stay" },
  { keys: "Alt-Enter", mode: "edit", action: "run-insert", help: "run the cell, insert one below" },
  { keys: "Mod-s", mode: "edit", action: "save", help: "save now" },
  { keys: "Escape", mode: "edit", action: "command-mode", help: "leave the editor (command mode)" },
  { keys: "Enter", mode: "command", action: "edit", help: "edit the selected cell" },
  { keys: "ArrowUp", alt: "k", mode: "command", action: "select-prev", help: "select the previous cell" },
  { keys: "ArrowDown", alt: "j", mode: "command", action: "select-next", help: "select the next cell" },
  { keys: "a", mode: "command", action: "insert-above", help: "insert a cell above" },
  { keys: "b", mode: "command", action: "insert-below", help: "insert a cell below" },
  { keys: "d d", mode: "command", action: "delete", help: "delete the cell" },
  { keys: "z", mode: "command", action: "undo-delete", help: "undo the last cell deletion" },
  { keys: "Shift-ArrowUp", mode: "command", action: "move-up", help: "move the cell up" },
  { keys: "Shift-ArrowDown", mode: "command", action: "move-down", help: "move the cell down" },
  { keys: "s", mode: "command", action: "kind-mlsql", help: "make it an MLSQL cell" },
  { keys: "y", mode: "command", action: "kind-python", help: "make it a Python cell" },
  { keys: "m", mode: "command", action: "kind-markdown", help: "make it a Markdown cell" },
  { keys: "r", mode: "command", action: "run-from", help: "run from this cell to the end" },
  { keys: "i i", mode: "command", action: "interrupt", help: "interrupt the kernel" },
  { keys: "0 0", mode: "command", action: "restart", help: "restart the kernel" },
  { keys: "Mod-f", mode: "command", action: "find", help: "find in all cells (in an editor: the browser's own)" },
  { keys: "Mod-h", mode: "edit", action: "find-replace", help: "find and replace in all cells" },
  { keys: "Mod-z", mode: "command", action: "undo-replace", help: "undo the last replacement" },
  { keys: "?", mode: "command", action: "help", help: "show or hide this help" },
];

// "Mod-Enter" etc. in CodeMirror's key syntax, for the editor's keymap.
export function editorBindings(run) {
  return SHORTCUTS.filter((s) => s.mode === "edit").map((s) => ({
    key: s.keys,
    preventDefault: true,
    run: () => {
      run(s.action);
      return true;
    },
  }));
}

// What command mode answers to: its own keys, plus the run and find keys (they work on a selected cell too).
const COMMAND_KEYS = SHORTCUTS.filter((s) => s.mode === "command" || s.action.startsWith("run") || s.action.startsWith("find"));

function keyName(e) {
  let name = e.key;
  if (e.shiftKey && name.length > 1) name = `Shift-${name}`;
  if (e.altKey) name = `Alt-${name}`;
  if (e.ctrlKey || e.metaKey) name = `Mod-${name}`;
  return name;
}

// Command-mode keys on the document; `act(action)` does the work. Returns a detach function.
export function bindCommandKeys(root, act, { inEditor }) {
  let previous = "";
  let previousAt = 0;
  const onKey = (e) => {
    const target = e.target;
    if (inEditor(target)) return; // the editor's keymap handles its own keys
    if (target.closest && target.closest("input, select, textarea, [contenteditable=true]")) return;
    const name = keyName(e);
    if (name === "Mod-s") {
      e.preventDefault();
      act("save");
      return;
    }
    const now = Date.now();
    const chord = now - previousAt < 800 ? `${previous} ${name}` : "";
    for (const s of COMMAND_KEYS) {
      if (s.keys === name || s.alt === name || s.keys === chord) {
        e.preventDefault();
        previous = "";
        act(s.action);
        return;
      }
    }
    previous = name;
    previousAt = now;
  };
  root.addEventListener("keydown", onKey);
  return () => root.removeEventListener("keydown", onKey);
}

export function helpOverlay() {
  const rows = SHORTCUTS.map((s) => h("tr", {},
    h("td", {}, h("kbd", { text: s.keys.replace(/Mod-/g, "Ctrl/⌘-") }), s.alt ? h("span", { text: " or " }) : null, s.alt ? h("kbd", { text: s.alt }) : null),
    h("td", { text: s.help }),
    h("td.mode", { text: s.mode === "edit" ? "anywhere" : "command mode" })));
  const close = h("button.close", { type: "button", text: "×", title: "Close", dataset: { action: "help-close" } });
  const el = h("div.overlay", { dataset: { role: "help" }, hidden: true },
    h("div.overlay-box", { role: "dialog", "aria-label": "Keyboard shortcuts" },
      h("div.overlay-head", {}, h("h2", { text: "Keyboard shortcuts" }), close),
      h("table.shortcuts", {}, h("tbody", {}, rows))));
  const toggle = (show = el.hidden) => {
    el.hidden = !show;
  };
  close.addEventListener("click", () => toggle(false));
  el.addEventListener("click", (e) => {
    if (e.target === el) toggle(false);
  });
  return { el, toggle };
}
