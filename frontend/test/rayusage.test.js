import { test } from "node:test";
import assert from "node:assert/strict";
import { usageSummary } from "../src/rayusage.js";
import { rayText } from "../src/sessions.js";

const usage = {
  actors_alive: 2, actors_pending: 1, actors_dead: 0, tasks_running: 3, tasks_pending: 0, tasks_finished: 4,
  tasks_failed: 1, cpus_in_use: 1, cluster_cpus: 2, cluster_cpus_used: 1.5,
};

test("a running cell's Ray line counts actors and tasks by state, and CPUs", () => {
  assert.equal(usageSummary(usage),
    "2 actors alive, 1 pending · 3 tasks running, 4 finished, 1 failed · 1.0 CPU in use (cluster: 1.5 of 2.0 CPUs used)");
});

test("without task events the line says tasks are not visible rather than none", () => {
  const line = usageSummary({ ...usage, tasks_running: null, actors_pending: 0, actors_alive: 1, cluster_cpus: 0 });
  assert.equal(line, "1 actor alive · tasks not visible · 1.0 CPU in use");
});

test("the Running page's Ray column: actors, running tasks and CPUs, or a dash", () => {
  assert.equal(rayText(null), "—");
  assert.equal(rayText({ actors_alive: 2, actors_pending: 0, tasks_running: 1, cpus_in_use: 1 }),
    "2 actors, 1 task running, 1.0 CPU");
  assert.equal(rayText({ actors_alive: 1, actors_pending: 2, tasks_running: null, cpus_in_use: 0.5 }),
    "1 actor (+2 pending), 0.5 CPU");
});
