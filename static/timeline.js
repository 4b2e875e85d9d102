// The space-time diagram's data (spacetime.js draws it): the run as columns of dots,
// the messages between them, CS stays, leadership and down times, and the causal order
// of it all (causal.js). Pure: no DOM. docs/spacetime.md.

import { Causality } from "./causal.js";
import { describeEvent, describeMessage } from "./text.js";

// Timeline holds the run as columns of dots. A dot is what one process did in one
// batch (a delivery and what it ran and sent, a request, a crash...). Messages, CS
// stays, leadership and down times refer to columns; the causal order lives in cz.
export class Timeline {
  constructor(ids) {
    this.ids = ids.slice();
    this.n = ids.length;
    this.pos = new Map(ids.map((id, i) => [id, i]));
    this.cz = new Causality(ids);
    this.events = [];
    this.cols = []; // {step, t, dots: [dot index], marks: [event index]}
    this.dots = []; // {col, p, evs: [event index], lo, hi: pe numbers or -1, rules, flags}
    this.msgs = new Map(); // id -> message
    this.msgList = [];
    this.bars = []; // {kind: "cs"|"lead"|"down", p, c0, c1 (-1: still open)}
    this.open = { cs: [], lead: [], down: [] };
    this.lastSeq = -1;
    this.horizon = 0;
    this.truncated = false;
    this.delivered = 0;
    this.dropped = 0;
  }

  addBatch(b) {
    if (!b.events.length) return;
    const col = this.cols.length;
    const c = { step: b.step, t: b.t, dots: [], marks: [] };
    this.cols.push(c);
    const here = new Map(); // process -> dot, within this column
    for (const ev of b.events) {
      const k = this.events.length;
      ev.step = b.step;
      this.events.push(ev);
      const pe = this.cz.push(ev);
      this.lastSeq = ev.seq;
      const p = typeof ev.node === "number" ? this.pos.get(ev.node) : undefined;
      if (p === undefined || ev.type === "drop") {
        if (ev.type === "drop") this.endMsg(ev, col, "dropped", pe);
        else c.marks.push(k);
        continue;
      }
      let d = here.get(p);
      if (!d) {
        d = { i: this.dots.length, col, p, evs: [], lo: -1, hi: -1, rules: [], flags: new Set() };
        this.dots.push(d);
        c.dots.push(d.i);
        here.set(p, d);
      }
      d.evs.push(k);
      if (pe >= 0) {
        if (d.lo < 0) d.lo = pe;
        d.hi = pe;
      }
      d.flags.add(ev.type);
      switch (ev.type) {
        case "rule": d.rules.push(ev.rule); break;
        case "send": {
          const m = {
            id: ev.msg.id, type: ev.msg.type, from: p, to: this.pos.get(ev.msg.to) ?? p, msg: ev.msg,
            sCol: col, sStep: b.step, sPE: pe, eCol: -1, eStep: Infinity, ePE: -1, fate: "inflight", reason: "",
          };
          this.msgs.set(m.id, m);
          this.msgList.push(m);
          break;
        }
        case "deliver": this.endMsg(ev, col, "delivered", pe); break;
        case "enter": this.openBar("cs", p, col); break;
        case "exit": this.closeBar("cs", p, col); break;
        case "leader":
          this.closeBar("lead", p, col);
          if (ev.leader === ev.node) this.openBar("lead", p, col);
          break;
        case "crash":
          this.closeBar("cs", p, col);
          this.closeBar("lead", p, col);
          this.openBar("down", p, col);
          break;
        case "recover": this.closeBar("down", p, col); break;
      }
    }
  }

  endMsg(ev, col, fate, pe) {
    const m = this.msgs.get(ev.msg.id);
    if (!m || m.eCol >= 0) return;
    m.eCol = col;
    m.eStep = this.cols[col].step;
    m.fate = fate;
    m.ePE = fate === "delivered" ? pe : -1;
    m.reason = ev.reason || "";
    if (fate === "delivered") this.delivered++;
    else this.dropped++;
  }

  openBar(kind, p, col) {
    if (this.open[kind][p] !== undefined) return;
    this.open[kind][p] = this.bars.length;
    this.bars.push({ kind, p, c0: col, c1: -1 });
  }

  closeBar(kind, p, col) {
    const i = this.open[kind][p];
    if (i === undefined) return;
    this.bars[i].c1 = col;
    this.open[kind][p] = undefined;
  }

