// The Environment panel: the Python packages this notebook's %pip cells added to the base
// environment (GET /api/notebooks/<id>/environment), each with its version and where it comes
// from (a requirement as written, or a dependency of one), and the lock's hash a job records.
// Read only: the list changes through %pip install / uninstall in a cell, which a runner runs.

import { h } from "./dom.js";
import { errorLine, openPanel } from "./overlay.js";

// The answer as table rows: [name, version, from]; a requirement not built yet shows "not built".
export function environmentRows(env) {
  return (env.packages || []).map((p) => [
    p.name,
    p.version || "not built",
    p.source === "requirement" ? `requested: ${p.requested}` : "dependency",
  ]);
}

export function environmentSummary(env) {
  const n = (env.requirements || []).length;
  if (!n) return "This notebook uses the base environment: no %pip install yet.";
  return `${n} requirement${n === 1 ? "" : "s"}, lock ${env.lock_hash || "(not built yet)"}. ` +
    "Change them with %pip install / %pip uninstall in a Python cell.";
}

export function openEnvironmentPanel(api, notebookId) {
  const panel = openPanel("Environment", "environment-panel");
  const body = h("div", { dataset: { role: "environment" } }, h("p.muted", { text: "Loading…" }));
  panel.body.append(body);
  api.request("GET", `/notebooks/${encodeURIComponent(notebookId)}/environment`).then((env) => {
    const rows = environmentRows(env);
    const table = rows.length ? h("table.environment-table", {},
      h("thead", {}, h("tr", {}, ["Package", "Version", "From"].map((t) => h("th", { text: t })))),
      h("tbody", {}, rows.map((r) => h("tr", { dataset: { package: r[0] } }, r.map((t) => h("td", { text: t })))))) : null;
    body.replaceChildren(h("p", { dataset: { role: "environment-summary" }, text: environmentSummary(env) }),
      ...(table ? [table] : []));
  }).catch((err) => body.replaceChildren(errorLine(err)));
  return panel;
}
