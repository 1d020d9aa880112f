// What a running Python cell holds on Ray, live: its job's actors, tasks and CPUs, from the
// `ray_usage` events the server relays (console/server/sessions/ray_usage.py; the cell's worker reads the
// cluster's GCS every ~1.5 s, console/worker/ray_usage.py). Shown under the cell's head while it
// runs; after it ends the last report stays, marked as the state when it ended. Not stored: a
// page opened later shows nothing for a past run.

import { h } from "./dom.js";

const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
const cpus = (n) => `${Number(n || 0).toFixed(n >= 10 ? 0 : 1)} CPU${n === 1 ? "" : "s"}`;

// One line: "2 actors alive, 1 pending · 5 tasks running, 3 finished · 1.0 CPU in use (cluster: 1.0 of 2 used)".
export function usageSummary(u) {
  const actors = [`${plural(u.actors_alive, "actor")} alive`];
  if (u.actors_pending) actors.push(`${u.actors_pending} pending`);
  if (u.actors_dead) actors.push(`${u.actors_dead} ended`);
  let tasks;
  if (u.tasks_running === null || u.tasks_running === undefined) tasks = "tasks not visible";
  else {
    tasks = [`${plural(u.tasks_running, "task")} running`];
    if (u.tasks_pending) tasks.push(`${u.tasks_pending} pending`);
    if (u.tasks_finished) tasks.push(`${u.tasks_finished} finished`);
    if (u.tasks_failed) tasks.push(`${u.tasks_failed} failed`);
    tasks = tasks.join(", ");
  }
  const cluster = u.cluster_cpus ? ` (cluster: ${Number(u.cluster_cpus_used).toFixed(1)} of ${cpus(u.cluster_cpus)} used)` : "";
  return `${actors.join(", ")} · ${tasks} · ${cpus(u.cpus_in_use)} in use${cluster}`;
}

export class RayUsageView {
  constructor() {
    this.summaryEl = h("span.ray-usage-summary", { dataset: { role: "ray-usage-summary" } });
    this.labelEl = h("strong", { text: "Ray" });
    this.details = h("div.ray-usage-details", { dataset: { role: "ray-usage-details" } });
    this.el = h("details.ray-usage", { dataset: { role: "ray-usage" }, hidden: true },
      h("summary", {}, this.labelEl, " ", this.summaryEl), this.details);
    this.runId = null;
  }

  // A report of run `runId`; running: whether the cell still runs (else it is its last word).
  show(ev, running) {
    const u = ev.usage || {};
    this.runId = ev.run_id;
    this.el.hidden = false;
    this.el.dataset.running = running ? "1" : "0";
    this.labelEl.textContent = running ? "Ray:" : "Ray, when the cell ended:";
    this.summaryEl.textContent = usageSummary(u);
    const actors = (u.actors || []).map((a) => h("li", { dataset: { role: "ray-actor", state: a.state } },
      `${a.class_name} — ${a.state}` + (a.node ? ` on ${a.node}` : "") + ` — ${cpus(a.cpus)}`));
    const tasks = (u.tasks || []).map((t) => h("li", { dataset: { role: "ray-task", state: t.state } },
      `${t.name} ×${t.count} — ${t.state}` + (t.node ? ` on ${t.node}` : "") + (t.cpus ? ` — ${cpus(t.cpus)} each` : "")));
    const listedActors = u.actors_alive + u.actors_pending + u.actors_dead;
    this.details.replaceChildren(...[
      actors.length ? h("div", {}, h("em", { text: listedActors > actors.length ? `Actors (first ${actors.length} of ${listedActors})` : "Actors" }), h("ul", {}, actors)) : null,
      tasks.length ? h("div", {}, h("em", { text: "Tasks" }), h("ul", {}, tasks)) : null,
      u.nodes && u.nodes.length ? h("div.muted", { text: `Nodes: ${u.nodes.join(", ")}` }) : null,
      u.note ? h("div.muted", { dataset: { role: "ray-usage-note" }, text: u.note }) : null,
    ].filter(Boolean)); // replaceChildren would write a null as the text "null"
  }

  // The cell stopped running: the last report stays, labelled as such.
  ended() {
    if (this.el.hidden || this.el.dataset.running !== "1") return;
    this.el.dataset.running = "0";
    this.labelEl.textContent = "Ray, when the cell ended:";
  }

  clear() {
    this.el.hidden = true;
    this.runId = null;
    this.details.replaceChildren();
  }
}
