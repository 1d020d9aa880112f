import { test } from "node:test";
import assert from "node:assert/strict";
import { kindFromHeader, localItems, schemaText, toOptions } from "../src/assist.js";

test("a --%python or #%python first line makes the cell Python", () => {
  assert.equal(kindFromHeader("--%python\n--%input=t\nprint(1)"), "python");
  assert.equal(kindFromHeader("#%python"), "python");
  assert.equal(kindFromHeader("select 1 as a;\n--%python"), null);
  assert.equal(kindFromHeader("--%pythonic"), null);
});

test("the page's own words when the kernel cannot answer", () => {
  assert.deepEqual(localItems("mlsql", "lo").map((i) => i.label), ["load"]);
  assert.deepEqual(localItems("python", "lo"), []);
  assert.deepEqual(localItems("mlsql", ""), []);
});

test("kernel items become CodeMirror options, columns of the select boosted", () => {
  assert.deepEqual(toOptions([{ label: "id", type: "property", detail: "t: int64", boost: "10" }]),
    [{ label: "id", type: "property", detail: "t: int64", boost: 10 }]);
  // A statement's doc, with its section of docs/language.md, goes beside the option: a function
  // that builds it with the section as a link (doclinks.js); a doc without one stays text.
  assert.equal(typeof toOptions([{ label: "load", type: "keyword", info: "load …\ndocs/language.md#load" }])[0].info,
    "function");
  assert.equal(toOptions([{ label: "x", type: "property", info: "a parameter" }])[0].info, "a parameter");
});

test("a schema as text", () => {
  assert.equal(schemaText({ name: "t", rows: 1, columns: [{ name: "id", type: "int64" }] }), "t: 1 row\n  id  int64");
});

test("a word's hover doc is shown as it is", () => {
  assert.equal(schemaText({ name: "load", doc: "load FORMAT.`path` …\ndocs/language.md#load" }), "load FORMAT.`path` …\ndocs/language.md#load");
});
