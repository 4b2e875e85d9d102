// compact.js: a lecture follower's compact frames expand into the protocol-1 frames.
// The fixture is written by the Go compactor (runtime/lecture, TestCompactFixtureIsCurrent),
// so this checks the browser's expander against the server's encoder.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createExpander } from "../compact.js";

const runs = JSON.parse(readFileSync(new URL("./testdata/compact-frames.json", import.meta.url), "utf8"));
// Frames that use every field of the Go tables (runtime/protocol, TestCompactFieldsGolden).
const everyField = JSON.parse(readFileSync(new URL("./testdata/compact-fields.json", import.meta.url), "utf8"));

for (const [name, frames] of Object.entries(runs)) {
  test(`${name}: every compact frame expands to its protocol-1 frame, for a follower from the start and a joiner`, () => {
    const follower = createExpander();
    let joiner = null;
    let compacted = 0;
    for (const [i, { compact, v1 }] of frames.entries()) {
      const arr = JSON.parse(compact);
      const isTable = !v1;
      const checkpoint = isTable || (joiner && !joiner.ready);
      if (isTable) joiner = { x: createExpander(), ready: false };
      if (checkpoint) {
        // The joiner's checkpoint: the table, then hello and snapshot.
        const got = joiner.x.expand(arr);
        if (isTable) assert.equal(got, null, "the table is not a frame for the page");
        else {
          assert.deepEqual(got, JSON.parse(v1), `joiner's checkpoint frame ${i}`);
          joiner.ready = JSON.parse(v1).type === "snapshot";
        }
        continue;
      }
      const want = JSON.parse(v1);
      assert.deepEqual(follower.expand(arr), want, `frame ${i}: ${compact}`);
      if (joiner) assert.deepEqual(joiner.x.expand(arr), want, `joiner, frame ${i}`);
      if (!(arr.length === 2 && arr[1] && arr[1].type)) compacted++;
    }
    assert.ok(joiner && joiner.ready, "the fixture has a joiner");
    assert.ok(compacted >= 10, `only ${compacted} frames were compact`);
  });
}

test("every field of the tables (compact_fields.js) expands as the Go expander reads it", () => {
  const x = createExpander();
  for (const [i, { compact, v1 }] of everyField.entries()) {
    assert.deepEqual(x.expand(JSON.parse(compact)), JSON.parse(v1), `frame ${i}: ${compact}`);
  }
});

test("a compact frame that does not fit the view is an error, not a wrong frame", () => {
  const x = createExpander();
  x.expand([1, { type: "hello", proto: 1 }]);
  x.expand([1, { type: "snapshot", step: 0, t: 0, seq: -1, horizon: 0, playing: false, speed: 1, quiet: false, interventions: 0,
    network: { delay: [1, 3], fifo: false, loss: 0, hold: false }, nodes: [], inflight: [], lit: [], recent: [] }]);
  assert.throws(() => x.expand([2, [[4], [], []]]), /not in flight/);
  assert.throws(() => x.expand([3, [[-5], [], []]]), /not in the table/);
  assert.throws(() => x.expand([4, { p: 1 }]), /playing 1 is not of kind bool/);
});