  // lastColAt is the last column whose step is <= step (-1: none).
  lastColAt(step) {
    let lo = 0, hi = this.cols.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.cols[mid].step <= step) lo = mid + 1;
      else hi = mid;
    }
    return lo - 1;
  }

  // range gives a dot's first and last process events; a dot without any (a process's
  // initialisation, which only runs rules) sits between its process's events around it.
  range(d) {
    if (d.lo >= 0) return [d.lo, d.hi];
    const list = this.cz.byProc[d.p];
    const k0 = d.evs[0];
    let lo = 0, hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.cz.peEvent[list[mid]] < k0) lo = mid + 1;
      else hi = mid;
    }
    return [lo < list.length ? list[lo] : -1, lo > 0 ? list[lo - 1] : -1];
  }

  // relation says where dot o stands from dot d: "sel", "past", "future" or "".
  relation(d, o) {
    if (o === d) return "sel";
    const [lo, hi] = this.range(d);
    const [olo, ohi] = this.range(o);
    const cz = this.cz;
    if (olo >= 0 && hi >= 0 && cz.beforeOrSame(olo, hi)) return "past";
    if (lo >= 0 && ohi >= 0 && cz.beforeOrSame(lo, ohi)) return "future";
    return "";
  }

  msgRelation(d, m) {
    const [lo, hi] = this.range(d);
    if (m.ePE >= 0 && hi >= 0 && this.cz.beforeOrSame(m.ePE, hi)) return "past";
    if (lo >= 0 && m.sPE >= 0 && this.cz.beforeOrSame(lo, m.sPE)) return "future";
    return "";
  }

  // dotClock: the clocks after the dot's last process event (null: it has none).
  dotClock(d) {
    return d.hi >= 0 ? { lamport: this.cz.lamport(d.hi), vector: this.cz.vector(d.hi) } : null;
  }

  becameLeader(d) {
    return d.flags.has("leader") && d.evs.some((k) => this.events[k].type === "leader" && this.events[k].leader === this.ids[d.p]);
  }

  describeDot(d) {
    const c = this.cols[d.col];
    const lines = [`P${this.ids[d.p]} · step ${c.step} · t=${c.t}`];
    for (const k of d.evs) lines.push(describeEvent(this.events[k]));
    const ck = this.dotClock(d);
    if (ck) lines.push(`Lamport ${ck.lamport} · vector [${ck.vector.join(", ")}]`);
    return lines;
  }

  describeMsg(m) {
    return describeMessage(m, this.ids);
  }

  // follow appends what an events frame of the stream adds. Steps replayed after a
  // seek back come again with the seqs already known, and are skipped; a rewritten
  // future (an intervention after a seek back) shows as a lower horizon or a known seq
  // with other content, or a gap in the seqs: then follow returns false, and the
  // timeline must be fetched again.
  follow(f) {
    if (f.horizon < this.horizon) return false;
    for (const b of f.batches) {
      if (!b.events.length) continue;
      const first = b.events[0].seq;
      if (first <= this.lastSeq) {
        for (const ev of b.events) {
          if (ev.seq > this.lastSeq) return false;
          const old = this.events[ev.seq - this.events[0].seq];
          if (!old || !sameEvent(old, ev) || old.step !== b.step) return false;
        }
        continue;
      }
      if (this.truncated) break; // the diagram stops where the fetched timeline did
      if (first !== this.lastSeq + 1) return false;
      this.addBatch(b);
    }
    this.horizon = Math.max(this.horizon, f.horizon);
    return true;
  }
}

// sameEvent: the stream's event b is the one the timeline holds as a (same seq).
function sameEvent(a, b) {
  return a.type === b.type && a.node === b.node && (a.msg?.id ?? 0) === (b.msg?.id ?? 0) && a.rule === b.rule && a.t === b.t;
}

// Geometry, in CSS pixels.
export const TOP = 22; // room for the step numbers
export const BOTTOM = 8;

// geometry sizes the diagram of n process lines for a viewport viewH pixels high (0:
// not measured yet): column width, row height, height of the whole.
export function geometry(n, viewH) {
  n = Math.max(1, n);
  const colW = n <= 12 ? 26 : 18;
  // (16: room for a horizontal scroll bar, so that its coming never adds a vertical one)
  const avail = (viewH || 240) - TOP - BOTTOM - 16;
  const rowH = Math.max(16, Math.min(44, Math.floor(avail / n)));
  return { n, colW, rowH, height: TOP + n * rowH + BOTTOM };
}
