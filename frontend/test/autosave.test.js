import { test } from "node:test";
import assert from "node:assert/strict";
import { Saver } from "../src/autosave.js";

// A patch the test answers by hand: each call waits until the test resolves it.
function heldPatches() {
  const calls = [];
  const patch = (view, base) => new Promise((resolve) => calls.push({ view, base, resolve }));
  return { calls, patch };
}

const settle = () => new Promise((r) => setImmediate(r));

test("a chart choice made while the last one is being stored keeps the page unsaved until it is sent", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  const states = [];
  const saver = new Saver({ notebookId: "nb", revision: 1, onState: (s) => states.push(s) });
  const { calls, patch } = heldPatches();
  saver.saveView("c1", { type: "line" }, patch);
  t.mock.timers.tick(700);
  await settle();
  assert.equal(calls.length, 1);
  saver.saveView("c1", { type: "bar" }, patch); // chosen while the line is in flight
  calls[0].resolve({ revision: 2 });
  await saver.running;
  // Before: "saved" here, with the bar still waiting for its timer (and no prompt on closing the tab).
  assert.equal(saver.state, "dirty");
  assert.equal(saver.dirty, true);
  t.mock.timers.tick(700);
  await settle();
  assert.deepEqual(calls.map((c) => c.view.type), ["line", "bar"]);
  assert.equal(calls[1].base, 2);
  calls[1].resolve({ revision: 3 });
  await saver.running;
  assert.equal(saver.state, "saved");
  assert.equal(saver.dirty, false);
});

test("flush sends a waiting chart choice at once", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  const saver = new Saver({ notebookId: "nb", revision: 4 });
  const { calls, patch } = heldPatches();
  saver.saveView("c1", { type: "pie" }, patch);
  const flushed = saver.flush();
  await settle();
  assert.equal(calls.length, 1);
  calls[0].resolve({ revision: 5 });
  await flushed;
  assert.equal(saver.revision, 5);
  assert.equal(saver.dirty, false);
});
