// A run's details (issue 32): what it read and wrote (its manifest), "Re-run as recorded", and what
// changed since the run before it. Opened from a cell's status. Text only (h()), never HTML.

import { h } from "./dom.js";
import { openPanel, errorLine } from "./overlay.js";

const runPath = (runId) => `/runs/${encodeURIComponent(runId)}`;

// What a written table was made of (a manifest's write entry, or a lineage writer): the inputs it
// came from through the notebook's cells and, for a model, the run that trained it. null: nothing said.
export function madeOf(e) {
  const sources = e.sources || [];
  if (!e.model && !sources.length) return null;
  const from = sources.map((s) => (s.table ? `${s.table} v${s.version}${s.verified ? "" : " (as reported)"}` : s.path));
  if (e.sources_dropped) from.push(`${e.sources_dropped} more`);
  const t = e.trained_by;
  const what = !e.model ? "made" : t ? `model trained by run ${t.run_id} (${new Date(t.started_at).toLocaleString()})` : "model";
  return h("div.made-of", { dataset: { role: "made-of", trainedBy: t ? t.run_id : "", trainedIn: t ? t.cell_id : "" },
    text: `${what}${from.length ? ` from ${from.join(", ")}` : ""}` });
}

function entryRow(e) {
  const what = e.table ? `${e.table} v${e.version}` : e.path;
  const facts = e.version !== undefined && e.version !== null ? `version ${e.version}`
    : [e.size !== undefined ? `${e.size} bytes` : "", e.digest ? e.digest.slice(0, 19) : ""].filter(Boolean).join(", ");
  const row = h("tr", { dataset: { role: "manifest-entry", access: e.access } },
    h("td", { text: e.access }), h("td", { text: e.format }), h("td", { text: what }), h("td", { text: facts }),
    h("td", { text: e.verified ? "checked" : "as reported", title: e.check || "" }));
  const made = madeOf(e);
  return made ? [row, h("tr.made-of-row", {}, h("td", { colSpan: 5 }, made))] : row;
}

export function diffView(d) {
  const lines = [];
  if (!d.comparable) lines.push("one of the runs recorded nothing to compare");
  else if (d.same) lines.push("same: revision, parameters, environment, inputs, outputs and result");
  else {
    if (!d.revision.same) lines.push(`revision ${d.revision.a} → ${d.revision.b}: ${d.revision.cells.length} cell(s) changed`);
    for (const p of d.params) lines.push(`parameter ${p.name}: ${p.a ?? "(default)"} → ${p.b ?? "(default)"}`);
    if (d.environment && !d.environment.same) lines.push("environment: another lock");
    for (const x of [...d.inputs, ...d.outputs].filter((x) => x.changed)) {
      const v = (s) => (s ? (s.version ?? s.digest ?? "?") : "none");
      lines.push(`${x.name}: ${v(x.a)} → ${v(x.b)}`);
    }
    if (d.result && !d.result.same) lines.push(`result: ${d.result.differs.join(", ")} differ`);
  }
  return h("ul.run-diff", { dataset: { role: "run-diff", same: d.same ? "1" : "0" } },
    lines.map((text) => h("li", { text })));
}

// api: the page's API (api.js); canRun: whether the caller may replay (runners).
export async function openRunDetails(api, runId, previousRunId, canRun) {
  const { body } = openPanel("Run details", "run-details");
  try {
    const m = await api.request("GET", `${runPath(runId)}/manifest`);
    const params = Object.entries(m.params || {}).map(([k, v]) => `${k}=${v}`).join(", ");
    body.append(h("p", { dataset: { role: "run-facts" },
      text: `revision ${m.revision ?? "?"}${params ? `, parameters ${params}` : ""}${m.lock_hash ? `, environment ${m.lock_hash.slice(0, 12)}` : ""}` }));
    body.append(m.entries.length
      ? h("table.manifest", {}, h("tbody", {}, m.entries.flatMap(entryRow)))
      : h("p.muted", { text: m.recorded ? "it read and wrote no table or file" : "nothing recorded yet" }));
    const out = h("div", { dataset: { role: "run-details-answer" } });
    const buttons = h("div.dialog-buttons");
    // A replay (its manifest names the run it replayed): compared with that run, and when it failed
    // because a file or the environment changed, it can be run anyway on what there is now.
    if (m.replay_of) body.append(h("p", { dataset: { role: "replay-of", runId: m.replay_of }, text: `a replay of run ${m.replay_of}` }));
    const replayButton = (label, of, force, action) => {
      const b = h("button", { type: "button", text: label, dataset: { action } });
      b.addEventListener("click", async () => {
        try {
          const r = await api.request("POST", `${runPath(of)}/replay`, force ? { force: true } : {});
          out.replaceChildren(h("p", { dataset: { runId: r.run_id },
            text: "queued as a new run: its output replaces this one's in the cell" }));
          b.disabled = true;
        } catch (err) {
          out.replaceChildren(errorLine(err));
        }
      });
      return b;
    };
    if (canRun && m.recorded) buttons.append(replayButton("Re-run as recorded", runId, false, "replay"));
    if (canRun && m.replay_of && m.status === "error") {
      buttons.append(replayButton("Replay anyway, on today's files and environment", m.replay_of, true, "replay-force"));
    }
    const compareWith = m.replay_of || previousRunId;
    if (compareWith) {
      const label = m.replay_of ? "Compare with the recorded run" : "Compare with the run before";
      const compare = h("button", { type: "button", text: label, dataset: { action: "compare" } });
      compare.addEventListener("click", async () => {
        try {
          out.replaceChildren(diffView(await api.request("GET", `${runPath(compareWith)}/diff/${encodeURIComponent(runId)}`)));
        } catch (err) {
          out.replaceChildren(errorLine(err));
        }
      });
      buttons.append(compare);
    }
    body.append(buttons, out);
  } catch (err) {
    body.append(errorLine(err));
  }
}

// A job's run against the run before it (jobs.js): each cell both ran, side by side. runs: the
// job runs' `outputs` ({id, cell_id, cell_title}); an empty list when they share no cell.
export async function compareJobRuns(api, before, after) {
  const earlier = new Map(before.outputs.map((o) => [o.cell_id, o]));
  const pairs = after.outputs.filter((o) => earlier.has(o.cell_id)).map((o) => [earlier.get(o.cell_id), o]);
  const diffs = await Promise.all(pairs.map(([a, b]) => api.request("GET", `${runPath(a.id)}/diff/${encodeURIComponent(b.id)}`)));
  return h("div.job-run-diff", { dataset: { role: "job-run-diff", same: diffs.every((d) => d.same) ? "1" : "0" } },
    pairs.length ? pairs.map(([, b], i) => h("div", {}, h("strong", { text: b.cell_title || b.cell_id }), diffView(diffs[i])))
      : h("p.muted", { text: "the two runs share no cell" }));
}
