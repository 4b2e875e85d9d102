// rulestrip.js and projector.js: what the rule strip shows and the type-size steps.
import { test } from "node:test";
import assert from "node:assert/strict";
import { actingRules, fitSize, mergeActing, namesOf } from "../rulestrip.js";
import { nextScale, SCALES } from "../projector.js";

test("the strip groups the lit rules by process, in firing order, each rule once", () => {
  const cases = [
    [[], []],
    [[{ node: 3, rule: "RH1" }], [{ node: 3, rules: ["RH1"] }]],
    [
      [{ node: 1, rule: "RA1" }, { node: 1, rule: "RA2" }, { node: 0, rule: "RH1" }, { node: 1, rule: "RA1" }],
      [{ node: 1, rules: ["RA1", "RA2"] }, { node: 0, rules: ["RH1"] }],
    ],
  ];
  for (const [lit, want] of cases) assert.deepEqual(actingRules(lit), want, JSON.stringify(lit));
});

test("the strip takes the largest type that fits, never below the floor", () => {
  const tried = [];
  assert.equal(fitSize(30, 12, 1, (s) => { tried.push(s); return s <= 20; }), 20);
  assert.deepEqual(tried.slice(0, 3), [30, 29, 28], "largest first");
  assert.equal(fitSize(30, 12, 1, () => true), 30, "fits at once");
  assert.equal(fitSize(30, 12, 1, () => false), 12, "nothing fits: the floor");
});

test("A+ and A- step through the scales and stop at the ends", () => {
  assert.equal(nextScale(1, 1), 1.15);
  assert.equal(nextScale(1, -1), 0.9);
  assert.equal(nextScale(SCALES[0], -1), SCALES[0]);
  assert.equal(nextScale(SCALES.at(-1), 1), SCALES.at(-1));
  assert.equal(nextScale(1.05, 1), 1.3, "between two scales: from the next one up");
});

test("processes that fired the same rules share one line", () => {
  const acting = actingRules([0, 1, 2, 3, 4, 5, 6, 7].map((node) => ({ node, rule: "BU-1" })).concat([{ node: 9, rule: "RH1" }]));
  assert.deepEqual(mergeActing(acting), [{ nodes: [0, 1, 2, 3, 4, 5, 6, 7], rules: ["BU-1"] }, { nodes: [9], rules: ["RH1"] }]);
  assert.equal(namesOf([0, 1, 2, 3, 4, 5, 6, 7]), "P0–P7");
  assert.equal(namesOf([5, 0, 1, 3]), "P0, P1, P3, P5");
  assert.equal(namesOf([2, 3, 4, 7]), "P2–P4, P7");
});
