// causal.js: Lamport and vector clocks from a trace alone (runtime/causal is its Go
// twin; the browser tests check the two agree on real runs).
import { test } from "node:test";
import assert from "node:assert/strict";
import { Causality, isProcessEvent, vectorClocks, happenedBefore, causalPast, causalFuture, clocksAtStep } from "../causal.js";

const ids = [0, 1, 2];
// P0 sends to P1, P2 asks for the CS, P1 receives and sends on to P2, P2 receives,
// P2 runs a rule (not an event), a message to P0 is lost (the network's doing).
const trace = [
  { type: "send", node: 0, msg: { id: 1, from: 0, to: 1 }, step: 1 },
  { type: "request", node: 2, step: 1 },
  { type: "deliver", node: 1, msg: { id: 1, from: 0, to: 1 }, step: 2 },
  { type: "send", node: 1, msg: { id: 2, from: 1, to: 2 }, step: 2 },
  { type: "deliver", node: 2, msg: { id: 2, from: 1, to: 2 }, step: 3 },
  { type: "rule", node: 2, rule: "RR1", step: 3 },
  { type: "drop", msg: { id: 3, from: 2, to: 0 }, step: 4 },
];

test("the clocks of every event", () => {
  const got = vectorClocks(trace, ids);
  assert.deepEqual(got, [
    { process: 0, lamport: 1, vector: [1, 0, 0] },
    { process: 2, lamport: 1, vector: [0, 0, 1] },
    { process: 1, lamport: 2, vector: [1, 1, 0] },
    { process: 1, lamport: 3, vector: [1, 2, 0] },
    { process: 2, lamport: 4, vector: [1, 2, 2] },
    { process: -1, lamport: 0, vector: null },
    { process: -1, lamport: 0, vector: null },
  ]);
});

test("happened-before between pairs", () => {
  const c = vectorClocks(trace, ids);
  const cases = [
    [0, 4, true], [1, 4, true], [0, 2, true], [2, 3, true],
    [4, 0, false], [1, 2, false], [2, 1, false], [0, 0, false], [0, 5, false],
  ];
  for (const [a, b, want] of cases) assert.equal(happenedBefore(c[a], c[b]), want, `${a} -> ${b}`);
});

test("causal past and future of an event", () => {
  const cases = [
    [4, [0, 1, 2, 3], []],
    [0, [], [2, 3, 4]],
    [1, [], [4]],
    [5, [], []], // a rule is not an event
  ];
  for (const [i, past, future] of cases) {
    assert.deepEqual(causalPast(trace, ids, i), past, `past of ${i}`);
    assert.deepEqual(causalFuture(trace, ids, i), future, `future of ${i}`);
  }
});

test("every process's clocks at a step", () => {
  assert.deepEqual(clocksAtStep(trace, ids, 0), [
    { lamport: 0, vector: [0, 0, 0] }, { lamport: 0, vector: [0, 0, 0] }, { lamport: 0, vector: [0, 0, 0] },
  ]);
  assert.deepEqual(clocksAtStep(trace, ids, 2), [
    { lamport: 1, vector: [1, 0, 0] }, { lamport: 3, vector: [1, 2, 0] }, { lamport: 1, vector: [0, 0, 1] },
  ]);
});

test("a dropped message is never delivered with its send's clocks", () => {
  const c = new Causality([0, 1]);
  c.push({ type: "send", node: 0, msg: { id: 1 } });
  c.push({ type: "drop", msg: { id: 1 } });
  const e = c.push({ type: "deliver", node: 1, msg: { id: 1 } });
  assert.deepEqual(c.vector(e), [0, 1]);
});

test("a process keeps its clocks across a crash and a recovery", () => {
  const c = new Causality([0]);
  for (const type of ["request", "crash", "recover"]) c.push({ type, node: 0 });
  assert.equal(c.lamport(2), 3);
});

test("clocks grow past their first allocation", () => {
  const n = 200;
  const c = new Causality([0, 1]);
  for (let i = 0; i < n; i++) c.push({ type: "timer", node: i % 2, name: "t" });
  assert.equal(c.count, n);
  assert.deepEqual(c.vector(n - 1), [0, n / 2], "P1 heard nothing of P0");
  assert.deepEqual(c.vector(n - 2), [n / 2, 0]);
  assert.equal(c.pe(n - 1), n - 1);
  assert.equal(c.pe(n), -1);
});

test("which events belong to a process", () => {
  const cases = [
    [{ type: "send", node: 0 }, true], [{ type: "timer", node: 3 }, true],
    [{ type: "rule", node: 0 }, false], [{ type: "drop" }, false],
    [{ type: "violation" }, false], [{ type: "send" }, false],
  ];
  for (const [ev, want] of cases) assert.equal(isProcessEvent(ev), want, JSON.stringify(ev));
});
