// The pure parts of the page's DOM modules: captions, menus, SVG export colours.
import { test } from "node:test";
import assert from "node:assert/strict";
import { captionAt } from "../captions.js";
import { allowed } from "../menus.js";
import { colour } from "../svgexport.js";

test("the caption shown is the latest the run has reached", () => {
  const caps = [{ seq: 2 }, { seq: 5 }, { seq: 9 }];
  for (const [seq, want] of [[0, -1], [2, 0], [4, 0], [5, 1], [100, 2]]) assert.equal(captionAt(caps, seq), want, `seq ${seq}`);
  assert.equal(captionAt([], 10), -1);
});

test("which interventions a process's menu offers", () => {
  const up = { alive: true, cs: false }, inCS = { alive: true, cs: true }, down = { alive: false, cs: false };
  const cases = [
    ["request", [true, false, false]],
    ["release", [false, true, false]],
    ["elect", [true, true, false]],
    ["crash", [true, true, false]],
    ["recover", [false, false, true]],
    [undefined, [true, true, true]], // buttons that are not interventions
  ];
  for (const [a, want] of cases) assert.deepEqual([up, inCS, down].map((n) => allowed(a, n)), want, a);
});

test("computed colours become #rrggbb and an opacity", () => {
  const cases = [
    ["rgb(255, 0, 0)", { hex: "#ff0000", a: 1 }],
    ["rgba(0, 128, 255, 0.5)", { hex: "#0080ff", a: 0.5 }],
    ["rgb(10 20 30 / 25%)", { hex: "#0a141e", a: 0.25 }],
    ["color(srgb 1 0.5 0)", { hex: "#ff8000", a: 1 }],
    ["color(srgb 0 0 1 / 0.2)", { hex: "#0000ff", a: 0.2 }],
    ["rgb(300, -4, 0)", { hex: "#ff0000", a: 1 }],
    ["currentcolor", { hex: "currentcolor", a: 1 }],
  ];
  for (const [v, want] of cases) assert.deepEqual(colour(v), want, v);
});

test("Explore says what it added in the algorithm's terms", async () => {
  const { addedWorkload } = await import("../explore.js");
  assert.equal(addedWorkload("election", "P0 calls an election at the start"), "No election is started in this scenario, so: P0 calls an election at the start.");
  assert.equal(addedWorkload("mutex", "every process asks for the CS once, at the start"), "No requests in this scenario, so: every process asks for the CS once, at the start.");
  assert.equal(addedWorkload("mutex", ""), "");
});
