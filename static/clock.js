// The page's virtual clock: where messages are drawn. The server paces virtual time;
// between frames the page extrapolates it, never past the latest arrival in flight,
// and when paused it glides to the step's time. Pure: the caller passes the wall time
// (performance.now()) in milliseconds.

const GLIDE_MS = 280; // a paused step glides this long
const GLIDE_MAX = 50; // ... when it moves less than this much virtual time

// newClock is a clock at virtual time 0; last is the time the latest frame showed.
// jump: the user asks for less motion (prefers-reduced-motion), so a playing run's
// messages jump from step to step instead of gliding between them.
export function newClock() {
  return { base: 0, wall: 0, from: 0, to: 0, tween: 0, tweenStart: 0, last: 0, jump: false };
}

// clockTo sets the clock when a frame says the run is at virtual time t: playing, it
// runs on from there, or from where it was shown when that is ahead by up to a unit
// (a frame a little late does not pull the messages back); paused, it glides from
// where it was shown when smooth, else it jumps.
export function clockTo(clk, t, playing, smooth, now) {
  const cur = clk.last;
  if (playing) {
    clk.base = Math.max(t, Math.min(cur, t + 1));
    clk.wall = now;
    clk.tween = 0;
    clk.to = t;
  } else if (smooth && cur !== t && Math.abs(cur - t) < GLIDE_MAX) {
    clk.from = cur; clk.to = t; clk.tween = GLIDE_MS; clk.tweenStart = now;
  } else {
    clk.to = t; clk.tween = 0;
  }
}

// clockNow is the virtual time to draw at wall time now. run gives playing, rate
// (virtual units per second at speed 1), speed and inflight (the latest arrival caps it).
export function clockNow(clk, run, now) {
  if (run.playing) {
    if (clk.jump) return clk.to; // where the latest frame put the run: no motion between
    let cap = clk.base;
    for (const f of run.inflight.values()) if (f.at > cap) cap = f.at;
    return Math.min(cap, clk.base + ((now - clk.wall) / 1000) * run.rate * run.speed);
  }
  if (clk.tween) {
    const k = Math.min(1, (now - clk.tweenStart) / clk.tween);
    if (k >= 1) { clk.tween = 0; return clk.to; }
    const e = 1 - (1 - k) ** 3;
    return clk.from + (clk.to - clk.from) * e;
  }
  return clk.to;
}

// Speeds the page offers, slowest first.
export const SPEEDS = [0.25, 0.5, 1, 2, 4, 8, 16];

// nextSpeed is the speed d places from speed along SPEEDS, kept within them; an
// unknown speed counts as 1x.
export function nextSpeed(speed, d) {
  const i = SPEEDS.indexOf(speed);
  return SPEEDS[Math.max(0, Math.min(SPEEDS.length - 1, (i < 0 ? 2 : i) + d))];
}

// PANELS_MS: while the run plays, the panels beside the view (pseudocode, inspector,
// log, the step readout) follow the model at most this often; the view follows every
// frame. At 4x a run makes hundreds of steps a second, more lines than anyone reads,
// and rebuilding the panels each frame cost the page its frame rate
// (docs/benchmarks.md, "Heavy traffic at 4x").
export const PANELS_MS = 200;

// PANELS_FAST_MS: from FAST_SPEED on, the panels follow at most this often. A round
// of the panels is a frame for each (stage.js), and at 200 ms a quarter of the frames
// of a run at 4x were the panels'; at 500 ms, a tenth (docs/benchmarks.md, "Heavy
// traffic at 4x"). Nobody reads a log that scrolls by hundreds of lines a second.
export const PANELS_FAST_MS = 500;
export const FAST_SPEED = 4;

// PANELS_CROWD_MS: fast and crowded (more messages in flight than layout.js's CROWD,
// the burst of a large run), the panels follow at most once a second: there their
// rounds were most of the frames that missed their vsync (N=32 all asking at 4x: 9 to
// 15 of about 165 frames missed at 500 ms, 3 to 9 of about 175 at 1 s;
// docs/benchmarks.md, "Heavy traffic at 4x"). Paused, they follow at once as always.
export const PANELS_CROWD_MS = 1000;

// panelsDue says whether the panels follow now (wall time, ms), last followed at last,
// for a run playing (or not) at speed, with a crowd of messages in flight or not: at
// once when the run is paused or they have not followed for PANELS_MS (PANELS_FAST_MS
// at FAST_SPEED and faster, PANELS_CROWD_MS when also crowded).
export function panelsDue(playing, speed, now, last, crowd = false) {
  if (!playing) return true;
  const every = speed < FAST_SPEED ? PANELS_MS : crowd ? PANELS_CROWD_MS : PANELS_FAST_MS;
  return now - last >= every;
}
