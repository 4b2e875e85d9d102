// layout.js: the processes view's geometry.
import { test } from "node:test";
import assert from "node:assert/strict";
import { labelChars, ellipse, closest, labelAt, curve, progress, pointOn, messageLabels, messageClasses, pillSize, crowded, onCanvas, CROWD, fitBox, pillAt } from "../layout.js";
import { FAST_SPEED } from "../clock.js";

const near = (a, b, msg) => assert.ok(Math.abs(a - b) < 1e-9, `${msg}: ${a} != ${b}`);

test("processes go clockwise round the ellipse from the top", () => {
  const lay = ellipse(800, 600, 4, 8);
  near(lay.pos[0].x, 0, "first x"); near(lay.pos[0].y, -lay.ry, "first at the top");
  near(lay.pos[1].x, lay.rx, "second on the right"); near(lay.pos[1].y, 0, "second y");
  near(lay.pos[2].y, lay.ry, "third at the bottom");
  near(lay.pos[3].x, -lay.rx, "fourth on the left");
  for (const p of lay.pos) near((p.x / lay.rx) ** 2 + (p.y / lay.ry) ** 2, 1, "on the ellipse");
});

test("what the view's size and the number of processes decide", () => {
  const cases = [
    // width, height, n: W, H, labels, below, small, fontPx
    [800, 600, 4, 800, 600, true, false, false, 13.5],
    [800, 600, 16, 800, 600, true, false, true, 11.5],
    [800, 600, 30, 800, 600, false, false, true, 11.5],
    [400, 600, 4, 400, 600, true, true, true, 11.5],
    [100, 50, 3, 240, 200, true, true, true, 11.5], // never smaller than 240 x 200
  ];
  for (const [w, h, n, W, H, labels, below, small, fontPx] of cases) {
    const lay = ellipse(w, h, n, 8);
    assert.deepEqual([lay.W, lay.H, lay.labels, lay.below, lay.small, lay.fontPx], [W, H, labels, below, small, fontPx], `${w}x${h}, ${n}`);
    assert.ok(lay.r >= 10 && lay.r <= 34, `radius ${lay.r}`);
    assert.ok(lay.rx >= 40 && lay.ry >= 40, "the ellipse keeps a size");
  }
  assert.equal(ellipse(1600, 1200, 2, 8).r, 34, "few processes: the largest circles");
  assert.equal(ellipse(800, 600, 300, 8).r, 10, "many: the smallest");
});

test("labels sit outside the ellipse, or under their process on a narrow view", () => {
  const lay = { r: 20, small: false, below: false, k: 1 };
  const at = (a) => labelAt(lay, { x: 100 * Math.cos(a), y: 100 * Math.sin(a), a });
  const right = at(0);
  assert.equal(right.anchor, "start");
  near(right.x, 128, "right x");
  assert.equal(at(Math.PI).anchor, "end");
  const topL = at(-Math.PI / 2);
  assert.equal(topL.anchor, "middle");
  near(topL.top, -1.9, "two lines above");
  near(at(Math.PI / 2).top, 0.6, "below the bottom one");
  near(labelAt({ ...lay, small: true }, { x: 0, y: -100, a: -Math.PI / 2 }).top, -0.6, "one line above");
  assert.deepEqual(labelAt({ ...lay, below: true }, { x: 5, y: 7, a: 0 }), { x: 5, y: 33, anchor: "middle", top: 0.6 });
});

test("a message's arc clears the circles and bends to its own side", () => {
  // The pill (as long as five letters: 17 either side) clears the circle (10, and 2).
  const there = curve({ x: 0, y: 0 }, { x: 100, y: 0 }, 10, 10);
  assert.deepEqual([there.p0, there.c, there.p2], [{ x: 29, y: 0 }, { x: 50, y: 12 }, { x: 71, y: 0 }]);
  assert.equal(there.d, "M29 0 Q50 12 71 0");
  const back = curve({ x: 100, y: 0 }, { x: 0, y: 0 }, 10, 10);
  assert.deepEqual(back.c, { x: 50, y: -12 }, "the other direction bends the other way");
  const close = curve({ x: 0, y: 0 }, { x: 20, y: 0 }, 10, 10);
  near(close.p0.x, 9, "close processes: the arc starts 45% along");
});

test("how far along its arc a message is", () => {
  const cases = [
    // sent, at, vt: progress
    [0, -1, 5, 0.5], // held: halfway
    [4, 4, 0, 1], // no delay
    [0, 10, -5, 0],
    [0, 10, 5, 0.5],
    [0, 10, 25, 1],
  ];
  for (const [sent, at, vt, want] of cases) assert.equal(progress(sent, at, vt), want, `${sent}, ${at}, ${vt}`);
  const geo = { p0: { x: 0, y: 0 }, c: { x: 4, y: 8 }, p2: { x: 8, y: 0 } };
  assert.deepEqual(pointOn(geo, 0), { x: 0, y: 0 });
  assert.deepEqual(pointOn(geo, 1), { x: 8, y: 0 });
  assert.deepEqual(pointOn(geo, 0.5), { x: 4, y: 4 });
});

