import { test } from "node:test";
import assert from "node:assert/strict";
import {
  arrangementBody, isBusy, moveTile, refreshParams, removeTile, resizeTile, runStamp, tileKey, tileTitle,
} from "../src/dashboardmodel.js";

const tiles = [
  { cell_id: "a", kind: "chart", width: 2, height: 2, cell: { position: 2, title: "cell 2 (select …)" }, run: null },
  { cell_id: "b", kind: "result", width: 4, height: 1, cell: null, run: { status: "running" } },
  { cell_id: "a", kind: "result", width: 1, height: 3, cell: { position: 2, title: "" }, run: { status: "done" } },
];

test("tiles move within the list and never past its ends", () => {
  assert.deepEqual(moveTile(tiles, 0, 1).map(tileKey), ["result:b", "chart:a", "result:a"]);
  assert.deepEqual(moveTile(tiles, 2, -1).map(tileKey), ["chart:a", "result:a", "result:b"]);
  assert.equal(moveTile(tiles, 0, -1), tiles);
  assert.equal(moveTile(tiles, 2, 1), tiles);
  assert.equal(moveTile(tiles, 7, 1), tiles);
  assert.deepEqual(removeTile(tiles, 1).map(tileKey), ["chart:a", "result:a"]);
  assert.deepEqual(tiles.map(tileKey), ["chart:a", "result:b", "result:a"]); // never changed in place
});

test("sizes stay within the grid: 1-4 columns, 1-3 rows", () => {
  assert.equal(resizeTile(tiles, 0, 1, 0)[0].width, 3);
  assert.equal(resizeTile(tiles, 1, 1, 0), tiles); // 4 wide already
  assert.equal(resizeTile(tiles, 2, -1, 0), tiles); // 1 wide already
  assert.equal(resizeTile(tiles, 2, 0, 1), tiles); // 3 tall already
  assert.deepEqual([resizeTile(tiles, 2, 0, -2)[2].height, resizeTile(tiles, 0, -5, 5)[0].width], [1, 1]);
  assert.equal(resizeTile(tiles, 9, 1, 1), tiles);
});

test("the PUT body holds only a tile's own fields and the revision it is based on", () => {
  assert.deepEqual(arrangementBody(tiles.slice(0, 1), 4), {
    tiles: [{ cell_id: "a", kind: "chart", width: 2, height: 2 }], base_revision: 4 });
});

test("titles, busy tiles and what makes a tile draw again", () => {
  assert.equal(tileTitle(tiles[0]), "cell 2 (select …)");
  assert.match(tileTitle(tiles[1]), /deleted cell/);
  assert.equal(tileTitle(tiles[2]), "cell 2");
  assert.deepEqual(tiles.map(isBusy), [false, true, false]);
  const later = { ...tiles[2], run: { status: "done", result: { rows: [[1]] } } };
  assert.notEqual(runStamp(later), runStamp(tiles[2]));
  assert.equal(runStamp({ ...tiles[2] }), runStamp(tiles[2]));
});

test("Refresh sends every parameter, an empty input as its default", () => {
  const declared = [{ name: "n", default: "3" }, { name: "day", default: "x" }];
  assert.deepEqual(refreshParams(declared, { n: "5", day: "" }), { n: "5", day: "x" });
  assert.deepEqual(refreshParams(declared, {}), { n: "3", day: "x" });
  assert.deepEqual(refreshParams(null, { n: "1" }), {});
});
