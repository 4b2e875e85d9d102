// The processes view's geometry: where the processes sit, where their labels go, the
// arc a message follows and where on it the message is at a virtual time. Pure: the
// view (view.js) measures the box and draws; this only computes.

import { FAST_SPEED } from "./clock.js";

// r2 rounds to hundredths: coordinates written into the SVG.
export const r2 = (x) => Math.round(x * 100) / 100;

// labelChars is how many characters a process's label needs: the longest state the
// algorithm names (in the doc of its "state" variable), at least 8, so the layout never
// depends on the run's current state.
export function labelChars(spec) {
  const doc = spec.vars.find((v) => v.name === "state")?.doc || "";
  return Math.max(8, ...(doc.match(/[A-Z][A-Z0-9_-]{2,}/g) || []).map((w) => w.length));
}

// STAGE_REF is the geometric mean of a viewport's sides (CSS pixels) at which the
// projector's stage draws its texts at their base size; a larger screen scales them
// in proportion (1920x1080: about twice), up to STAGE_MAX.
export const STAGE_REF = 700;
export const STAGE_MAX = 2.6;

// stageScale is the factor on the stage's texts and shapes: 1 on a page of one's own;
// on the projector layout it grows with the screen (so that the stage, which takes
// the left of it at full height, reads alike from the back row on any projector) and
// with the type size chosen (A- / A+).
export function stageScale(projector, width, height, fontScale = 1) {
  if (!projector) return 1;
  const k = Math.min(STAGE_MAX, Math.max(1, Math.sqrt(width * height) / STAGE_REF));
  return Math.round(k * (fontScale > 0 ? fontScale : 1) * 100) / 100;
}

// LINE is the distance between a label's two lines, in its font size.
export const LINE = 1.3;

// ellipse places n processes on an ellipse that fills a view of width x height CSS
// pixels (at least 240 x 200): one view unit is one pixel, so text keeps a legible size
// whatever the window; k (stageScale) scales the texts and the processes. Labels show
// up to 24 processes; on a narrow view they go under their process, in one line.
export function ellipse(width, height, n, chars, k = 1) {
  const W = Math.max(240, Math.round(width)), H = Math.max(200, Math.round(height));
  const labels = n <= 24;
  const below = W < 560;
  const small = n > 12 || below;
  const fontPx = (small ? 11.5 : 13.5) * k;
  const labelW = labels ? chars * fontPx * 0.66 + 8 : 0;
  const labelH = labels ? (small ? 1.4 : 1 + LINE + 0.4) * fontPx : 0;
  // a first guess of the radius of a process, refined once the ellipse is known
  let r = 30 * k;
  let rx = 0, ry = 0;
  for (let i = 0; i < 2; i++) {
    const side = below ? Math.max(r, labelW / 2 + 4) : r + labelW;
    rx = Math.max(40, W / 2 - side - 8);
    ry = Math.max(40, H / 2 - r - labelH - 10);
    const perim = Math.PI * (3 * (rx + ry) - Math.sqrt((3 * rx + ry) * (rx + 3 * ry)));
    r = Math.max(10, Math.min(34 * k, (perim / n) * 0.3));
  }
  const pos = [];
  for (let i = 0; i < n; i++) {
    const a = -Math.PI / 2 + (2 * Math.PI * i) / n;
    pos.push({ x: rx * Math.cos(a), y: ry * Math.sin(a), a });
  }
  // A flat ellipse (a short view) brings processes across it close together: no two
  // circles may touch, down to the smallest radius. 0.4 of the distance leaves a fifth of
  // it clear, so the circles' strokes and their token or leader marks do not meet either.
  r = Math.max(10, Math.min(r, 0.4 * closest(pos)));
  return { W, H, n, k, labels, below, small, fontPx, r, rx, ry, pos };
}

// closest is the smallest distance between two of the points (Infinity for fewer than two).
export function closest(pos) {
  let d = Infinity;
  for (let i = 0; i < pos.length; i++) {
    for (let j = i + 1; j < pos.length; j++) d = Math.min(d, Math.hypot(pos[i].x - pos[j].x, pos[i].y - pos[j].y));
  }
  return d;
}

// labelAt places the label of the process at p (its state and clock) outside the
// ellipse, away from its centre: the point, the text anchor and the first line's
// offset in em of the label's font (the second line is LINE em below it).
export function labelAt(lay, p) {
  if (lay.below) return { x: p.x, y: p.y + lay.r + 6 * lay.k, anchor: "middle", top: 0.6 };
  const gap = lay.r + 8 * lay.k;
  const c = Math.cos(p.a), sn = Math.sin(p.a);
  const lines = lay.small ? 1 : 2;
  const anchor = Math.abs(c) < 0.35 ? "middle" : c > 0 ? "start" : "end";
  const span = (lines - 1) * LINE; // from the first line's middle to the last's
  const top = sn < -0.35 ? -(span + 0.6) : sn > 0.35 ? 0.6 : -span / 2;
  return { x: p.x + c * gap, y: p.y + sn * gap, anchor, top };
}

