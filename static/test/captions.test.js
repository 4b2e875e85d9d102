import { test } from "node:test";
import assert from "node:assert/strict";
import { captionAt, captionsOfStep } from "../captions.js";

const caps = [{ seq: 4, text: "a" }, { seq: 18, text: "b" }, { seq: 20, text: "c" }];

test("captionAt is the latest caption reached", () => {
  assert.equal(captionAt(caps, 3), -1);
  assert.equal(captionAt(caps, 18), 1);
  assert.equal(captionAt(caps, 99), 2);
});

test("a caption belongs to its step only", () => {
  const steps = new Map([[4, 1], [18, 5], [20, 5]]);
  assert.deepEqual(captionsOfStep(caps, steps, 5), [1, 2]);
  assert.deepEqual(captionsOfStep(caps, steps, 6), []);
  assert.deepEqual(captionsOfStep(caps, steps, 1), [0]);
});
