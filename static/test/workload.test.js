import { test } from "node:test";
import assert from "node:assert/strict";
import { defaultWorkload, workloadScenario, WORKLOAD_TITLE } from "../workload.js";

test("the default workload is a function of the seed", () => {
  const a = defaultWorkload("mutex", [0, 1, 2, 3, 4], 7);
  assert.deepEqual(a, defaultWorkload("mutex", [0, 1, 2, 3, 4], 7));
  assert.equal(a.events.length, 5);
  assert.deepEqual(a.events.map((e) => e.node).sort(), [0, 1, 2, 3, 4]);
  assert.equal(a.events.filter((e) => e.at === 0).length >= 2, true);
});

test("an election's workload crashes the highest and the lowest calls", () => {
  const { events } = defaultWorkload("election", [3, 1, 4, 0, 2], 1);
  assert.deepEqual(events, [{ at: 0, do: "crash", node: 4 }, { at: 1, do: "elect", node: 0 }]);
});

test("a run with something scheduled gets no workload", () => {
  assert.equal(workloadScenario({ version: 2, events: [{ at: 0, do: "request", node: 1 }] }, "mutex", [0, 1], 1), null);
  const sc = workloadScenario({ version: 2, algorithm: "central", seed: 1 }, "mutex", [0, 1], 1);
  assert.equal(sc.title, WORKLOAD_TITLE);
  assert.equal(sc.captions[0].seq, 0);
});
