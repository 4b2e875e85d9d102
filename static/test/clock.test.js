// clock.js: the virtual time messages are drawn at.
import { test } from "node:test";
import assert from "node:assert/strict";
import { newClock, clockTo, clockNow, nextSpeed, panelsDue, PANELS_MS, PANELS_FAST_MS, PANELS_CROWD_MS, FAST_SPEED } from "../clock.js";

const run = (playing, arrivals) => ({
  playing, rate: 2, speed: 1,
  inflight: new Map(arrivals.map((at, i) => [i, { at }])),
});

test("playing, the clock runs at rate x speed, never past the latest arrival", () => {
  const cases = [
    // arrivals in flight, ms after the frame: virtual time
    [[20], 1000, 12],
    [[20], 500, 11],
    [[11], 5000, 11],
    [[], 1000, 10], // nothing in flight: it waits at the frame's time
    [[-1, 30], 2000, 14], // a held message (at -1) caps nothing
  ];
  for (const [arrivals, ms, want] of cases) {
    const clk = newClock();
    clockTo(clk, 10, true, true, 1000);
    assert.equal(clockNow(clk, run(true, arrivals), 1000 + ms), want, `${arrivals} after ${ms} ms`);
  }
});

test("a playing clock keeps up to a unit of lead over a frame", () => {
  const cases = [[10.5, 10.5], [12, 11], [9, 10]]; // shown, then a frame at 10: where it goes on from
  for (const [last, want] of cases) {
    const clk = newClock();
    clk.last = last;
    clockTo(clk, 10, true, true, 0);
    assert.equal(clockNow(clk, run(true, [99]), 0), want, `from ${last}`);
  }
});

test("paused, a step glides when smooth and near, else jumps", () => {
  const clk = newClock();
  clk.last = 0;
  clockTo(clk, 10, false, true, 1000);
  const paused = run(false, []);
  assert.equal(clockNow(clk, paused, 1000), 0);
  assert.equal(clockNow(clk, paused, 1140), 8.75, "half way in time, eased out");
  assert.equal(clockNow(clk, paused, 1280), 10);
  assert.equal(clk.tween, 0, "the glide is over");

  for (const [smooth, last, t] of [[false, 0, 10], [true, 0, 80], [true, 10, 10]]) {
    const c = newClock();
    c.last = last;
    clockTo(c, t, false, smooth, 0);
    assert.equal(clockNow(c, paused, 0), t, `smooth ${smooth}, ${last} -> ${t}`);
  }
});

test("speeds step along the offered ones", () => {
  const cases = [[1, 1, 2], [1, -1, 0.5], [16, 1, 16], [0.25, -1, 0.25], [3, 1, 2], [3, -1, 0.5]];
  for (const [speed, d, want] of cases) assert.equal(nextSpeed(speed, d), want, `${speed} ${d}`);
});

test("the panels follow at once when paused, and at most every PANELS_MS while playing (PANELS_FAST_MS when fast)", () => {
  const cases = [
    // playing, speed, now, last followed: due
    [false, 1, 1000, 999, true],
    [false, 1, 0, 0, true],
    [false, 16, 1000, 999, true], // paused: at once whatever the speed
    [true, 1, 1000, 1000 - PANELS_MS, true],
    [true, 1, 1000, 1000 - PANELS_MS + 1, false],
    [true, 1, 1000, 990, false],
    [true, 1, 1000, -Infinity, true], // never followed yet
    [true, FAST_SPEED / 2, 1000, 1000 - PANELS_MS, true],
    [true, FAST_SPEED, 1000, 1000 - PANELS_MS, false],
    [true, FAST_SPEED, 1000, 1000 - PANELS_FAST_MS + 1, false],
    [true, FAST_SPEED, 1000, 1000 - PANELS_FAST_MS, true],
    [true, 16, 1000, 1000 - PANELS_FAST_MS, true],
    [true, 16, 1000, -Infinity, true],
    // crowded: once a second at FAST_SPEED and faster, as before below it
    [true, FAST_SPEED, 2000, 2000 - PANELS_FAST_MS, false, true],
    [true, FAST_SPEED, 2000, 2000 - PANELS_CROWD_MS + 1, false, true],
    [true, FAST_SPEED, 2000, 2000 - PANELS_CROWD_MS, true, true],
    [true, 1, 2000, 2000 - PANELS_MS, true, true],
    [false, 16, 2000, 1999, true, true],
  ];
  for (const [playing, speed, now, last, want, crowd] of cases) {
    assert.equal(panelsDue(playing, speed, now, last, crowd), want, `playing ${playing} at ${speed}x, ${now - last} ms after, crowd ${crowd}`);
  }
});

test("with less motion, a playing clock stays at the latest frame's time: messages jump", () => {
  const clk = newClock();
  clk.jump = true;
  clockTo(clk, 10, true, false, 1000);
  assert.equal(clockNow(clk, run(true, [20]), 1500), 10);
  clockTo(clk, 12, true, false, 1600);
  assert.equal(clockNow(clk, run(true, [20]), 2500), 12);
});
