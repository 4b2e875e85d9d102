// timeline.js: the space-time diagram's data.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Timeline, geometry } from "../timeline.js";

const req = (id, from, to) => ({ id, type: "REQUEST", from, to });
const rep = { id: 3, type: "REPLY", from: 1, to: 0 };
// P0 asks, sends to P1 and P2; P1 replies; the message to P2 is lost; P0 enters and
// leaves the CS; P2 crashes.
const batches = () => [
  { step: 1, t: 0, events: [
    { seq: 0, t: 0, type: "request", node: 0 },
    { seq: 1, t: 0, type: "send", node: 0, msg: req(1, 0, 1) },
    { seq: 2, t: 0, type: "send", node: 0, msg: req(2, 0, 2) },
  ] },
  { step: 2, t: 1, events: [
    { seq: 3, t: 1, type: "deliver", node: 1, msg: req(1, 0, 1) },
    { seq: 4, t: 1, type: "rule", node: 1, rule: "RR1" },
    { seq: 5, t: 1, type: "send", node: 1, msg: rep },
  ] },
  { step: 3, t: 2, events: [
    { seq: 6, t: 2, type: "drop", msg: req(2, 0, 2), reason: "loss" },
    { seq: 7, t: 2, type: "deliver", node: 0, msg: rep },
    { seq: 8, t: 2, type: "enter", node: 0 },
  ] },
  { step: 4, t: 3, events: [
    { seq: 9, t: 3, type: "exit", node: 0 },
    { seq: 10, t: 3, type: "crash", node: 2 },
  ] },
];

function timeline() {
  const d = new Timeline([0, 1, 2]);
  for (const b of batches()) d.addBatch(b);
  d.horizon = 4;
  return d;
}

test("a column per batch, a dot per process in it", () => {
  const d = timeline();
  assert.deepEqual(d.cols.map((c) => c.step), [1, 2, 3, 4]);
  assert.deepEqual(d.dots.map((x) => [x.col, x.p, x.evs]), [
    [0, 0, [0, 1, 2]], [1, 1, [3, 4, 5]], [2, 0, [7, 8]], [3, 0, [9]], [3, 2, [10]],
  ]);
  assert.deepEqual(d.dots[1].rules, ["RR1"]);
  assert.equal(d.lastSeq, 10);
});

test("messages end delivered or lost; stays and down times are bars", () => {
  const d = timeline();
  const fates = [...d.msgs.values()].map((m) => [m.id, m.sCol, m.eCol, m.fate, m.reason]);
  assert.deepEqual(fates, [[1, 0, 1, "delivered", ""], [2, 0, 2, "dropped", "loss"], [3, 1, 2, "delivered", ""]]);
  assert.deepEqual([d.delivered, d.dropped], [2, 1]);
  assert.deepEqual(d.bars, [{ kind: "cs", p: 0, c0: 2, c1: 3 }, { kind: "down", p: 2, c0: 3, c1: -1 }]);
  assert.equal(d.describeMsg(d.msgs.get(2)), "REQUEST #2: P0 → P2, sent at step 1, lost at step 3 (loss)");
});

test("the last column at a step", () => {
  const d = timeline();
  for (const [step, want] of [[0, -1], [1, 0], [2, 1], [3.5, 2], [99, 3]]) assert.equal(d.lastColAt(step), want, `step ${step}`);
});

test("causal relations between dots and messages", () => {
  const d = timeline();
  const [ask, reply, enter, , crash] = d.dots;
  const cases = [
    [reply, ask, "past"], [ask, reply, "future"], [enter, reply, "past"],
    [reply, crash, ""], [crash, ask, ""], [ask, ask, "sel"],
  ];
  for (const [from, other, want] of cases) assert.equal(d.relation(from, other), want, `${from.i} ~ ${other.i}`);
  assert.equal(d.msgRelation(enter, d.msgs.get(3)), "past");
  assert.equal(d.msgRelation(ask, d.msgs.get(3)), "future");
  assert.equal(d.msgRelation(crash, d.msgs.get(1)), "");
  assert.deepEqual(d.dotClock(enter), { lamport: 6, vector: [5, 2, 0] }, "after its last event");
  assert.deepEqual(d.describeDot(reply), [
    "P1 · step 2 · t=1", "receives REQUEST #1 from P0", "rule RR1", "sends REPLY #3 to P0",
    "Lamport 4 · vector [2, 2, 0]",
  ]);
});

test("the stream: replays are skipped, new batches appended, a rewrite refused", () => {
  const next = { step: 5, t: 4, events: [{ seq: 11, t: 4, type: "recover", node: 2 }] };
  const replay = batches()[1];
  const cases = [
    // frame, follows, columns after
    [{ horizon: 4, batches: [replay] }, true, 4],
    [{ horizon: 5, batches: [replay, next] }, true, 5],
    [{ horizon: 3, batches: [] }, false, 4], // a lower horizon: the future was rewritten
    [{ horizon: 5, batches: [{ ...next, events: [{ ...next.events[0], seq: 12 }] }] }, false, 4], // a gap
    [{ horizon: 4, batches: [{ ...replay, events: [{ ...replay.events[0], node: 2 }] }] }, false, 4], // other content
    [{ horizon: 4, batches: [{ ...replay, step: 3 }] }, false, 4], // another step
  ];
  for (const [f, want, cols] of cases) {
    const d = timeline();
    assert.equal(d.follow(f), want, JSON.stringify(f).slice(0, 80));
    assert.equal(d.cols.length, cols);
  }
  const cut = timeline();
  cut.truncated = true;
  assert.equal(cut.follow({ horizon: 5, batches: [next] }), true);
  assert.equal(cut.cols.length, 4, "a truncated timeline stops where it was cut");
  assert.equal(cut.horizon, 5);
});

test("the diagram's size", () => {
  const cases = [
    // processes, viewport height: column width, row height, height
    [3, 0, 26, 44, 162],
    [3, 120, 26, 24, 102],
    [32, 400, 18, 16, 542],
    [0, 300, 26, 44, 74],
  ];
  for (const [n, h, colW, rowH, height] of cases) {
    const g = geometry(n, h);
    assert.deepEqual([g.colW, g.rowH, g.height], [colW, rowH, height], `${n} in ${h}`);
  }
});
