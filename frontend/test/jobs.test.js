import { test } from "node:test";
import assert from "node:assert/strict";
import { jobBody, previewQuery } from "../src/jobs-dialog.js";

test("a schedule preview asks for cron or every N minutes in a zone", () => {
  assert.equal(previewQuery({ mode: "cron", cron: "0 2 * * *", timezone: "Europe/Paris" }),
    "?cron=0+2+*+*+*&timezone=Europe%2FParis");
  assert.equal(previewQuery({ mode: "every", every: 15 }), "?every_minutes=15");
});

test("the job body keeps typed parameters only and one schedule", () => {
  const body = jobBody("nb1", { mode: "every", every: "5", cron: "0 2 * * *", timezone: "UTC", retries: "2",
    retryDelay: "30", timeout: "60", overlap: "queue", webhook: "", params: { day: "2026-12-01", month: "" } });
  assert.deepEqual(body, { notebook_id: "nb1", name: undefined, timezone: "UTC", retries: 2, retry_delay_seconds: 30,
    timeout_seconds: 60,
    overlap: "queue", notify_success: false, every_minutes: 5, params: { day: "2026-12-01" } });
});

test("fields left empty are left out, so the server's defaults apply", () => {
  const body = JSON.parse(JSON.stringify(jobBody("nb1", { mode: "cron", cron: "0 2 * * *", retries: "", timeout: "" })));
  assert.deepEqual(body, { notebook_id: "nb1", notify_success: false, cron: "0 2 * * *" });
});
