import { test } from "node:test";
import assert from "node:assert/strict";
import { applyEdits, expandReplacement, findAll, makeMatcher, nearestMatch, replacementEdits } from "../src/findmatch.js";
import { cellTitle, foldedCells, foldsHiding, headingsOf, outlineRows } from "../src/outlinemodel.js";

const cells = [{ id: "a", text: "select Foo from t as foo;" }, { id: "b", text: "x" }, { id: "c", text: "FOO.bar" }];

test("find ignores case unless asked, and takes the query literally unless it is a regex", () => {
  assert.deepEqual(findAll(cells, makeMatcher("foo")).map((m) => [m.cellId, m.from, m.to]), [["a", 7, 10], ["a", 21, 24], ["c", 0, 3]]);
  assert.equal(findAll(cells, makeMatcher("foo", { caseSensitive: true })).length, 1);
  assert.equal(findAll(cells, makeMatcher("o.b")).length, 1);
  assert.equal(findAll(cells, makeMatcher("f.o")).length, 0);
  assert.equal(findAll(cells, makeMatcher("f.o", { regex: true })).length, 4); // Foo, fro(m), foo, FOO
  assert.match(makeMatcher("(", { regex: true }).error, /parenthes|group|\(/i);
  assert.equal(findAll(cells, makeMatcher("x*", { regex: true })).length, 1); // empty matches skipped
  assert.deepEqual(makeMatcher("").find("abc"), []);
});

test("replacements: groups expanded in regex mode, each cell's edits last first", () => {
  const m = makeMatcher("(\\w+) as (?<n>\\w+)", { regex: true });
  const [hit] = m.find("select a as b;");
  assert.equal(expandReplacement("$2 as $1 ($<n>, $&, $$)", hit, true), "b as a (b, a as b, $)");
  assert.equal(expandReplacement("$1", hit, false), "$1");
  const all = findAll(cells, makeMatcher("foo"));
  const edits = replacementEdits(all, "bar", false);
  assert.deepEqual(edits.map((e) => [e.cellId, e.from]), [["a", 21], ["a", 7], ["c", 0]]);
  const texts = applyEdits(Object.fromEntries(cells.map((c) => [c.id, c.text])), edits);
  assert.deepEqual(texts, { a: "select bar from t as bar;", b: "x", c: "bar.bar" });
});

test("after an edit the shown match is the nearest one at or after where it was", () => {
  const all = findAll(cells, makeMatcher("foo"));
  assert.equal(nearestMatch(all, ["a", "b", "c"], { cellId: "a", from: 8 }), 1);
  assert.equal(nearestMatch(all, ["a", "b", "c"], { cellId: "b", from: 0 }), 2);
  assert.equal(nearestMatch(all, ["a", "b", "c"], { cellId: "c", from: 5 }), 0); // wraps
  assert.equal(nearestMatch([], ["a"], null), -1);
});

test("the outline: headings outside code fences, code cells by their first line", () => {
  assert.deepEqual(headingsOf("# One\ntext\n```\n# not a heading\n```\n## Two ##\n#no"), [
    { level: 1, text: "One" }, { level: 2, text: "Two" }]);
  assert.equal(cellTitle("\n--%python\n  print(1)\nprint(2)"), "print(1)");
  const nb = [{ id: "h1", kind: "markdown", source: "# Load" }, { id: "c1", kind: "mlsql", source: "load x as t;" },
    { id: "h2", kind: "markdown", source: "## Clean" }, { id: "c2", kind: "python", source: "" },
    { id: "h3", kind: "markdown", source: "# Train" }, { id: "c3", kind: "mlsql", source: "train t;" }];
  assert.deepEqual(outlineRows(nb).map((r) => [r.cellId, r.level, r.text]), [
    ["h1", 1, "Load"], ["c1", 2, "load x as t;"], ["h2", 2, "Clean"], ["c2", 3, "(empty python cell)"],
    ["h3", 1, "Train"], ["c3", 2, "train t;"]]);
  // A folded H1 hides up to the next H1 (its H2 too); a folded H2 up to the next H2 or H1.
  assert.deepEqual([...foldedCells(nb, new Set(["h1"])).hidden], ["c1", "h2", "c2"]);
  assert.deepEqual([...foldedCells(nb, new Set(["h2"])).hidden], ["c2"]);
  assert.equal(foldedCells(nb, new Set(["h1"])).under.get("h1"), 3);
  assert.deepEqual(foldsHiding(nb, new Set(["h1", "h2"]), "c2"), ["h2", "h1"]);
  assert.deepEqual(foldsHiding(nb, new Set(["h2"]), "c3"), []);
});
