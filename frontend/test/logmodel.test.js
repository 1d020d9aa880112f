import { test } from "node:test";
import assert from "node:assert/strict";
import { LogModel, applyControl, stripAnsi } from "../src/logmodel.js";

const texts = (m) => m.lines.map((l) => l.text);

test("a progress bar redraws one line in place across chunks", () => {
  const m = new LogModel();
  m.append("Epoch 1/2\n");
  m.append("1/3 [=>...]");
  m.append("\r2/3 [==>..]");
  m.append("\r3/3 [=====] loss: 0.5\n");
  assert.deepEqual(texts(m), ["Epoch 1/2", "3/3 [=====] loss: 0.5"]);
});

test("each source keeps its own open line", () => {
  const m = new LogModel();
  m.append("a: 1", "actor-a");
  m.append("b says hi\n", "actor-b");
  m.append("\ra: 2\n", "actor-a");
  assert.deepEqual(texts(m), ["a: 2", "b says hi"]);
  assert.deepEqual([...m.sources].sort(), ["actor-a", "actor-b"]);
});

test("edits in place are reported as dirty, new lines are not", () => {
  const m = new LogModel();
  m.append("x");
  m.takeDirty();
  m.append("y\nz\n");
  assert.deepEqual([...m.takeDirty()], [0]);
  assert.deepEqual(texts(m), ["xy", "z"]);
});

test("backspace, CRLF and ANSI codes", () => {
  assert.equal(applyControl("abc", "\b\bX"), "aX");
  assert.equal(stripAnsi("\x1b[31mred\x1b[0m"), "red");
  const m = new LogModel();
  m.append("one\r\ntwo\r\n");
  assert.deepEqual(texts(m), ["one", "two"]);
});

test("memory is bounded: old lines are dropped and counted", () => {
  const m = new LogModel({ maxLines: 100 });
  for (let i = 0; i < 250; i++) m.append(`line ${i}\n`);
  assert.equal(m.lines.length, 100);
  assert.equal(m.dropped, 150);
  assert.equal(m.line(m.first).text, "line 150");
});

test("a hidden-output marker is its own line", () => {
  const m = new LogModel();
  m.append("head\n");
  m.hidden(4096, "/log");
  m.append("tail\n");
  assert.equal(m.lines[1].hidden.bytes, 4096);
  assert.equal(m.lines[2].text, "tail");
});

test("a second hidden marker of a run grows the first and replaces the tail after it", () => {
  const m = new LogModel();
  m.append("head\n");
  m.hidden(100, "/log");
  m.append("tail 1\npartial");
  m.hidden(250, "/log");
  m.append("tail 2\n");
  assert.deepEqual(texts(m), ["head", "", "tail 2"]);
  assert.equal(m.hiddenBytes, 250);
  assert.equal(m.lines[1].hidden.bytes, 250);
  assert.equal(m.cut, true);
});
