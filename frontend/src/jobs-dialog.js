// The "Schedule…" dialog: a job for this notebook (cron or every N minutes, a time zone, the
// parameters with their defaults, retries, a timeout, overlap, a webhook), with the next three
// firing times as the server computes them (GET /api/jobs/preview) while the schedule is typed.

import { h, debounce } from "./dom.js";

const enc = encodeURIComponent;

export function localZone() {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  } catch {
    return "UTC";
  }
}

// The query of a schedule preview: pure, so the unit tests check it without a page.
export function previewQuery({ mode, cron, every, timezone }) {
  const p = new URLSearchParams();
  if (mode === "every") p.set("every_minutes", String(every || ""));
  else p.set("cron", cron || "");
  if (timezone) p.set("timezone", timezone);
  return `?${p.toString()}`;
}

// The POST /api/jobs body from the form's values; params keeps only values that differ from "".
// A field left empty is left out: the server gives it its default (JobBody in console/server/jobs/jobs.py).
export function jobBody(notebookId, v) {
  const number = (x) => (x === undefined || x === null || x === "" ? undefined : Number(x));
  const body = { notebook_id: notebookId, name: v.name || undefined, timezone: v.timezone || undefined,
    retries: number(v.retries), retry_delay_seconds: number(v.retryDelay), timeout_seconds: number(v.timeout),
    overlap: v.overlap || undefined, notify_success: !!v.notifySuccess };
  if (v.mode === "every") body.every_minutes = Number(v.every);
  else body.cron = v.cron;
  if (v.webhook) body.webhook_url = v.webhook;
  const params = Object.fromEntries(Object.entries(v.params || {}).filter(([, value]) => value !== ""));
  if (Object.keys(params).length) body.params = params;
  return body;
}

function row(label, control, hint) {
  return h("label.job-row", {}, h("span.job-label", { text: label }), control, hint ? h("small", { text: hint }) : null);
}

// Resolves with the created job, or null when cancelled.
export async function openScheduleDialog(api, notebookId, { notebookName = "" } = {}) {
  const answer = await api.request("GET", `/notebooks/${enc(notebookId)}/params`);
  const declared = answer.params || [];
  // A new job's defaults come from the server's one declaration of a job, not a copy here.
  const defaults = answer.job_defaults || {};
  const initial = (name) => (defaults[name] === undefined || defaults[name] === null ? "" : String(defaults[name]));
  return new Promise((resolve) => {
    const input = (role, props = {}) => h("input", { dataset: { role }, ...props });
    const name = input("job-name", { value: notebookName ? `${notebookName} job` : "", "aria-label": "Job name" });
    const mode = h("select", { dataset: { role: "job-mode" } },
      h("option", { value: "cron", text: "cron" }), h("option", { value: "every", text: "every N minutes" }));
    const cron = input("job-cron", { value: "0 2 * * *", placeholder: "minute hour day month weekday" });
    const every = input("job-every", { type: "number", min: "1", value: "60" });
    const zone = input("job-timezone", { value: localZone() });
    const retries = input("job-retries", { type: "number", min: "0", max: "10", value: initial("retries") });
    const retryDelay = input("job-retry-delay", { type: "number", min: "0", max: "86400", value: initial("retry_delay_seconds") });
    const timeout = input("job-timeout", { type: "number", min: "1", value: initial("timeout_seconds") });
    const overlap = h("select", { dataset: { role: "job-overlap" } },
      h("option", { value: "skip", text: "skip a firing while the last run goes" }),
      h("option", { value: "queue", text: "queue it" }));
    const webhook = input("job-webhook", { type: "url", placeholder: "https://… (optional)" });
    const notify = input("job-notify-success", { type: "checkbox" });
    const params = declared.map((p) => [p.name, input("job-param", { placeholder: p.default, dataset: { role: "job-param", param: p.name } })]);
    const preview = h("ul.job-preview", { dataset: { role: "job-preview" } });
    const error = h("p.job-error", { dataset: { role: "job-error" } });
    const ok = h("button.primary", { type: "submit", text: "Schedule", dataset: { role: "dialog-ok" } });
    const cancel = h("button", { type: "button", text: "Cancel", dataset: { role: "dialog-cancel" } });
    const cronRow = row("Cron", cron, "e.g. 0 2 * * * (02:00 daily), */15 8-18 * * mon-fri");
    const everyRow = row("Every (minutes)", every);
    const form = h("form.overlay-box.job-dialog", { dataset: { role: "schedule-dialog" } },
      h("h2", { text: "Schedule this notebook" }),
      row("Name", name), row("Schedule", mode), cronRow, everyRow, row("Time zone", zone),
      h("div.job-next", {}, h("span.job-label", { text: "Next firings" }), preview),
      params.length ? h("fieldset", {}, h("legend", { text: "Parameters (empty: the default)" }),
        params.map(([n, el]) => row(n, el))) : null,
      row("Retries", retries), row("Retry after (s)", retryDelay, "wait between a failed attempt and the next"),
      row("Timeout (s)", timeout), row("Overlap", overlap),
      row("Webhook", webhook, "POSTed JSON when a run fails"), row("Also on success", notify),
      error, h("div.dialog-buttons", {}, cancel, ok));
    const overlay = h("div.overlay.dialog", { dataset: { role: "dialog" } }, form);
    const values = () => ({ name: name.value.trim(), mode: mode.value, cron: cron.value.trim(), every: every.value,
      timezone: zone.value.trim(), retries: retries.value, retryDelay: retryDelay.value,
      timeout: timeout.value, overlap: overlap.value,
      webhook: webhook.value.trim(), notifySuccess: notify.checked,
      params: Object.fromEntries(params.map(([n, el]) => [n, el.value])) });
    const refresh = debounce(async () => {
      const v = values();
      cronRow.hidden = v.mode !== "cron";
      everyRow.hidden = v.mode !== "every";
      try {
        const p = await api.request("GET", `/jobs/preview${previewQuery(v)}`);
        preview.replaceChildren(...p.readable.map((t) => h("li", { text: t })));
        preview.dataset.state = "ok";
        error.textContent = "";
      } catch (err) {
        preview.replaceChildren(h("li.job-bad", { text: err.message }));
        preview.dataset.state = "error";
      }
    }, 250);
    const done = (v) => {
      overlay.remove();
      resolve(v);
    };
    form.addEventListener("input", () => refresh());
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      ok.disabled = true;
      try {
        done(await api.request("POST", "/jobs", jobBody(notebookId, values())));
      } catch (err) {
        error.textContent = err.message;
        ok.disabled = false;
      }
    });
    cancel.addEventListener("click", () => done(null));
    overlay.addEventListener("keydown", (e) => e.key === "Escape" && done(null));
    document.body.append(overlay);
    refresh();
    refresh.flush?.();
    name.focus();
  });
}
