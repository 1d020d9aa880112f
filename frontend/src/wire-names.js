// Made by `python -m console.wire.names` from console/wire/browser.py: do not edit.
// The events the server sends the page (EVENT) and the commands the page sends (COMMAND);
// tests/test_wire_names.py fails when this file and the server's vocabulary differ.

export const EVENT = Object.freeze({
  CELL_STATUS: "cell_status",
  COMMENTS_CHANGED: "comments_changed",
  DOC_CHANGED: "doc_changed",
  DOC_SAVED: "doc_saved",
  ERROR: "error",
  JOBS_CHANGED: "jobs_changed",
  KERNEL_STATUS: "kernel_status",
  METRICS: "metrics",
  OUTPUT: "output",
  OUTPUT_HIDDEN: "output_hidden",
  PRESENCE: "presence",
  RAY_USAGE: "ray_usage",
  RESULT: "result",
});

export const COMMAND = Object.freeze({
  AWARENESS: "awareness",
  DOC_SYNC: "doc_sync",
  DOC_UPDATE: "doc_update",
  INTERRUPT: "interrupt",
  JOIN: "join",
  LEAVE: "leave",
  RESTART: "restart",
  RUN_ALL: "run_all",
  RUN_CELL: "run_cell",
  RUN_FROM: "run_from",
  WATCH_JOBS: "watch_jobs",
});
