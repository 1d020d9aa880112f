// Jobs in the browser: the Jobs page (/jobs: each job's next firing, last status, enable/disable,
// run now, and its run history with outputs), and what a notebook page gains from them
// (attachJobs): "Schedule…" beside Share and History, the parameter form above the cells, and
// "run by job <name>" in the header of cells whose shown output a job made (cell.js showRunBy).

import { h, emit } from "./dom.js";
import { openScheduleDialog } from "./jobs-dialog.js";
import { CellOutput } from "./output.js";
import { allows } from "./roles.js";
import { EVENT } from "./wire-names.js";
import { compareJobRuns } from "./rundetails.js";
import { connectJobs } from "./socket.js";

const enc = encodeURIComponent;

export function when(iso) {
  if (!iso) return "—";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

export class JobsPage {
  constructor(root, { api }) {
    this.root = root;
    this.api = api;
    this.open = new Set(new URLSearchParams(location.search).getAll("job"));
    this.openRuns = new Set(); // job runs whose details are open: a refresh keeps them open
    this.shut = new Set(); // cell runs whose output was folded
    this.views = new Map(); // cell run id -> {status, el}: an ended run's output is drawn once
    this.compared = new Map(); // job run id -> the comparison the user asked for: a refresh keeps it
    this.runViews = new Map(); // job run id -> {key, el}: the row on screen, kept while the run is unchanged
  }

  async start() {
    document.title = "Jobs · MLSQL Console";
    this.list = h("div.jobs-list", { dataset: { role: "jobs" } });
    this.root.replaceChildren(h("header.toolbar", {}, h("a.button", { href: "/", text: "← Workspace" }),
      h("h1.nb-name", { text: "Jobs" })), h("main.jobs-page", {}, this.list));
    await this.refresh();
    this.root.dataset.ready = "1";
    // Live: the server says when a job or one of its runs changed (jobs_changed), and the list is
    // read again then. Polled only while the socket is down, slowly.
    this.live = connectJobs({
      onChanged: () => this.soon(),
      onWatching: () => {
        this.root.dataset.live = "1";
        this.soon(); // what changed while it was not watching
      },
      onLost: () => delete this.root.dataset.live,
    });
    this.timer = setInterval(() => {
      if (!this.live.watching) this.soon();
    }, 60000);
  }

  // One refresh at a time: changes told while one runs make one more after it.
  soon() {
    if (this.refreshing) {
      this.again = true;
      return;
    }
    this.refreshing = this.refresh().catch(() => {}).finally(() => {
      this.refreshing = null;
      if (this.again) {
        this.again = false;
        this.soon();
      }
    });
  }

  // Everything is read first and drawn in one step: what the user opened, folded or compared while
  // the requests were on their way is on the page when it is drawn, and a run that did not change
  // keeps its element (its open details, its comparison, its folded outputs) instead of a copy.
  async refresh() {
    const { jobs } = await this.api.request("GET", "/jobs");
    const histories = await Promise.all(jobs.map((job) => (this.open.has(job.id)
      ? this.api.request("GET", `/jobs/${enc(job.id)}/runs?limit=20`).then((answer) => answer.runs)
      : null)));
    this.draw(jobs, histories);
  }

  draw(jobs, histories) {
    if (!jobs.length) {
      this.list.replaceChildren(h("p.muted", { text: "No jobs yet: open a notebook and choose Schedule…" }));
      return;
    }
    // Toggle events come after the click: the page as it is now says which runs are open.
    for (const d of this.list.querySelectorAll("details[data-role=job-run]")) {
      if (d.open) this.openRuns.add(d.dataset.runId);
      else this.openRuns.delete(d.dataset.runId);
    }
    const shown = this.runViews;
    this.runViews = new Map();
    this.list.replaceChildren(...jobs.map((job, i) => this.jobRow(job, histories[i], shown)));
  }

  jobRow(job, runs, shown) {
    const last = job.last_run;
    const act = (text, role, fn) => h("button", { type: "button", text, dataset: { role },
      onclick: () => fn().then(() => this.soon()).catch((err) => alert(err.message)) });
    const history = h("div.job-history", { dataset: { role: "job-history" } });
    if (runs) {
      history.replaceChildren(...runs.map((r, i) => this.runRow(r, runs[i + 1], shown)));
      if (!runs.length) history.replaceChildren(h("p.muted", { text: "No runs yet." }));
    }
    return h("section.job", { dataset: { role: "job", jobId: job.id, enabled: String(job.enabled) } },
      h("div.job-head", {},
        h("strong", { text: job.name }), " · ",
        h("a", { href: `/notebooks/${enc(job.notebook_id)}`, text: job.notebook_name || job.notebook_id }),
        h("span.job-sched", { text: ` · ${job.schedule.description}` }),
        h("span.job-next", { dataset: { role: "job-next" }, text: job.enabled ? ` · next: ${job.schedule.readable[0] || "—"}` : " · disabled" }),
        h("span.job-status", { dataset: { role: "job-last-status", status: last ? last.status : "" },
          text: last ? ` · last: ${last.status}` : " · never ran" }),
        h("span.spacer"),
        act(job.enabled ? "Disable" : "Enable", "job-toggle",
          () => this.api.request("PATCH", `/jobs/${enc(job.id)}`, { enabled: !job.enabled })),
        act("Run now", "job-run-now", () => this.api.request("POST", `/jobs/${enc(job.id)}/run`, {})),
        h("button", { type: "button", text: "History", dataset: { role: "job-history-toggle" }, onclick: () => {
          if (this.open.has(job.id)) this.open.delete(job.id);
          else this.open.add(job.id);
          this.soon(); // after any refresh on its way, which was read without this change
        } })),
      job.disabled_reason ? h("p.job-why", { text: job.disabled_reason }) : null,
      history);
  }

  // A run's row is built again only when what it shows changed (the run itself, or the run before
  // it, which its comparison reads).
  runRow(r, before, shown) {
    const key = JSON.stringify([r, before ? before.id : null, before ? before.outputs.length : 0]);
    const kept = shown.get(r.id);
    if (kept && kept.key === key) {
      this.runViews.set(r.id, kept);
      return kept.el;
    }
    const run = h("details.job-run", { dataset: { role: "job-run", status: r.status, trigger: r.trigger, runId: r.id },
      open: this.openRuns.has(r.id) },
    h("summary", {}, `${when(r.started_at || r.created_at)} · ${r.trigger}${r.attempt > 1 ? ` #${r.attempt}` : ""} · `,
      h("span", { dataset: { status: r.status }, text: r.status }),
      r.status === "queued" && r.not_before ? ` · starts after ${when(r.not_before)}` : "",
      ` · ${Object.entries(r.params).map(([k, v]) => `${k}=${v}`).join(", ") || "defaults"}`,
      r.revision ? ` · revision ${r.revision}` : "", r.error ? h("span.job-bad", { text: ` · ${r.error}` }) : null),
    r.webhook ? h("p.muted", { text: `webhook ${r.webhook.delivered ? "delivered" : "not delivered"} (${r.webhook.attempts.length} attempt(s))` }) : null,
    this.compareButton(r, before),
    ...r.outputs.map((o) => this.cellOutput(o)));
    run.addEventListener("toggle", () => (run.open ? this.openRuns.add(r.id) : this.openRuns.delete(r.id)));
    this.runViews.set(r.id, { key, el: run });
    return run;
  }

  // What changed since the job's run before this one (rundetails.js): parameters, revision, inputs, results.
  compareButton(run, before) {
    if (!before || !run.outputs.length || !before.outputs.length) return null;
    const out = h("div", { dataset: { role: "job-run-compare", runId: run.id } });
    if (this.compared.has(run.id)) out.replaceChildren(this.compared.get(run.id));
    // The answer goes to the row on screen when it comes: a refresh may have replaced the one clicked.
    const show = (view) => {
      this.compared.set(run.id, view);
      const now = [...this.list.querySelectorAll("[data-role=job-run-compare]")].find((o) => o.dataset.runId === run.id);
      (now || out).replaceChildren(view);
    };
    const button = h("button", { type: "button", text: "Compare with the run before", dataset: { action: "compare-runs" },
      onclick: () => compareJobRuns(this.api, before, run).then(show)
        .catch((err) => show(h("p.job-bad", { text: err.message }))) });
    return h("div", {}, button, out);
  }

  // One cell's run as the notebook draws it (output.js: the log's head and tail, result tables,
  // charts, the error card), under the cell's number and first line; it folds.
  cellOutput(o) {
    const kept = this.views.get(o.id);
    if (kept && kept.status === o.status) return kept.el;
    const out = new CellOutput({ downloadUrl: (runId) => this.api.logUrl(runId) });
    out.startRun(o.id);
    for (const ev of o.events || []) {
      if (ev.type === EVENT.OUTPUT) out.output(ev);
      else if (ev.type === EVENT.OUTPUT_HIDDEN) out.hiddenOutput(ev);
      else if (ev.type === EVENT.METRICS) out.metrics(ev);
      else if (ev.type === EVENT.RESULT) out.result(ev);
      else if (ev.type === EVENT.ERROR) out.error(ev);
    }
    out.log.flush();
    const el = h("details.job-cell", { dataset: { role: "job-output", cellId: o.cell_id, status: o.status },
      open: !this.shut.has(o.id) },
    h("summary", {}, h("span.job-cell-name", { dataset: { role: "job-cell-name" }, text: o.cell_title || "a cell" }),
      " · ", h("span", { dataset: { status: o.status }, text: o.status })),
    out.el);
    el.addEventListener("toggle", () => {
      if (el.open) {
        this.shut.delete(o.id);
        out.chart?.draw(); // drawn at its width once shown
      } else this.shut.add(o.id);
    });
    this.views.set(o.id, { status: o.status, el });
    return el;
  }
}

// ------------------------------------------------------------------ the notebook page
// The parameter form above the cells: what it holds is what every run of the page uses (the
// toolbar's Run all, a cell's Run, run from here: notebook-actions.js asks page.params()), and
// its own button is the toolbar's Run all.
function paramForm(page, declared) {
  const inputs = declared.map((p) => h("input", { placeholder: p.default, dataset: { role: "param-input", param: p.name },
    "aria-label": p.name }));
  const run = h("button", { type: "submit", text: "▶▶ Run all with these values", dataset: { role: "params-run" } });
  const form = h("form.params-form", { dataset: { role: "params" } }, h("span.job-label", { text: "Parameters" }),
    ...declared.map((p, i) => h("label", {}, `${p.name} `, inputs[i])), run);
  // Every value is sent, an empty field as its default: the open session may still hold an
  // earlier run's value, which a defaultParam alone would keep.
  page.params = () => Object.fromEntries(declared.map((p, i) => [p.name, inputs[i].value || p.default]));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    emit(form, "cell-action", { cellId: page.selected, action: "run-all" });
  });
  return form;
}

