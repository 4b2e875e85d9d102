// decor.js: the sizes and shapes of the token and leader marks.
import { test } from "node:test";
import assert from "node:assert/strict";
import { MARK_MIN, markSize, starPath, diamondPath } from "../decor.js";

// extent is the width and height of a path made of M/L points.
function extent(d) {
  const nums = d.match(/-?[0-9.]+/g).map(Number);
  const xs = nums.filter((_, i) => i % 2 === 0), ys = nums.filter((_, i) => i % 2 === 1);
  return { w: Math.max(...xs) - Math.min(...xs), h: Math.max(...ys) - Math.min(...ys) };
}

test("marks read from afar: never under MARK_MIN px, growing with the process", () => {
  assert.equal(MARK_MIN, 30);
  for (const r of [8, 10, 20, 27]) assert.equal(markSize(r), MARK_MIN, `r=${r}`);
  assert.ok(markSize(34) > MARK_MIN);
});

test("a star and a diamond as wide as asked", () => {
  const star = extent(starPath(30));
  assert.ok(Math.abs(star.w - 30) < 0.1 && star.h > 27, `star ${JSON.stringify(star)}`);
  const diamond = extent(diamondPath(30));
  assert.ok(Math.abs(diamond.w - 30) < 0.1 && Math.abs(diamond.h - 36) < 0.1, `diamond ${JSON.stringify(diamond)}`);
  assert.equal(starPath(30).split("L").length, 10, "five points, ten corners");
});
