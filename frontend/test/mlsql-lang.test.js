import { test } from "node:test";
import assert from "node:assert/strict";
import { StringStream } from "@codemirror/language";
import { mlsqlStream } from "../src/mlsql-lang.js";

function tokens(text) {
  const state = mlsqlStream.startState();
  const out = [];
  for (const line of text.split("\n")) {
    const s = new StringStream(line, 4, 2);
    while (!s.eol()) {
      const style = mlsqlStream.token(s, state);
      if (style) out.push([s.current(), style]);
      s.start = s.pos;
    }
  }
  return out;
}

test("MLSQL statements, formats, paths and variables", () => {
  const t = tokens("load parquet.`/tmp/m` where a=\"${x}\" as t;");
  assert.deepEqual(t.slice(0, 3), [["load", "keyword"], ["parquet", "typeName"], [".", "punctuation"]]);
  assert.ok(t.some(([s, k]) => s === "`/tmp/m`" && k === "string.special"));
  assert.ok(t.some(([s, k]) => s === "as" && k === "keyword"));
  assert.deepEqual(tokens('!python conf "schema=file";')[0], ["!python", "keyword"]);
});

test("block strings and comments span lines", () => {
  const t = tokens("run t as Ray.`` where code='''\nprint(1)\n''' and x=1; -- done");
  assert.ok(t.some(([s, k]) => s === "print(1)" && k === "string"));
  assert.deepEqual(t[t.length - 1], ["-- done", "comment"]);
  assert.deepEqual(tokens("/* a\nb */ set")[2], ["set", "keyword"]);
});
