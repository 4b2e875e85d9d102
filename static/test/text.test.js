// text.js: the words the page shows for the run's things.
import { test } from "node:test";
import assert from "node:assert/strict";
import { payloadText, describeInflight, describeEvent, narration, describeMessage, valueText, groupsText, round2, shortFormula, figureText, rangeText, notesText, namesText, violationText } from "../text.js";

const req = { id: 4, type: "REQUEST", from: 1, to: 2, ts: 3 };

test("a message's payload", () => {
  const cases = [
    [{ id: 1, type: "OK", from: 0, to: 1 }, ""],
    [req, "(ts=3)"],
    [{ id: 1, type: "TOKEN", from: 0, to: 1, q: [2, 3], ln: 1 }, "(q=[2,3], ln=1)"],
  ];
  for (const [msg, want] of cases) assert.equal(payloadText(msg), want);
});

test("a message in flight", () => {
  assert.equal(describeInflight({ msg: req, sent: 1, at: 3 }), "REQUEST #4: P1 → P2, ts=3 (sent at t=1, arrives at t=3)");
  assert.equal(describeInflight({ msg: { id: 5, type: "OK", from: 2, to: 1, q: [1, 2] }, sent: 1, at: -1 }),
    "OK #5: P2 → P1, q=[1, 2] (held: you choose when it arrives)");
});

test("a trace event, as its process did it", () => {
  const cases = [
    [{ type: "send", msg: req }, "sends REQUEST #4 to P2 (ts=3)"],
    [{ type: "deliver", msg: req }, "receives REQUEST #4 from P1 (ts=3)"],
    [{ type: "rule", rule: "RA1" }, "rule RA1"],
    [{ type: "rule", rule: "RR2", why: "defer" }, "rule RR2 (defer)"],
    [{ type: "request" }, "asks for the CS"],
    [{ type: "enter" }, "enters the CS"],
    [{ type: "exit" }, "leaves the CS"],
    [{ type: "elect" }, "starts an election"],
    [{ type: "leader", node: 3, leader: 3 }, "becomes the leader"],
    [{ type: "leader", node: 2, leader: 3 }, "takes P3 as leader"],
    [{ type: "crash" }, "crashes"],
    [{ type: "recover" }, "recovers"],
    [{ type: "timer", name: "answer" }, "timer answer fires"],
    [{ type: "drop", msg: req, reason: "loss" }, "REQUEST #4 is lost (loss)"],
    [{ type: "violation", property: "mutual-exclusion", detail: "P1 and P2" }, "violation: mutual-exclusion: P1 and P2"],
    [{ type: "partition", groups: [[0, 1], [2]] }, "partition {P0 P1} {P2}"],
    [{ type: "heal" }, "the partition heals"],
    [{ type: "end" }, "end"],
  ];
  for (const [ev, want] of cases) assert.equal(describeEvent(ev), want, ev.type);
});

test("the log's words for what a process did alone", () => {
  const cases = [
    [{ type: "request" }, " wants to enter the critical section"],
    [{ type: "enter" }, " enters the critical section"],
    [{ type: "exit" }, " leaves the critical section"],
    [{ type: "elect" }, " suspects the leader and starts an election"],
    [{ type: "leader", node: 2, leader: 4 }, " now takes P4 as leader"],
    [{ type: "leader", node: 5, leader: 5 }, " is now the leader"],
    [{ type: "crash" }, " crashes"],
    [{ type: "recover" }, " recovers with a fresh state"],
    [{ type: "timer", name: "heartbeat" }, ": its heartbeat timer fires"],
    [{ type: "send" }, null],
    [{ type: "heal" }, null],
  ];
  for (const [ev, want] of cases) assert.equal(narration(ev), want, ev.type);
});

test("a message of the space-time diagram, with its fate", () => {
  const ids = [10, 20];
  const m = { id: 4, type: "REQUEST", from: 0, to: 1, msg: req, sStep: 2, eStep: 5, reason: "" };
  assert.equal(describeMessage({ ...m, fate: "delivered" }, ids), "REQUEST #4: P10 → P20 (ts=3), sent at step 2, delivered at step 5");
  assert.equal(describeMessage({ ...m, fate: "dropped", reason: "partition" }, ids), "REQUEST #4: P10 → P20 (ts=3), sent at step 2, lost at step 5 (partition)");
  assert.equal(describeMessage({ ...m, fate: "inflight" }, ids), "REQUEST #4: P10 → P20 (ts=3), sent at step 2, still in flight");
});

test("a variable's value in the inspector", () => {
  const cases = [
    [true, "yes"], [false, "no"], [null, ""], [undefined, ""],
    [[], "—"], [[1, 2], "1, 2"], [[[3, 1], [4, 2]], "(3,1) (4,2)"],
    [0, "0"], ["HELD", "HELD"],
  ];
  for (const [v, want] of cases) assert.equal(valueText(v), want, JSON.stringify(v));
});

