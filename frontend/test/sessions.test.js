import { test } from "node:test";
import assert from "node:assert/strict";
import { clusterText, formatAge, formatBytes } from "../src/sessions.js";

test("a session's memory reads in the unit that fits", () => {
  assert.equal(formatBytes(null), "—");
  assert.equal(formatBytes(512), "512 B");
  assert.equal(formatBytes(1536), "1.5 KB");
  assert.equal(formatBytes(350 * 1024 * 1024), "350 MB");
  assert.equal(formatBytes(3.2 * 1024 ** 3), "3.2 GB");
});

test("idle time reads in seconds, minutes or hours", () => {
  assert.equal(formatAge(undefined), "—");
  assert.equal(formatAge(12.4), "12 s");
  assert.equal(formatAge(600), "10 min");
  assert.equal(formatAge(3 * 3600 + 120), "3 h 2 min");
});

test("the Ray cluster column says whose cluster a session's Ray work runs on", () => {
  assert.equal(clusterText(null), "—");
  assert.equal(clusterText({ kind: "own", up: true, memory_bytes: 700 * 1024 * 1024 }), "its own (700 MB)");
  assert.equal(clusterText({ kind: "own", up: false, memory_bytes: null }), "its own (not started)");
  assert.equal(clusterText({ kind: "shared" }), "the shared head");
  assert.equal(clusterText({ kind: "team", name: "team-a" }), "team team-a");
  assert.equal(clusterText({ kind: "external", name: null }), "the server's cluster");
});