// curve is a gentle arc from a to b that starts and ends clear of the processes'
// circles (radius r, for a pill of height pill), so a message just sent or about to
// arrive does not hide its process; the two directions of a channel bend to opposite
// sides so they never overlap.
export function curve(a, b, r, pill) {
  const dx = b.x - a.x, dy = b.y - a.y;
  const len = Math.hypot(dx, dy) || 1;
  const ux = dx / len, uy = dy / len;
  // A pill starts clear of its process: the circle's radius, plus how far the pill (as
  // long as a label of five letters makes it, pillSize) reaches back along the way.
  const off = Math.min(clearance(ux, uy, pill * 1.7, pill * 0.5, r + 2), len * 0.45);
  const p0 = { x: a.x + ux * off, y: a.y + uy * off };
  const p2 = { x: b.x - ux * off, y: b.y - uy * off };
  const bend = len * 0.12;
  const c = { x: (a.x + b.x) / 2 - uy * bend, y: (a.y + b.y) / 2 + ux * bend };
  return { p0, c, p2, d: `M${r2(p0.x)} ${r2(p0.y)} Q${r2(c.x)} ${r2(c.y)} ${r2(p2.x)} ${r2(p2.y)}` };
}

// clearance is how far along the unit direction (ux, uy) the centre of a box of half
// sides hw x hh must be from a circle's centre for the box to be clear of the circle of
// radius r.
export function clearance(ux, uy, hw, hh, r) {
  const gap = (d) => Math.hypot(Math.max(0, d * Math.abs(ux) - hw), Math.max(0, d * Math.abs(uy) - hh));
  let lo = 0, hi = r + hw + hh;
  for (let i = 0; i < 30; i++) {
    const mid = (lo + hi) / 2;
    if (gap(mid) >= r) hi = mid;
    else lo = mid;
  }
  return Math.round(hi * 100) / 100;
}

// progress is how far along its arc (0 to 1) a message sent at virtual time sent and
// arriving at at is at virtual time vt; a held message (at < 0) waits halfway.
export function progress(sent, at, vt) {
  if (at < 0) return 0.5;
  if (at <= sent) return 1;
  return Math.min(1, Math.max(0, (vt - sent) / (at - sent)));
}

// pointOn is the point at fraction p of a curve.
export function pointOn(geo, p) {
  const { p0, c, p2 } = geo;
  const q = 1 - p;
  return {
    x: q * q * p0.x + 2 * q * p * c.x + p * p * p2.x,
    y: q * q * p0.y + 2 * q * p * c.y + p * p * p2.y,
  };
}

// messageLabels maps each message type to the short label its algorithm declares
// (sim.MessageType.Label: at most 5 letters, unique within the algorithm, tested in Go),
// so the stage never cuts names into ambiguous stubs.
export function messageLabels(spec) {
  return new Map((spec.messages || []).map((m) => [m.name, m.label || m.name]));
}

// messageClasses maps each message type of an algorithm to its colour class (m0..m6).
export function messageClasses(spec) {
  return new Map((spec.messages || []).map((m, i) => [m.name, "m" + (i % 7)]));
}

// pillSize is the width and height of a message's pill with its label, for pills of
// height pill: the SVG pill and the canvas layer's are the same size.
export function pillSize(label, pill) {
  return { w: label.length * pill * 0.52 + pill * 0.8, h: pill };
}

// CROWD is how many messages in flight the view draws as SVG elements that move; above
// it, the moving pills are painted on one canvas layer (view.js): a browser lays out
// and paints hundreds of moving SVG elements again every frame (docs/benchmarks.md,
// "Heavy traffic at 4x"), while one canvas is one image.
export const CROWD = 48;

// crowded says whether n messages in flight are a crowd (more than CROWD).
export const crowded = (n) => n > CROWD;

// onCanvas says whether the moving pills of n messages in flight go on the canvas
// layer: in a crowd, and while the run plays at FAST_SPEED or faster, whatever their
// number. Each SVG pill moved in a frame is restyled and laid out again and the SVG
// painted again (about 5 ms a frame for thirty pills in the heavy-traffic trace);
// at 4x pills cross the view in a fraction of a second and nobody aims at one (a
// painted pill still opens its menu). Paused, they are SVG again.
export const onCanvas = (n, playing, speed) => crowded(n) || (playing && speed >= FAST_SPEED);

// fitBox is how the view's box (width x height CSS pixels) shows a viewBox of W x H
// units centred on 0 (preserveAspectRatio meet): a unit's size in pixels and where the
// origin is in the box.
export function fitBox(width, height, W, H) {
  const s = Math.min(width / W, height / H);
  return { s, ox: width / 2, oy: height / 2 };
}

// pillAt is the id of the topmost pill (the last drawn) that covers the point x, y
// (view units), or -1. placed is the list the canvas layer drew, in drawing order:
// {id, x, y, w, h}, x and y the pill's centre.
export function pillAt(placed, x, y) {
  for (let k = placed.length - 1; k >= 0; k--) {
    const p = placed[k];
    if (Math.abs(x - p.x) <= p.w / 2 && Math.abs(y - p.y) <= p.h / 2) return p.id;
  }
  return -1;
}
