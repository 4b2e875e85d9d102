// Happened-before over a run's trace (Lamport): the Lamport clock and the vector clock
// of every event of a process, worked out from the trace alone, never from an
// algorithm's own clock. Pure: no DOM, no network. runtime/causal does the same in Go
// and the browser tests check the two against each other.
//
// The events of a process are the trace events it did or underwent: send, deliver,
// request, enter, exit, elect, leader, crash, recover, timer. Each ticks its process's
// clocks; a deliver first takes the maximum with the clocks its message was sent with.
// A rule is not an event (it names the code the event before it ran), a drop is the
// network's doing, and violations, partitions and heals belong to no process. A process
// keeps its clocks across a crash and a recovery: its line goes on.

export const PROCESS_EVENTS = new Set([
  "send", "deliver", "request", "enter", "exit", "elect", "leader", "crash", "recover", "timer",
]);

export function isProcessEvent(ev) {
  return PROCESS_EVENTS.has(ev.type) && typeof ev.node === "number";
}

function grow(a, need) {
  if (need <= a.length) return a;
  const b = new a.constructor(Math.max(need, a.length * 2));
  b.set(a);
  return b;
}

// Causality follows a trace event by event (a fetched timeline, then the live stream)
// and answers happened-before questions in O(1) per pair. Process events are numbered
// 0, 1, 2 ... in trace order ("pe" numbers); trace events are numbered by push order.
export class Causality {
  constructor(ids) {
    this.ids = ids.slice();
    this.n = ids.length;
    this.pos = new Map(ids.map((id, i) => [id, i]));
    this.lam = new Int32Array(this.n); // current clocks per process
    this.vec = new Int32Array(this.n * this.n);
    this.sent = new Map(); // message id -> pe of its send, while on its way
    this.count = 0; // process events
    this.events = 0; // trace events
    this.peProc = new Int32Array(64);
    this.peLam = new Int32Array(64);
    this.peVec = new Int32Array(64 * this.n);
    this.peEvent = new Int32Array(64); // pe -> trace event number
    this.peStep = new Float64Array(64); // pe -> its step (Infinity when unknown)
    this.evPE = new Int32Array(64); // trace event number -> pe, or -1
    this.byProc = Array.from({ length: this.n }, () => []); // pe numbers per process, in order
  }

  // push takes the next trace event (with an optional .step) and returns its pe number,
  // or -1 when it is not an event of a process.
  push(ev) {
    const k = this.events++;
    this.evPE = grow(this.evPE, k + 1);
    this.evPE[k] = -1;
    const p = isProcessEvent(ev) ? this.pos.get(ev.node) : undefined;
    if (p === undefined) {
      if (ev.type === "drop" && ev.msg) this.sent.delete(ev.msg.id);
      return -1;
    }
    const n = this.n, row = p * n;
    if (ev.type === "deliver" && ev.msg) {
      const s = this.sent.get(ev.msg.id);
      if (s !== undefined) {
        this.lam[p] = Math.max(this.lam[p], this.peLam[s]);
        const off = s * n;
        for (let j = 0; j < n; j++) {
          const v = this.peVec[off + j];
          if (v > this.vec[row + j]) this.vec[row + j] = v;
        }
        this.sent.delete(ev.msg.id);
      }
    }
    this.lam[p]++;
    this.vec[row + p]++;
    const e = this.count++;
    this.peProc = grow(this.peProc, e + 1);
    this.peLam = grow(this.peLam, e + 1);
    this.peEvent = grow(this.peEvent, e + 1);
    this.peStep = grow(this.peStep, e + 1);
    this.peVec = grow(this.peVec, (e + 1) * n);
    this.peProc[e] = p;
    this.peLam[e] = this.lam[p];
    this.peEvent[e] = k;
    this.peStep[e] = typeof ev.step === "number" ? ev.step : Infinity;
    this.peVec.set(this.vec.subarray(row, row + n), e * n);
    this.evPE[k] = e;
    this.byProc[p].push(e);
    if (ev.type === "send" && ev.msg) this.sent.set(ev.msg.id, e);
    return e;
  }

  pe(eventNumber) { return eventNumber >= 0 && eventNumber < this.events ? this.evPE[eventNumber] : -1; }
  process(e) { return this.peProc[e]; }
  lamport(e) { return this.peLam[e]; }
  vector(e) { return Array.from(this.peVec.subarray(e * this.n, (e + 1) * this.n)); }

  // beforeOrSame: a -> b, or a is b. b's vector has counted a's own entry.
  beforeOrSame(a, b) {
    const p = this.peProc[a];
    return this.peVec[a * this.n + p] <= this.peVec[b * this.n + p];
  }

  // before: a -> b, strictly.
  before(a, b) { return a !== b && this.beforeOrSame(a, b); }

  // past and future list the pe numbers that happened before e, and after it.
  past(e) {
    const out = [];
    for (let f = 0; f < e; f++) if (this.beforeOrSame(f, e)) out.push(f);
    return out;
  }

  future(e) {
    const out = [];
    for (let f = e + 1; f < this.count; f++) if (this.beforeOrSame(e, f)) out.push(f);
    return out;
  }

  // lastOf is process p's last event with step <= step (-1: none yet).
  lastOf(p, step) {
    const list = this.byProc[p];
    let lo = 0, hi = list.length; // first index whose step > step
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.peStep[list[mid]] <= step) lo = mid + 1;
      else hi = mid;
    }
    return lo > 0 ? list[lo - 1] : -1;
  }

  // clocksAt gives every process's clocks once the run has reached step: those of its
  // last event so far (zeros before its first).
  clocksAt(step) {
    const out = [];
    for (let p = 0; p < this.n; p++) {
      const e = this.lastOf(p, step);
      out.push(e < 0 ? { lamport: 0, vector: new Array(this.n).fill(0) } : { lamport: this.lamport(e), vector: this.vector(e) });
    }
    return out;
  }
}

// ---- pure functions over a whole trace (what the tests call) ----

function build(events, ids) {
  const c = new Causality(ids);
  for (const ev of events) c.push(ev);
  return c;
}

// vectorClocks returns, for every trace event, {process, lamport, vector}; process is
// the position in ids, or -1 (and no clocks) when the event is not a process event.
export function vectorClocks(events, ids) {
  const c = build(events, ids);
  return events.map((_, k) => {
    const e = c.pe(k);
    return e < 0 ? { process: -1, lamport: 0, vector: null } : { process: c.process(e), lamport: c.lamport(e), vector: c.vector(e) };
  });
}

// happenedBefore compares two results of vectorClocks: a -> b, strictly.
export function happenedBefore(a, b) {
  if (a.process < 0 || b.process < 0) return false;
  const same = a.vector.every((v, j) => v === b.vector[j]);
  return !same && a.vector[a.process] <= b.vector[a.process];
}

// causalPast and causalFuture list the trace indexes of the process events that
// happened before (after) the trace event at index i; [] when it is not a process event.
export function causalPast(events, ids, i) {
  const c = build(events, ids);
  const e = c.pe(i);
  return e < 0 ? [] : c.past(e).map((f) => c.peEvent[f]);
}

export function causalFuture(events, ids, i) {
  const c = build(events, ids);
  const e = c.pe(i);
  return e < 0 ? [] : c.future(e).map((f) => c.peEvent[f]);
}

// clocksAtStep gives each process's {lamport, vector} at a step; events carry .step.
export function clocksAtStep(events, ids, step) {
  return build(events, ids).clocksAt(step);
}
