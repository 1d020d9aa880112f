import { test } from "node:test";
import assert from "node:assert/strict";
import { allows, atLeast, needs } from "../src/roles.js";

test("each role may do what docs/security.md says, and no more", () => {
  assert.equal(allows("viewer", "help"), true);
  assert.equal(allows("viewer", "run"), false);
  assert.equal(allows("runner", "run-all"), true);
  assert.equal(allows("runner", "interrupt"), true);
  assert.equal(allows("runner", "edit"), false);
  assert.equal(allows("runner", "run-insert"), false, "inserting a cell is editing");
  assert.equal(allows("editor", "delete"), true);
  assert.equal(allows("editor", "restore"), true);
  assert.equal(allows("editor", "share"), false);
  assert.equal(allows("owner", "share"), true);
  assert.equal(needs("select-next"), "viewer");
});

test("an unknown or missing role counts as a viewer", () => {
  assert.equal(atLeast(undefined, "runner"), false);
  assert.equal(atLeast("admin?", "viewer"), true);
});
