import { test } from "node:test";
import assert from "node:assert/strict";
import { NOTIFY_AFTER_MS, RunSignal } from "../src/runsignal.js";

// A document with what RunSignal touches: title, hidden, the icon link, the root's dataset.
function fakeDoc() {
  const link = { rel: "icon", href: "" };
  return {
    title: "", hidden: false, head: { append() {} }, documentElement: { dataset: {} },
    querySelector: () => link, link,
  };
}

test("the title and favicon follow the notebook: running, then done or failed", () => {
  const doc = fakeDoc();
  const signal = new RunSignal({ doc, now: () => 0, notify: () => assert.fail("no notification for a short run") });
  signal.setName("mnist");
  assert.equal(doc.title, "mnist · MLSQL Console");
  signal.update(["done", "queued"]);
  assert.equal(doc.title, "▶ mnist · MLSQL Console");
  assert.match(doc.link.href, /^data:image\/svg\+xml,/);
  signal.update(["done", "done"]);
  assert.equal(doc.title, "✓ mnist · MLSQL Console");
  assert.equal(doc.documentElement.dataset.runState, "done");
  signal.update(["done", "running"]);
  signal.update(["done", "error"]);
  assert.equal(doc.title, "✗ mnist · MLSQL Console");
  signal.seen();
  assert.equal(doc.title, "mnist · MLSQL Console");
});

test("a long run that ends in a hidden tab notifies once; a visible tab does not", () => {
  let clock = 0;
  const said = [];
  const doc = fakeDoc();
  const signal = new RunSignal({ doc, now: () => clock, notify: (title, body) => said.push([title, body]) });
  signal.setName("train");
  signal.update(["running"]);
  clock = NOTIFY_AFTER_MS + 1000;
  doc.hidden = true;
  signal.update(["done"]);
  signal.update(["done"]);
  assert.deepEqual(said, [["Done: train", "The run ended after 31 s"]]);
  doc.hidden = false;
  signal.update(["running"]);
  clock += NOTIFY_AFTER_MS * 2;
  signal.update(["error"]);
  assert.equal(said.length, 1);
});

test("a run shorter than the page's clock still changes the title", () => {
  const doc = fakeDoc();
  const signal = new RunSignal({ doc, now: () => 0, notify: () => {} });
  signal.setName("quick");
  signal.update(["done", "done"]);
  signal.update(["done", "error"]); // queued, running and error all between two ticks
  assert.equal(doc.title, "✗ quick · MLSQL Console");
  signal.update(["done", "error"]);
  assert.equal(doc.title, "✗ quick · MLSQL Console");
  signal.update(["done", "done"]);
  assert.equal(doc.title, "✓ quick · MLSQL Console");
});
