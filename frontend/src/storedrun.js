// A stored run (as a read-only link or a dashboard tile carries it: console/server/api/publish.py
// `published_run`) fed into a CellOutput in the order the live page would have received it, so the
// published page and the dashboard draw runs with the notebook page's own components.

// only: "all" (the log too), or "chart" (metrics, result and error: what a chart tile shows).
export function fillOutput(output, cellId, run, only = "all") {
  const runId = `published-${cellId}`;
  output.startRun(runId);
  if (only === "all") {
    const outputs = run.outputs || [];
    const head = run.hidden ? Math.min(run.head_count ?? outputs.length, outputs.length) : outputs.length;
    for (const ev of outputs.slice(0, head)) output.output(ev);
    if (run.hidden) {
      output.hiddenOutput({ hidden_bytes: run.hidden.hidden_bytes, log_url: "" }); // the download needs a login
      for (const ev of outputs.slice(head)) output.output(ev);
    }
  }
  for (const m of run.metrics || []) output.metrics(m);
  if (run.result) output.result(run.result);
  if (run.error) output.error(run.error);
}
