// Who is here: one avatar per user in the toolbar (initial, colour, the cell they are in), and
// the same people as coloured dots on the cells they are in. Fed by the shared document's
// Awareness (coedit.js); each state is {user: {id, name, color}, cell}.

import { h } from "./dom.js";

const PALETTE = ["#d9480f", "#1971c2", "#2f9e44", "#9c36b5", "#e8590c", "#0c8599", "#c2255c", "#5f3dc4"];

export function colourFor(userId) {
  let hash = 0;
  for (const ch of String(userId)) hash = (hash * 31 + ch.charCodeAt(0)) >>> 0;
  const color = PALETTE[hash % PALETTE.length];
  return { color, colorLight: `${color}33` };
}

export class Presence {
  // onCells(Map cellId -> [{name, color}]) draws the dots on the cells.
  constructor({ cellLabel, onCells }) {
    this.el = h("div.presence", { dataset: { role: "presence" }, "aria-label": "Who is here" });
    this.cellLabel = cellLabel || ((id) => id);
    this.onCells = onCells || (() => {});
  }

  watch(awareness) {
    this.awareness = awareness;
    const draw = () => this.draw();
    awareness.on("change", draw);
    draw();
  }

  draw() {
    if (!this.awareness) return;
    const users = new Map(); // user id -> {name, color, cells: Set, self}
    const selfId = this.awareness.clientID;
    for (const [clientId, state] of this.awareness.getStates()) {
      const u = state && state.user;
      if (!u || !u.name) continue;
      const key = String(u.id ?? u.name);
      const entry = users.get(key) || { name: u.name, color: u.color, cells: new Set(), self: false };
      if (state.cell) entry.cells.add(state.cell);
      if (clientId === selfId) entry.self = true;
      users.set(key, entry);
    }
    const byCell = new Map();
    const avatars = [];
    for (const u of users.values()) {
      for (const c of u.cells) {
        if (!byCell.has(c)) byCell.set(c, []);
        if (!u.self) byCell.get(c).push({ name: u.name, color: u.color });
      }
      const where = [...u.cells].map((c) => this.cellLabel(c)).filter(Boolean);
      const el = h("span.avatar", {
        dataset: { role: "avatar", user: u.name, cells: [...u.cells].join(" "), self: u.self ? "1" : "0" },
        title: `${u.name}${u.self ? " (you)" : ""}${where.length ? ` — in ${where.join(", ")}` : ""}`,
        text: initials(u.name),
      });
      el.style.backgroundColor = u.color || "#888";
      avatars.push(el);
    }
    this.el.replaceChildren(...avatars);
    this.el.dataset.count = String(avatars.length);
    this.onCells(byCell);
  }
}

function initials(name) {
  const parts = String(name).trim().split(/[\s._-]+/).filter(Boolean);
  return ((parts[0] || "?")[0] + (parts[1] ? parts[1][0] : "")).toUpperCase();
}
