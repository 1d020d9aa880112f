import { test } from "node:test";
import assert from "node:assert/strict";
import { docHref, hasDocLink, slugify } from "../src/doclinks.js";

test("headings slug as GitHub's anchors, which completion's docs name", () => {
  assert.equal(slugify("Machine learning and extensions"), "machine-learning-and-extensions");
  assert.equal(slugify("load"), "load");
  assert.equal(slugify("!python env / !python conf"), "python-env--python-conf");
  assert.equal(slugify("run … as Ray"), "run--as-ray");
  assert.equal(slugify("  Commands "), "commands");
});

test("a docs section names its page", () => {
  assert.equal(docHref("docs/language.md#machine-learning-and-extensions"), "/docs/language#machine-learning-and-extensions");
  assert.equal(docHref("docs/security.md"), "/docs/security");
  assert.equal(docHref("docs/../README.md#x"), null);
  assert.equal(docHref("https://example.com/docs/language.md"), null);
  assert.equal(docHref("docs/language.md#a\"b"), null);
  assert.equal(docHref("load … as t"), null);
  assert.ok(hasDocLink("load FORMAT.`path` as t: read a table\ndocs/language.md#load"));
  assert.ok(!hasDocLink("a parameter"));
});
