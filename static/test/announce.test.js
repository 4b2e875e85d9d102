import { test } from "node:test";
import assert from "node:assert/strict";
import { Announcer, summarize, detail, INTERVAL_MS } from "../announce.js";

// A clock the test moves by hand; later() keeps the one timer the announcer sets.
function fakeClock() {
  const c = { t: 0, timers: new Map(), next: 1 };
  c.now = () => c.t;
  c.later = (fn, ms) => { const id = c.next++; c.timers.set(id, { at: c.t + ms, fn }); return id; };
  c.cancel = (id) => c.timers.delete(id);
  c.advance = (ms) => {
    c.t += ms;
    for (;;) {
      const due = [...c.timers].filter(([, x]) => x.at <= c.t).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) return;
      c.timers.delete(due[0]);
      due[1].fn();
    }
  };
  return c;
}

function region() {
  const el = { writes: [], _t: "" };
  Object.defineProperty(el, "textContent", { get: () => el._t, set: (v) => { el._t = v; el.writes.push(v); } });
  return el;
}

const send = (from, to) => ({ type: "send", msg: { from, to, type: "REQUEST" } });
const rule = (node) => ({ type: "rule", node, rule: "RA1" });

test("playing: at most one summary every two seconds, saying what happened since", () => {
  const c = fakeClock();
  const el = region();
  const a = new Announcer(el, c);
  for (let step = 1; step <= 50; step++) {
    a.take([send(0, 1), rule(1)], ["P0 sends REQUEST to P1", "P1 follows RA1"], true, step, step);
    c.advance(100);
  }
  c.advance(INTERVAL_MS);
  assert.ok(el.writes.length >= 2 && el.writes.length <= 4, `writes: ${el.writes.length}`);
  assert.match(el.writes[0], /^Step 1\. 1 message sent, 1 rule fired/);
  assert.match(el.writes[1], /^Steps 2 to \d+\. \d+ messages sent, \d+ rules fired\. latest: P1 follows RA1\.$/);
  assert.equal(new Set(el.writes).size, el.writes.length, "a summary was repeated");
});

test("paused: each step in full, at once, with the rule's text; a pending summary is dropped", () => {
  const c = fakeClock();
  const el = region();
  const a = new Announcer(el, c);
  a.take([send(0, 1)], ["P0 sends REQUEST to P1"], true, 1, 1);
  a.take([send(0, 2)], ["P0 sends REQUEST to P2"], true, 2, 2); // no timer has fired yet
  a.take([rule(1)], ["P1 replies at once RA2"], false, 3, 3);
  assert.equal(el.textContent, "Step 3: P1 replies at once RA2.");
  c.advance(10 * INTERVAL_MS);
  assert.deepEqual(el.writes, ["Step 3: P1 replies at once RA2."]);
});

test("a text the region holds is not written again", () => {
  const el = region();
  const a = new Announcer(el, fakeClock());
  a.moved(4, "P1 enters the CS");
  a.moved(4, "P1 enters the CS");
  assert.deepEqual(el.writes, ["At step 4: P1 enters the CS."]);
});

test("summaries name the notable events and count the rest", () => {
  const evs = [send(0, 1), { type: "crash", node: 2 }, { type: "drop" }, { type: "deliver" }];
  const s = summarize(5, 9, evs, ["P0 sends", "P2 crashes", "REQUEST is lost", "P1 receives"]);
  assert.equal(s, "Steps 5 to 9. 1 message sent, 1 received, 1 lost. P2 crashes. latest: P1 receives.");
  assert.equal(detail(7, 7, []), "Step 7: nothing happened.");
});
