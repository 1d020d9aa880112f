import { test } from "node:test";
import assert from "node:assert/strict";
import * as Y from "yjs";
import { SharedDoc, sourceDigest, storedHolds, toB64, fromB64 } from "../src/coedit.js";

// The server's half is a second Y.Doc that applies what the page sends, as console/server/live/coedit.py
// does; the acks are held back so that the order of ack and doc_saved can be chosen.
function pageAndServer() {
  const server = new Y.Doc();
  const acks = [];
  const send = (type, fields) => {
    if (type === "doc_sync") {
      return Promise.resolve({ ok: true, epoch: "e1", update: toB64(Y.encodeStateAsUpdate(server)),
        state_vector: toB64(Y.encodeStateVector(server)), awareness: [], saved: stored });
    }
    if (type === "doc_update") {
      Y.applyUpdate(server, fromB64(fields.update));
      return new Promise((resolve) => acks.push(() => resolve({ ok: true })));
    }
    return Promise.resolve({ ok: true });
  };
  const states = [];
  const page = new SharedDoc({ send, user: { id: 1, name: "a" }, onUnsaved: (v) => states.push(v) });
  let stored = undefined; // what the store holds, as a sync's answer says it (`saved`)
  // The server's saver stores the document: what console/server/live/coedit.py tells, its state
  // vector and an update against it (its delete set); `missed`: the page's socket was away.
  const saved = (revision, { missed = false } = {}) => {
    const sv = Y.encodeStateVector(server);
    stored = { state_vector: toB64(sv), deleted: toB64(Y.encodeStateAsUpdate(server, sv)) };
    if (!missed) page.onEvent("doc_saved", { revision, ...stored });
  };
  return { page, acks, states, saved };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

test("a save stored before the edit's ack came still marks the page saved once the ack comes", async () => {
  const { page, acks, states, saved } = pageAndServer();
  await page.sync();
  page.insertCell(0, "mlsql", "select 1 as a;");
  assert.equal(page.unsaved, true);
  saved(2); // the server's saver stored the edit between applying it and acking it
  assert.equal(page.unsaved, true, "not saved while the edit is still in flight");
  acks.shift()();
  await settle();
  assert.equal(page.unsaved, false);
  assert.deepEqual(states, [true, false]);
  page.awareness.destroy(); // its timer would keep the test process alive
});

test("an ack after a save that did not hold the edit leaves the page unsaved until the next save", async () => {
  const { page, acks, saved } = pageAndServer();
  await page.sync();
  saved(1); // an older save: before this page's edit
  page.insertCell(0, "python", "print(1)");
  acks.shift()();
  await settle();
  assert.equal(page.unsaved, true);
  saved(2);
  assert.equal(page.unsaved, false);
  page.awareness.destroy();
});

test("a deletion, which leaves the state vector as it was, is unsaved until a save holds it", async () => {
  const { page, acks, saved } = pageAndServer();
  await page.sync();
  const id = page.insertCell(0, "mlsql", "select 1 as a;");
  acks.shift()();
  await settle();
  saved(2);
  assert.equal(page.unsaved, false);
  page.deleteCell(id);
  assert.equal(page.unsaved, true);
  acks.shift()();
  await settle();
  assert.equal(page.unsaved, true, "the last save was before the deletion");
  saved(3);
  assert.equal(page.unsaved, false);
  page.awareness.destroy();
});

test("a save whose doc_saved the page missed (its socket was away) is learned from the next sync's answer", async () => {
  const { page, acks, saved } = pageAndServer();
  try {
    await page.sync();
    page.insertCell(0, "mlsql", "select 1 as a;");
    acks.shift()();
    await settle();
    saved(2, { missed: true });
    assert.equal(page.unsaved, true, "nothing said it yet");
    await page.sync(); // the socket is back: the page joins and syncs again
    assert.equal(page.unsaved, false);
  } finally {
    page.awareness.destroy(); // a failed assertion must not leave its timer holding the test process
  }
});

test("a stored document holds an update only when it has its inserts and its deletions", () => {
  const a = new Y.Doc();
  const updates = [];
  a.on("update", (u) => updates.push(u));
  a.getText("t").insert(0, "hello world");
  a.getText("t").delete(0, 6);
  const [insert, deletion] = updates;
  const b = new Y.Doc();
  Y.applyUpdate(b, insert);
  const snapshotOf = (doc) => {
    const sv = Y.encodeStateVector(doc);
    return { sv: Y.decodeStateVector(sv), ds: Y.decodeUpdate(Y.encodeStateAsUpdate(doc, sv)).ds };
  };
  assert.equal(storedHolds(snapshotOf(b), insert), true);
  assert.equal(storedHolds(snapshotOf(b), deletion), false);
  Y.applyUpdate(b, deletion);
  assert.equal(storedHolds(snapshotOf(b), deletion), true);
  assert.equal(storedHolds(snapshotOf(new Y.Doc()), insert), false);
});

test("a source's digest is FNV-1a of its UTF-8, as the server computes it", () => {
  // tests/live/test_coedit.py checks console/server/live/coedit.py's source_digest against the same values.
  assert.equal(sourceDigest(""), "811c9dc5");
  assert.equal(sourceDigest("select 1 as a;"), "aeab66ca");
  assert.equal(sourceDigest("héllo ✓"), "b4ab03a7");
});

// c2 (a fresh-clone run under load): "b" pressed while the page's first sync was in flight
// inserted a cell the page did not draw yet ("insert-below failed: Cannot read properties of
// undefined"): the action's wait on `ready` went on before the page watched the document.
test("the page is attached to the document before an action waiting on ready goes on", async () => {
  const server = new Y.Doc();
  const cells = server.getArray("cells");
  const first = new Y.Map();
  first.set("id", "c1");
  first.set("kind", "mlsql");
  first.set("source", new Y.Text("select 1 as a;"));
  cells.insert(0, [first]);
  const send = (type) => Promise.resolve(type === "doc_sync"
    ? { ok: true, epoch: "e1", update: toB64(Y.encodeStateAsUpdate(server)),
      state_vector: toB64(Y.encodeStateVector(server)), awareness: [] }
    : { ok: true });
  const drawn = new Set();
  const attached = [];
  let page = null;
  page = new SharedDoc({ send, user: { id: 1, name: "a" }, onAttach: () => {
    attached.push(page.list().length);
    page.observe(() => { for (const c of page.list()) drawn.add(c.id); });
    for (const c of page.list()) drawn.add(c.id);
  } });
  const action = page.ready.then(() => {
    const id = page.insertCell(1, "mlsql");
    return drawn.has(id);
  });
  try {
    await page.sync();
    assert.equal(await action, true, "the inserted cell was drawn when the action looked for it");
    assert.deepEqual(attached, [1], "attached once, to the synced document");
    await page.sync(); // the socket joined again, same document: not attached twice
    assert.deepEqual(attached, [1]);
  } finally {
    page.awareness.destroy(); // its timer would keep the test process alive
  }
});
