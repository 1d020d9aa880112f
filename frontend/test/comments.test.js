import { test } from "node:test";
import assert from "node:assert/strict";
import {
  MAX_TEXT, anchorFrom, groupThreads, newThreadBody, openCount, replyBody, shortQuote, textProblem, toggleLabel, when,
} from "../src/commentmodel.js";

const threads = [
  { id: "t1", cell_id: "a", resolved: false, replies: [] },
  { id: "t2", cell_id: "a", resolved: true, replies: [] },
  { id: "t3", cell_id: "gone", resolved: false, replies: [] },
  { id: "t4", cell_id: "b", resolved: false, replies: [] },
];

test("threads sit on their cells; a cell the page no longer has puts its threads among the orphans", () => {
  const { byCell, orphans } = groupThreads(threads, (id) => id === "a" || id === "b");
  assert.deepEqual([...byCell.keys()], ["a", "b"]);
  assert.deepEqual(byCell.get("a").map((t) => t.id), ["t1", "t2"]);
  assert.deepEqual(orphans.map((t) => t.id), ["t3"]);
  assert.equal(openCount(byCell.get("a")), 1);
  assert.equal(toggleLabel(byCell.get("a")), "Comments: 1 open thread, 1 resolved");
  assert.equal(toggleLabel([]), "Comments: none yet (add one)");
  assert.deepEqual(groupThreads(null, () => true).orphans, []);
});

test("a selection makes an anchor with the quoted text; none or a blank one is the whole cell", () => {
  const source = "select 1 as a;\nselect 2 as b;";
  assert.deepEqual(anchorFrom(source, { from: 0, to: 6 }), { start: 0, end: 6, quote: "select" });
  assert.deepEqual(anchorFrom(source, { from: 13, to: 7 }), { start: 7, end: 13, quote: "1 as a" }); // backwards
  assert.equal(anchorFrom(source, { from: 3, to: 3 }), null);
  assert.equal(anchorFrom(source, null), null);
  assert.equal(anchorFrom("a    b", { from: 1, to: 5 }), null);
  assert.equal(anchorFrom(source, { from: 0, to: 999 }).end, source.length);
  assert.equal(anchorFrom("x".repeat(5000), { from: 0, to: 5000 }).quote.length, 2000);
});

test("text is checked before it is sent, and the bodies are what the API takes", () => {
  assert.equal(textProblem("  "), "Write something first.");
  assert.equal(textProblem(7), "Write something first.");
  assert.match(textProblem("x".repeat(MAX_TEXT + 1)), /at most 10,000 characters/);
  assert.equal(textProblem("fine"), "");
  assert.deepEqual(newThreadBody("c1", "hi", null), { cell_id: "c1", text: "hi" });
  assert.deepEqual(newThreadBody("c1", "hi", { start: 0, end: 1, quote: "s" }),
    { cell_id: "c1", text: "hi", anchor: { start: 0, end: 1, quote: "s" } });
  assert.deepEqual(replyBody("t1", "yes"), { thread_id: "t1", text: "yes" });
});

test("times read as people say them; quotes are one short line", () => {
  const now = Date.parse("2026-12-10T12:00:00Z");
  assert.equal(when("2026-12-10T11:59:30Z", now), "just now");
  assert.equal(when("2026-12-10T11:55:00Z", now), "5 min ago");
  assert.equal(when("2026-12-10T09:00:00Z", now), "3 h ago");
  assert.equal(when("2026-12-01T09:00:00Z", now), "2026-12-01");
  assert.equal(when("nonsense", now), "");
  assert.equal(shortQuote("a\n  b"), "a b");
  assert.equal(shortQuote("x".repeat(200), 10), `${"x".repeat(9)}…`);
});
