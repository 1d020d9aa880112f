import { test } from "node:test";
import assert from "node:assert/strict";
import { hunks, revisionText } from "../src/revisions.js";
import { allows, setRoles } from "../src/roles.js";

test("a cell's diff is shown without the id header lines", () => {
  const diff = "--- r1/abc\n+++ r2/abc\n@@ -1 +1 @@\n-select 2;\n+select 3;\n";
  assert.equal(hunks(diff), "@@ -1 +1 @@\n-select 2;\n+select 3;\n");
  // A source line that merely starts with dashes, inside a hunk, stays.
  assert.equal(hunks("@@ -1 +1 @@\n--- a comment\n"), "@@ -1 +1 @@\n--- a comment\n");
  assert.equal(hunks(""), "");
});

test("a revision reads as number, label, authors", () => {
  const text = revisionText({ number: 12, label: "first draft", authors: ["ann", "bob"], created_at: "2026-12-01T10:00:00+00:00" });
  assert.ok(text.startsWith("#12 · first draft · ann, bob · "), text);
  assert.ok(revisionText({ number: 3, label: null, authors: [], author: "eve", created_at: "x" }).startsWith("#3 · eve · "));
  assert.ok(revisionText({ number: 1, authors: [], author: null, created_at: "x" }).startsWith("#1 · unknown"));
});

test("notebook-wide actions need the owner, naming a version an editor", () => {
  setRoles([{ name: "viewer" }, { name: "runner" }, { name: "editor" }, { name: "owner" }]);
  assert.equal(allows("owner", "move"), true);
  assert.equal(allows("editor", "move"), false);
  assert.equal(allows("editor", "delete-notebook"), false);
  assert.equal(allows("owner", "delete-notebook"), true);
  assert.equal(allows("editor", "save-version"), true);
  assert.equal(allows("runner", "save-version"), false);
  assert.equal(allows("viewer", "rename"), false);
  assert.equal(allows(undefined, "share"), false); // a row without a role gets nothing
});
