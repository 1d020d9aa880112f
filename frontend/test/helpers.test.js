import { test } from "node:test";
import assert from "node:assert/strict";
import { MetricsSeries, scaleFor } from "../src/series.js";
import { pageOf, describeRows, formatBytes, formatElapsed, cellText } from "../src/paging.js";
import { SeqTracker } from "../src/seqtracker.js";
import { matchName, joinPath } from "../src/names.js";

test("metrics become aligned uPlot series per metric and worker", () => {
  const s = new MetricsSeries();
  s.add({ run_id: "r", seq: 1, source: "w0", step: 1, values: { loss: 2.0, accuracy: 0.3 } });
  s.add({ run_id: "r", seq: 2, source: "w1", step: 1, values: { loss: 2.2 } });
  s.add({ run_id: "r", seq: 3, source: "w0", step: 2, values: { loss: 1.0 } });
  assert.equal(s.add({ run_id: "r", seq: 3, source: "w0", step: 2, values: { loss: 9 } }), false, "replayed point ignored");
  assert.deepEqual(s.lines().map((l) => l.label), ["accuracy · w0", "loss · w0", "loss · w1"]);
  assert.deepEqual(s.data(), [[1, 2], [0.3, null], [2.0, 1.0], [2.2, null]]);
  assert.equal(scaleFor("val_accuracy"), "ratio");
  assert.equal(scaleFor("loss"), "value");
});

test("points without a step are numbered per source", () => {
  const s = new MetricsSeries();
  s.add({ source: "d", values: { x: 1 } });
  s.add({ source: "d", values: { x: 2 } });
  assert.deepEqual(s.data(), [[0, 1], [1, 2]]);
});

test("paging and row descriptions", () => {
  const rows = Array.from({ length: 45 }, (_, i) => [i]);
  const p = pageOf(rows, 2, 20);
  assert.deepEqual([p.page, p.pages, p.start, p.end, p.rows.length], [2, 3, 40, 45, 5]);
  assert.equal(pageOf(rows, 99, 20).page, 2);
  assert.equal(describeRows(0, 20, 100, 12345), "rows 1–20 of 100 received · 12,345 rows in the table");
  assert.equal(describeRows(0, 3, 3, 3), "rows 1–3 of 3 · 3 rows");
  assert.equal(formatBytes(52 * 1024 * 1024), "52.0 MB");
  assert.equal(formatElapsed(1500), "1.5 s");
  assert.equal(cellText(null), "null");
  assert.equal(cellText({ a: 1 }), '{"a":1}');
});

test("seq tracker drops repeats and builds the join cursor", () => {
  const t = new SeqTracker();
  assert.ok(t.accept("r1", 1));
  assert.ok(t.accept("r1", 2));
  assert.ok(!t.accept("r1", 2));
  t.note("r2", 5);
  assert.deepEqual(t.since(), { r1: 2, r2: 5 });
});

test("a marker that grows the held one sends the seq tracker back, so the tail after it is taken again", () => {
  const t = new SeqTracker();
  for (let seq = 1; seq <= 5; seq++) assert.ok(t.accept("r1", seq));
  assert.ok(!t.acceptMarker("r1", 4), "a first marker within the chunks held is a repeat");
  assert.ok(t.acceptMarker("r1", 20)); // head 1-5, the middle 6-20
  for (let seq = 21; seq <= 25; seq++) assert.ok(t.accept("r1", seq));
  // The tail slid past 21-22 only: the marker grows, and 23-25 come again after it.
  assert.ok(t.acceptMarker("r1", 22));
  assert.deepEqual(t.since(), { r1: 22 });
  for (let seq = 23; seq <= 27; seq++) assert.ok(t.accept("r1", seq));
  assert.ok(!t.acceptMarker("r1", 22), "the same marker again is a repeat");
  assert.ok(!t.accept("r1", 27));
});

test("name search and paths", () => {
  assert.ok(matchName("MNIST training on Ray", "ray mnist"));
  assert.ok(!matchName("MNIST", "cifar"));
  assert.equal(joinPath("/", "a"), "/a");
  assert.equal(joinPath("/team", "b"), "/team/b");
});