test("groups, numbers and formulas", () => {
  assert.equal(groupsText([[0, 1], [2]], " | "), "{P0 P1} | {P2}");
  for (const [v, want] of [[null, ""], [undefined, ""], [2, "2"], [1 / 3, "0.33"], [2.005, "2.01"]]) assert.equal(round2(v), want, String(v));
  const formulas = [
    ["3 (REQUEST, GRANT, RELEASE); 0 for the coordinator", "3"],
    ["2(N-1) = 2N-2, O(N)", "2N-2"],
    ["(N-1)^2 = N²-N-1, O(N²)", "N²-N-1"],
    ["N (for a ring of N)", "N"],
    ["2T (a round trip)", "2T"],
    ["T (max 2T)", "T"],
    ["N (x2)", "N (x2)"], // a parenthesis without a word is part of the formula
  ];
  for (const [f, want] of formulas) assert.equal(shortFormula(f), want, f);
});

// Each row's arithmetic: a delay is shown in time units and in T with T the run's
// mean delay (T = 2 here: 2T is 4 time units, T is 2), a count as its value for N.
test("cost figures and their numbers", () => {
  const rows = [
    [["2T", 2, 4, "time"], "2T: 4 = 2 T"],
    [["T", 1, 2, "time"], "T: 2 = 1 T"],
    [["2 (release + grant)", 2, 4, "time"], "2 (release + grant): 4 = 2 T"],
    [["n/2 avg, n-1 worst case", 3, 6, "time"], "n/2 avg, n-1 worst case: 6 = 3 T"],
    [["2T", 2, undefined, "time"], "2T: 2 T"],
    [["3(N-1)", 12, undefined, "messages"], "3(N-1) = 12"],
    [["3", 3, undefined, "messages"], "3"],
    [["((N-1) + (N-2) + … + 1) + N-1 ⇒ O(N²)", 35, undefined, "messages"], "((N-1) + (N-2) + … + 1) + N-1 ⇒ O(N²) = 35"],
    [["O(N²)", null, undefined, "messages"], "O(N²)"],
  ];
  for (const [args, want] of rows) assert.equal(figureText(...args), want, args[0]);
  // A range shows both bounds, never the upper one alone.
  const ranges = [
    [["0 to 2(N-1)", { low: 0, high: 8 }, "messages"], "0 to 2(N-1) = 0 to 8"],
    [["0 to 3", { low: 0, high: 3 }, "messages"], "0 to 3"],
    [["T to 2T", { low: 1, high: 2, lowTime: 2, highTime: 4 }, "time"], "T to 2T: 2 to 4 = 1 to 2 T"],
    [["T to 2T", { low: 1, high: 2 }, "time"], "T to 2T: 1 to 2 T"],
  ];
  for (const [args, want] of ranges) assert.equal(rangeText(...args), want, args[0]);
  assert.equal(notesText(["002"]), "note 002");
  assert.equal(notesText(["000", "004"]), "notes 000, 004");
});

test("processes named in words", () => {
  assert.equal(namesText([]), "");
  assert.equal(namesText([3]), "P3");
  assert.equal(namesText([1, 3]), "P1 and P3");
  assert.equal(namesText([1, 2, 3]), "P1, P2 and P3");
});

test("the status pill's words for a violation, from its data", () => {
  const cases = [
    [{ property: "deadlock", detail: "wait-for cycle P1 -> P2 -> P3 -> P1", nodes: [1, 2, 3], cycle: [1, 2, 3, 1] }, "Deadlock: P1 -> P2 -> P3 -> P1"],
    [{ property: "deadlock", detail: "…", nodes: [1, 2] }, "Stalled, no wait-for cycle: P1 and P2 wait and nothing can come"],
    [{ property: "deadlock", detail: "…", nodes: [3] }, "Stalled, no wait-for cycle: P3 waits and nothing can come"],
    [{ property: "mutual-exclusion", detail: "P3 entered the CS while P1 is in it", nodes: [1, 3] }, "Two in the CS: P1 and P3"],
    [{ property: "mutual-exclusion", detail: "…", nodes: [0, 1, 2] }, "Three in the CS: P0, P1 and P2"],
    [{ property: "pending", detail: "P1 has waited 88 time units", nodes: [1] }, "Waiting too long: P1"],
    [{ property: "leader", detail: "P0 takes P5 as leader but P2 takes P6", nodes: [0, 2] }, "No agreed leader: P0 takes P5 as leader but P2 takes P6"],
    // A trace from before violations carried their processes: the words alone.
    [{ property: "mutual-exclusion", detail: "P0 entered the CS while P1 is in it" }, "Violation: mutual-exclusion: P0 entered the CS while P1 is in it"],
  ];
  for (const [ev, want] of cases) assert.equal(violationText({ type: "violation", ...ev }), want);
});
