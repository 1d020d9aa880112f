// Result charts and values without a browser: defaults from column types, grouping, markers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chartData, defaultChart, fitChart, kindOf, numberOf } from "../src/chartdata.js";
import { cellClass, cellText } from "../src/paging.js";

const COLS = [{ name: "k", type: "int64" }, { name: "g", type: "string" }, { name: "v", type: "double" }];

test("the first chart puts text across and numbers up", () => {
  assert.deepEqual(defaultChart(COLS), { type: "bar", x: "g", y: ["k", "v"], agg: "sum", group: null });
  const time = [{ name: "day", type: "date32[day]" }, { name: "n", type: "int64" }];
  assert.equal(defaultChart(time).type, "line");
  // A saved chart naming a column the result lost falls back to the defaults for it.
  assert.deepEqual(fitChart({ type: "pie", x: "gone", y: ["v"], agg: "max", group: "nope" }, COLS),
    { type: "pie", x: "g", y: ["v"], agg: "max", group: null });
});

test("repeated x values are aggregated, one series per group value", () => {
  const rows = [[1, "a", 2], [1, "b", 3], [2, "a", 5], [1, "a", 4]];
  const sum = chartData(COLS, rows, { type: "bar", x: "k", y: ["v"], agg: "sum", group: null });
  assert.deepEqual(sum.xs, [1, 2]);
  assert.deepEqual(sum.series, [{ label: "v", values: [9, 5] }]);
  const avg = chartData(COLS, rows, { type: "bar", x: "k", y: ["v"], agg: "avg", group: "g" });
  assert.deepEqual(avg.series.map((s) => s.label), ["a", "b"]);
  assert.deepEqual(avg.series[0].values, [3, 5]);
  assert.deepEqual(avg.series[1].values, [3, null]);
  const count = chartData(COLS, rows, { type: "bar", x: "g", y: [], agg: "count", group: null });
  assert.deepEqual(count.labels, ["a", "b"]);
  assert.deepEqual(count.series[0].values, [3, 1]);
});

test("markers read as numbers and as text", () => {
  assert.equal(numberOf({ $: "int", text: "9007199254740993" }), 9007199254740993);
  assert.equal(numberOf({ $: "float", text: "NaN" }), null);
  assert.equal(cellText({ $: "int", text: "9007199254740993" }), "9007199254740993");
  assert.equal(cellText({ $: "binary", size: 2, base64: "YWI=" }), "0x6162 (2 bytes)");
  assert.equal(cellText({ $: "binary", size: 1000, hex: "00ff" }), "0x00ff… (1,000 bytes)");
  assert.equal(cellText({ $: "list", items: [1, 2], more: 98 }), "[1,2,… 98 more]");
  assert.equal(cellText({ $: "map", value: { $: 1 } }), '{"$":1}');
  assert.equal(cellClass(null), "null");
  assert.equal(cellClass({ $: "decimal", text: "1.5" }), "num");
});

test("Spark's type names chart as Arrow's did", () => {
  for (const t of ["int", "bigint", "smallint", "tinyint", "double", "float", "decimal(38,0)", "int64", "decimal128(3, 1)"]) {
    assert.equal(kindOf(t), "number", t);
  }
  for (const t of ["date", "timestamp", "timestamp_ntz", "date32[day]"]) assert.equal(kindOf(t), "time", t);
  for (const t of ["string", "boolean", "large_string"]) assert.equal(kindOf(t), "text", t);
  for (const t of ["interval day to second", "array<int>", "binary"]) assert.equal(kindOf(t), "other", t);
});