test("message labels are the ones the algorithm declares", () => {
  const spec = { messages: [
    { name: "READ-NUMBER", label: "RDNUM" }, { name: "READ-CHOOSING", label: "RDCHO" }, { name: "ACK" },
  ] };
  const got = messageLabels(spec);
  assert.deepEqual([...got.entries()], [["READ-NUMBER", "RDNUM"], ["READ-CHOOSING", "RDCHO"], ["ACK", "ACK"]]);
  assert.equal(messageLabels({}).size, 0);
});

test("a label needs room for the longest state the algorithm names", () => {
  const cases = [
    [[{ name: "state", doc: "RELEASED, WANTED or HELD" }], 8],
    [[{ name: "state", doc: "IDLE or WAITING_FOR_ALL" }], 15],
    [[{ name: "state", doc: "one of A, B" }], 8],
    [[{ name: "clock" }], 8],
  ];
  for (const [vars, want] of cases) assert.equal(labelChars({ vars }), want, JSON.stringify(vars));
});

test("message types take the colours in order, seven of them", () => {
  const names = ["A", "B", "C", "D", "E", "F", "G", "H"];
  const m = messageClasses({ messages: names.map((name) => ({ name })) });
  assert.deepEqual(names.map((n) => m.get(n)), ["m0", "m1", "m2", "m3", "m4", "m5", "m6", "m0"]);
});

test("circles never touch, even on a short, wide view", () => {
  for (const [w, h, n] of [[900, 200, 5], [1200, 200, 8], [700, 210, 12], [800, 600, 5]]) {
    const lay = ellipse(w, h, n, 8);
    assert.ok(2 * lay.r < closest(lay.pos), `${w}x${h}, ${n}: radius ${lay.r}, closest centres ${closest(lay.pos)}`);
    // a fifth of the distance stays clear for strokes and marks, unless the radius is at its floor
    if (lay.r > 10) assert.ok(2 * lay.r <= 0.8 * closest(lay.pos) + 1e-9, `${w}x${h}, ${n}: radius ${lay.r} leaves no gap`);
  }
  assert.equal(closest([{ x: 0, y: 0 }]), Infinity);
  assert.equal(closest([{ x: 0, y: 0 }, { x: 3, y: 4 }, { x: 10, y: 0 }]), 5);
});

test("a pill is as wide as its label needs, as high as asked", () => {
  const cases = [
    // label, height: width
    ["REQ", 16, 3 * 16 * 0.52 + 16 * 0.8],
    ["OK", 19, 2 * 19 * 0.52 + 19 * 0.8],
    ["", 16, 16 * 0.8],
  ];
  for (const [label, h, w] of cases) {
    const got = pillSize(label, h);
    near(got.w, w, `width of ${label}`);
    assert.equal(got.h, h);
  }
  assert.ok(pillSize("RELEASE", 16).w > pillSize("REL", 16).w, "a longer label, a wider pill");
});

test("more than CROWD messages in flight go on the canvas layer", () => {
  assert.equal(crowded(0), false);
  assert.equal(crowded(CROWD), false);
  assert.equal(crowded(CROWD + 1), true);
  assert.equal(crowded(992), true);
});

test("pills go on the canvas layer in a crowd, and while the run plays fast", () => {
  const cases = [
    // in flight, playing, speed: on the canvas
    [3, false, 1, false],
    [3, true, 1, false],
    [3, false, FAST_SPEED, false], // paused: SVG pills at any speed
    [3, true, FAST_SPEED, true],
    [0, true, 16, true],
    [CROWD, true, FAST_SPEED / 2, false],
    [CROWD + 1, false, 1, true],
    [CROWD + 1, true, 1, true],
  ];
  for (const [n, playing, speed, want] of cases) {
    assert.equal(onCanvas(n, playing, speed), want, `${n} in flight, playing ${playing} at ${speed}x`);
  }
});

test("fitBox shows the viewBox whole and centred, like preserveAspectRatio meet", () => {
  const cases = [
    // box w, h, viewBox W, H: scale
    [800, 600, 800, 600, 1],
    [400, 600, 800, 600, 0.5], // narrower box: the width decides
    [1600, 600, 800, 600, 1], // wider box: the height decides
  ];
  for (const [w, h, W, H, s] of cases) {
    const f = fitBox(w, h, W, H);
    near(f.s, s, `scale in ${w}x${h}`);
    near(f.ox, w / 2, "origin x at the centre");
    near(f.oy, h / 2, "origin y at the centre");
  }
});

test("pillAt finds the pill drawn last under a point, or none", () => {
  const placed = [
    { id: 1, x: 0, y: 0, w: 40, h: 16 },
    { id: 2, x: 10, y: 0, w: 40, h: 16 }, // overlaps 1, drawn over it
    { id: 3, x: 200, y: 100, w: 30, h: 16 },
  ];
  const cases = [
    // x, y: id
    [-15, 0, 1], // only 1 covers it
    [5, 0, 2], // both do: 2 is on top
    [200, 107, 3], // inside, near the bottom edge
    [200, 109, -1], // just below
    [100, 50, -1],
  ];
  for (const [x, y, want] of cases) assert.equal(pillAt(placed, x, y), want, `at ${x},${y}`);
  assert.equal(pillAt([], 0, 0), -1);
});
