import { test } from "node:test";
import assert from "node:assert/strict";
import { clampWidth, formatBytes, loadStatement, previewStatement } from "../src/datapanel.js";

test("the load a data panel row inserts", () => {
  assert.equal(loadStatement("sales.orders", "delta"), "load delta.`sales.orders` as orders;");
  assert.equal(loadStatement("sales.orders", "delta", 3), 'load delta.`sales.orders` where versionAsOf="3" as orders_v3;');
  assert.equal(loadStatement("uploads/fruit sales.csv", "file"),
    'load csv.`uploads/fruit sales.csv` where header="true" and inferSchema="true" as fruit_sales;');
  assert.equal(loadStatement("exports/2024.parquet", "file"), "load parquet.`exports/2024.parquet` as t_2024;");
  assert.equal(loadStatement("events/", "folder"), "load parquet.`events/` as events;");
});

test("sizes in the panel", () => {
  assert.equal(formatBytes(null), "?");
  assert.equal(formatBytes(512), "512 B");
  assert.equal(formatBytes(1536), "1.5 KB");
});

test("a preview is the first 20 rows as a table of its own", () => {
  assert.equal(previewStatement("", "mine"), "select * from mine limit 20 as mine_preview;");
  assert.equal(previewStatement("load delta.`a.b` as b;", "b"), "load delta.`a.b` as b;\nselect * from b limit 20 as b_preview;");
});

test("a dragged panel keeps the notebook at least 480 px beside it", () => {
  assert.equal(clampWidth(400, 1400), 400);
  assert.equal(clampWidth(900, 1000), 520);
  assert.equal(clampWidth(100, 1000), 260);
});
