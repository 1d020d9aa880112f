import { test } from "node:test";
import assert from "node:assert/strict";
import { environmentRows, environmentSummary } from "../src/environment.js";

test("the panel lists each package with its version and where it comes from", () => {
  const env = {
    requirements: ["xgboost==2.1.4"], lock_hash: "abc123",
    packages: [
      { name: "numpy-extra", version: "1.0", requested: "", source: "dependency" },
      { name: "xgboost", version: "2.1.4", requested: "xgboost==2.1.4", source: "requirement" },
      { name: "later", version: "", requested: "later", source: "requirement" },
    ],
  };
  assert.deepEqual(environmentRows(env), [
    ["numpy-extra", "1.0", "dependency"],
    ["xgboost", "2.1.4", "requested: xgboost==2.1.4"],
    ["later", "not built", "requested: later"],
  ]);
  assert.match(environmentSummary(env), /^1 requirement, lock abc123\./);
});

test("a notebook without %pip says it uses the base", () => {
  assert.deepEqual(environmentRows({ requirements: [], lock_hash: "", packages: [] }), []);
  assert.match(environmentSummary({ requirements: [] }), /base environment/);
});
