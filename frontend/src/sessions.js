// The Running page (/running): every live session the user may see (GET /api/sessions: the
// notebooks they may run; admins all), with who started it, who ran cells in it, its memory and
// CPU, its Ray actors and CPUs in use (the last report of a Ray cell, console/server/sessions/ray_usage.py),
// state and age, and "Shut down" where the user owns the notebook (POST .../stop). A notebook's
// session is shared by its runners, so stopping it stops it for everyone on its page.

import { h, keepDrawn, markDrawn } from "./dom.js";
import { confirmDialog } from "./dialog.js";

const enc = encodeURIComponent;

export function formatBytes(n) {
  if (n === null || n === undefined) return "—";
  const units = ["B", "KB", "MB", "GB", "TB"];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i += 1;
  }
  return `${v >= 10 || i === 0 ? Math.round(v) : v.toFixed(1)} ${units[i]}`;
}

export function formatAge(seconds) {
  if (seconds === null || seconds === undefined) return "—";
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

// The Ray column: the session's last Ray report, live while its cell runs, else as that cell ended.
export function rayText(ray) {
  if (!ray) return "—";
  const actors = `${ray.actors_alive} actor${ray.actors_alive === 1 ? "" : "s"}`
    + (ray.actors_pending ? ` (+${ray.actors_pending} pending)` : "");
  const tasks = ray.tasks_running === null || ray.tasks_running === undefined ? ""
    : `, ${ray.tasks_running} task${ray.tasks_running === 1 ? "" : "s"} running`;
  return `${actors}${tasks}, ${Number(ray.cpus_in_use || 0).toFixed(1)} CPU`;
}

// Where a session's Ray work runs, and who else's runs there (docs/security.md, Isolation).
export function clusterText(c) {
  if (!c) return "—";
  if (c.kind === "own") return c.up ? `its own (${formatBytes(c.memory_bytes)})` : "its own (not started)";
  if (c.kind === "shared") return "the shared head";
  if (c.kind === "team") return `team ${c.name}`;
  return "the server's cluster";
}

function clusterCell(c) {
  const title = !c ? "" : c.shared
    ? "Shared: every session on this cluster can reach the others' actors, objects and logs"
      + (c.address ? ` (${c.address})` : "")
    : "A Ray head of this session alone: no other session reaches its actors, objects or logs";
  return h("td", { dataset: { role: "session-cluster", kind: c ? c.kind : "" }, title, text: clusterText(c) });
}

function rayCell(ray) {
  const names = ray ? [...new Set((ray.actors || []).map((a) => a.class_name))].join(", ") : "";
  return h("td", { dataset: { role: "session-ray", running: ray && ray.running ? "1" : "0" },
    title: ray ? (ray.running ? "now, in the running cell" : "when its last Ray cell ended") + (names ? `: ${names}` : "") : "no Ray cell ran in this session" },
  rayText(ray), ray && !ray.running ? h("span.muted", { text: " (at its end)" }) : null);
}

export class SessionsPage {
  constructor(root, { api }) {
    this.root = root;
    this.api = api;
  }

  async start() {
    document.title = "Running · MLSQL Console";
    this.list = h("div.sessions-list", { dataset: { role: "sessions" } });
    this.note = h("p.muted", { text: "Sessions of the notebooks you may run. A notebook's session is shared by "
      + "everyone who runs it; shutting it down ends its kernel, its tables and variables for all of them." });
    this.root.replaceChildren(h("header.toolbar", {}, h("a.button", { href: "/", text: "← Workspace" }),
      h("h1.nb-name", { text: "Running sessions" })), h("main.jobs-page", {}, this.note, this.list));
    await this.refresh();
    this.root.dataset.ready = "1";
    this.timer = setInterval(() => this.refresh().catch(() => {}), 5000);
  }

  async refresh() {
    const { sessions } = await this.api.request("GET", "/sessions");
    this.latest = new Map(sessions.map((s) => [s.notebook_id, s]));
    if (!sessions.length) {
      this.body = null;
      this.rows = new Map();
      this.list.replaceChildren(h("p.muted", { dataset: { role: "no-sessions" }, text: "No session is running." }));
      return;
    }
    if (!this.body || !this.list.contains(this.body)) {
      const head = h("tr", {}, ["Notebook", "Started by", "Ran cells", "State", "Started", "Idle", "Memory", "CPU", "Ray", "Ray cluster", ""]
        .map((t) => h("th", { text: t })));
      this.body = h("tbody");
      this.rows = new Map();
      this.list.replaceChildren(h("table.sessions", {}, h("thead", {}, head), this.body));
    }
    // Rows and cells are kept and only a cell whose drawing changed is replaced (the idle time,
    // every refresh): rebuilding the table every 5 s took a hover, a text selection or a press on
    // "Shut down" away from under the user (keepDrawn).
    const rows = sessions.map((s) => {
      const fresh = this.row(s);
      const old = this.rows.get(s.notebook_id);
      if (!old) {
        [...fresh.children].forEach(markDrawn);
        return fresh;
      }
      keepDrawn(old, [...fresh.children]);
      return old;
    });
    this.rows = new Map(sessions.map((s, i) => [s.notebook_id, rows[i]]));
    if (rows.some((row, i) => this.body.children[i] !== row) || this.body.children.length !== rows.length) {
      this.body.replaceChildren(...rows);
    }
  }

  row(s) {
    const started = s.started_at ? new Date(s.started_at * 1000).toLocaleString() : "—";
    const state = s.running_cell ? `${s.status}: a cell by ${s.running_by}` + (s.queued ? `, ${s.queued} queued` : "")
      : s.status;
    // A kept button asks for the session as the last refresh saw it (its notebook's name may change).
    const stop = s.can_stop ? h("button", { type: "button", text: "Shut down", dataset: { role: "session-stop" },
      onclick: () => this.stop(this.latest.get(s.notebook_id) || s) }) : null;
    return h("tr", { dataset: { role: "session", notebookId: s.notebook_id } },
      h("td", {}, h("a", { href: `/notebooks/${enc(s.notebook_id)}`, text: s.notebook }),
        s.job ? h("span.muted", { text: " (job)" }) : null),
      h("td", { dataset: { role: "session-starter" }, text: s.started_by?.name || "—" }),
      h("td", { text: (s.runners || []).map((r) => r.name).join(", ") || "—" }),
      h("td", { dataset: { role: "session-state" }, text: state }),
      h("td", { text: started }),
      h("td", { dataset: { role: "session-idle" }, text: formatAge(s.idle_seconds) }),
      h("td", { dataset: { role: "session-memory" }, text: formatBytes(s.memory_bytes) }),
      h("td", { text: s.cpu_seconds === null || s.cpu_seconds === undefined ? "—" : `${s.cpu_seconds.toFixed(1)} s` }),
      rayCell(s.ray),
      clusterCell(s.cluster),
      h("td", {}, stop));
  }

  async stop(s) {
    const ok = await confirmDialog(`Shut down the session of “${s.notebook}”? Its kernel stops: the tables, variables `
      + "and Python state of everyone running this notebook are gone. Saved notebooks and outputs are kept.",
    { okText: "Shut down" });
    if (!ok) return;
    await this.api.request("POST", `/sessions/${enc(s.notebook_id)}/stop`, {});
    await this.refresh();
  }
}