async function markJobRuns(api, page) {
  const { cell_runs: made } = await api.request("GET", `/notebooks/${enc(page.id)}/jobs`);
  for (const cell of page.cells.values()) {
    const runId = cell.output.runId;
    const by = made[runId];
    const had = cell.jobRun && cell.jobRun.runId === runId;
    if (by) cell.setJobRun({ runId, job: by.job, jobId: by.job_id });
    else if (had) cell.setJobRun(null);
  }
}

export async function attachJobs(page, api) {
  if (!(await page.loaded)) return;
  const tools = page.root.querySelector('[data-role="sec-tools"]');
  if (tools && allows(page.role, "schedule")) {
    const name = page.root.querySelector(".nb-name")?.textContent || "";
    tools.append(h("button", { type: "button", text: "Schedule…", title: "Run this notebook on a schedule (editors)",
      dataset: { secAction: "schedule", role: "schedule" },
      onclick: () => openScheduleDialog(api, page.id, { notebookName: name }).then((job) => {
        if (job) location.href = `/jobs?job=${enc(job.id)}`;
      }).catch((err) => alert(err.message)) }));
  }
  if (tools) tools.append(h("a.button", { href: "/jobs", text: "Jobs", dataset: { role: "jobs-link" } }));
  const { params } = await api.request("GET", `/notebooks/${enc(page.id)}/params`);
  const cells = page.root.querySelector('[data-role="cells"]');
  if (params.length && cells && allows(page.role, "run")) cells.before(paramForm(page, params));
  // Runs a job made before this page opened; later ones say so on their cell_status events.
  markJobRuns(api, page).catch(() => {});
}
