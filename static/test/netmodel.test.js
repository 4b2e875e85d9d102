// netmodel.js: the Network panel's reasoning.
import { test } from "node:test";
import assert from "node:assert/strict";
import { sameList, groupLetters, describeGroups, partitionOf, dropGroup, heldQueue, queueRanks, parkOffset } from "../netmodel.js";

test("the kernel's groups read as letters in order of first appearance", () => {
  const cases = [
    [[0, 0, 0], [0, 0, 0]],
    [[2, 0, 2, 1], [0, 1, 0, 2]],
    [[1, 1, 0], [0, 0, 1]],
  ];
  for (const [groups, want] of cases) assert.deepEqual(groupLetters(groups), want, groups.join());
});

test("a draft partition in words and as a command", () => {
  const ids = [5, 6, 7, 8];
  assert.equal(describeGroups([1, 0, 1, 0], ids), "A: P6 P8 | B: P5 P7");
  assert.deepEqual(partitionOf([1, 0, 1, 0], ids), [[6, 8], [5, 7]]);
  assert.deepEqual(partitionOf([0, 0, 0, 0], ids), [[5, 6, 7, 8]]);
});

test("where a dragged process lands", () => {
  const cases = [
    // groups, process, dropped on: its new group (-1: nothing changes)
    [[0, 0, 1], 0, 2, 1], // on another process: its group
    [[0, 0, 1], 0, 0, -1], // on itself
    [[0, 0, 1], 2, -1, -1], // on empty ground, alone already
    [[0, 0, 1], 0, -1, 2], // on empty ground: the first free letter
    [[0, 1, 2, 3, 4, 5, 6, 7, 7], 8, -1, -1], // no letter left
  ];
  for (const [groups, i, target, want] of cases) assert.equal(dropGroup(groups, i, target), want, `${groups} ${i}->${target}`);
});

test("held messages in id order; under FIFO each waits behind its channel's oldest", () => {
  const f = (id, from, to, at) => [id, { msg: { id, from, to }, sent: 0, at }];
  const inflight = new Map([f(7, 0, 1, -1), f(3, 0, 1, -1), f(5, 1, 0, -1), f(4, 0, 1, 9), f(9, 0, 1, -1)]);
  const fifo = heldQueue(inflight, true).map((x) => [x.msg.id, x.behind]);
  assert.deepEqual(fifo, [[3, 0], [5, 0], [7, 3], [9, 3]]);
  const free = heldQueue(inflight, false).map((x) => [x.msg.id, x.behind]);
  assert.deepEqual(free, [[3, 0], [5, 0], [7, 0], [9, 0]]);
  assert.deepEqual([...queueRanks(inflight)], [[7, 1], [9, 2]]);
  assert.equal(inflight.get(7).behind, undefined, "the model's messages are left as they are");
});

test("sameList", () => {
  for (const [a, b, want] of [[[1, 2], [1, 2], true], [[1, 2], [2, 1], false], [[1], [1, 1], false], [[], [], true]]) {
    assert.equal(sameList(a, b), want, `${a} ${b}`);
  }
});

test("a held pill goes one pill and a gap further down per place in its queue", () => {
  const cases = [
    // place, pill height: offset
    [0, 16, 0],
    [1, 16, 19],
    [2, 19, 44],
  ];
  for (const [k, h, want] of cases) assert.equal(parkOffset(k, h), want, `place ${k}, height ${h}`);
});
