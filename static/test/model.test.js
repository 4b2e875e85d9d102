// model.js: the client's copy of the run follows the server's frames.
import { test } from "node:test";
import assert from "node:assert/strict";
import { newModel, applyHello, applySnapshot, applyEvents, applyState, leaders, holdsToken, standingViolation } from "../model.js";

const clockFields = { step: 3, t: 7, horizon: 9, playing: true, speed: 2, quiet: false, interventions: 1 };
const node = (id, extra = {}) => ({ id, alive: true, cs: false, leader: -1, group: 0, state: {}, ...extra });
const msg = (id, from, to) => ({ id, type: "REQUEST", from, to });

function hello(ids) {
  const m = newModel();
  applyHello(m, { ids, scenario: { version: 1 }, network: { delay: [1, 3] }, seed: 5, cs: 2, rate: 4, recentMax: 3, name: "run" });
  return m;
}

test("hello sets the processes' ids and positions and bumps the topology", () => {
  const m = hello([4, 2, 9]);
  assert.deepEqual(m.ids, [4, 2, 9]);
  assert.deepEqual([...m.index], [[4, 0], [2, 1], [9, 2]]);
  assert.equal(m.topology, 1);
  assert.equal(m.rate, 4);
  assert.equal(m.recentMax, 3);
});

test("a snapshot replaces nodes, messages in flight, lit rules and the log", () => {
  const m = hello([0, 1]);
  applySnapshot(m, {
    ...clockFields, stopped: "",
    nodes: [node(0, { rules: ["RA1"] }), node(1)],
    inflight: [{ msg: msg(5, 0, 1), sent: 2, at: 4 }],
    lit: [{ node: 0, rule: "RA1" }],
    recent: [{ seq: 0 }, { seq: 1 }, { seq: 2 }, { seq: 3 }, { seq: 4 }],
  });
  assert.equal(m.step, 3);
  assert.equal(m.t, 7);
  assert.equal(m.playing, true);
  assert.deepEqual(m.nodes[0].rules, ["RA1"]);
  assert.deepEqual(m.nodes[1].rules, []);
  assert.deepEqual(m.inflight.get(5), { msg: msg(5, 0, 1), sent: 2, at: 4 });
  assert.deepEqual(m.recent.map((e) => e.seq), [2, 3, 4], "the log keeps recentMax events");
  assert.equal(m.topology, 2, "two processes where there were none");
});

test("events: sends, deliveries, drops and rules, batch by batch", () => {
  const m = hello([0, 1]);
  applySnapshot(m, { ...clockFields, nodes: [node(0), node(1)], inflight: [], lit: [], recent: [] });
  const dropped = applyEvents(m, {
    ...clockFields, step: 5,
    batches: [
      {
        events: [
          { seq: 0, type: "send", t: 1, msg: msg(1, 0, 1) },
          { seq: 1, type: "send", t: 1, msg: msg(2, 0, 1) },
          { seq: 2, type: "send", t: 1, msg: msg(3, 0, 1) },
          { seq: 3, type: "rule", node: 0, rule: "RA1" },
        ],
        arrive: { 1: 3, 2: 4 }, // 3 has no arrival: it is not in flight
        nodes: [node(0, { cs: true })],
      },
      {
        events: [
          { seq: 4, type: "deliver", msg: msg(1, 0, 1) },
          { seq: 5, type: "drop", msg: msg(2, 0, 1) },
          { seq: 6, type: "drop", msg: msg(9, 0, 1) },
          { seq: 7, type: "rule", node: 1, rule: "RR1" },
          { seq: 8, type: "rule", node: 1, rule: "RR2" },
        ],
        arrive: {},
        nodes: [],
      },
    ],
  });
  assert.deepEqual(dropped, [2], "only a message in flight counts as dropped");
  assert.deepEqual([...m.inflight.keys()], []);
  assert.deepEqual(m.lit, [{ node: 1, rule: "RR1" }, { node: 1, rule: "RR2" }], "the latest batch with rules lights them");
  assert.deepEqual(m.nodes[0].rules, ["RA1"], "a process keeps its own latest rules");
  assert.deepEqual(m.nodes[1].rules, ["RR1", "RR2"]);
  assert.equal(m.nodes[0].cs, true, "a batch's nodes replace the process");
  assert.deepEqual(m.recent.map((e) => e.seq), [6, 7, 8]);
  assert.equal(m.step, 5);
});

test("a state frame moves only the clock", () => {
  const m = hello([0]);
  const v = m.version;
  applyState(m, { ...clockFields, playing: false, stopped: "limit" });
  assert.equal(m.playing, false);
  assert.equal(m.stopped, "limit");
  assert.equal(m.version, v + 1);
});

test("a run the server slows says so until a frame without slowed", () => {
  const m = hello([0]);
  applyState(m, { ...clockFields, slowed: 0.25 });
  assert.equal(m.slowed, 0.25);
  applyState(m, { ...clockFields });
  assert.equal(m.slowed, 0);
});

test("leaders are the ids live processes take as leader", () => {
  const m = { nodes: [node(0, { leader: 2 }), node(1, { leader: 2 }), node(2, { leader: 1, alive: false }), node(3)] };
  assert.deepEqual([...leaders(m)], [2]);
});

test("holdsToken is what the server says", () => {
  for (const [token, want] of [[true, true], [false, false], [undefined, false]]) {
    assert.equal(holdsToken({ token }), want, `token ${token}`);
  }
});

test("a violation stands while the run is in it", () => {
  const m = hello([1, 2, 3]);
  const deadlock = { type: "violation", property: "deadlock", detail: "…", nodes: [1, 2, 3], cycle: [1, 2, 3, 1] };
  const pending = { type: "violation", property: "pending", detail: "…", nodes: [2] };
  const mutex = { type: "violation", property: "mutual-exclusion", detail: "…", nodes: [1, 3] };
  m.nodes = [node(1), node(2), node(3)];
  m.recent = [{ type: "deliver" }, deadlock];
  assert.equal(standingViolation(m), deadlock, "a deadlock stands when nothing happened since");
  m.recent = [deadlock, pending, { type: "end" }];
  assert.equal(standingViolation(m), deadlock, "of several, the deadlock before a long wait");
  m.recent = [deadlock, { type: "request", node: 1 }];
  assert.equal(standingViolation(m), null, "anything happening ends a quiescent finding");
  m.recent = [pending, { type: "send", node: 1 }];
  assert.equal(standingViolation(m), pending, "a long wait stands while others act");
  m.recent = [pending, { type: "enter", node: 2 }];
  assert.equal(standingViolation(m), null, "until its process enters");
  m.recent = [mutex, { type: "deliver" }];
  m.nodes = [node(1, { cs: true }), node(2), node(3, { cs: true })];
  assert.equal(standingViolation(m), mutex, "two in the CS stand while both are inside");
  m.nodes = [node(1), node(2), node(3, { cs: true })];
  assert.equal(standingViolation(m), null, "and end when one leaves");
  m.recent = [{ type: "enter", node: 1 }];
  assert.equal(standingViolation(m), null);
});
