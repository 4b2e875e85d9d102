import { test } from "node:test";
import assert from "node:assert/strict";
import { tieText } from "../panels.js";

test("equal timestamps: the narration says the ids break the tie", () => {
  assert.match(tieText("younger", 1, 1, 0, 1), /both carry timestamp 1, and P0's smaller id breaks the tie/);
  assert.match(tieText("older", 3, 3, 2, 1), /its own smaller id \(P1\)/);
  assert.equal(tieText("younger", 1, 2, 0, 1), null);
  assert.equal(tieText("idle", 1, 1, 0, 1), null);
});
