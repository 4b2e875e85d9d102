// The space-time (Lamport) diagram: one horizontal line per process, time running to
// the right one column per batch (a step of the run, or an intervention), messages as
// arrows from send to delivery, CS stays as bars, leadership, crashes and recoveries
// marked. It covers the whole timeline up to the horizon; a cursor shows the current
// step and what comes after it is dimmed. Clicking an event jumps there and lights its
// causal past and future (happened-before, computed by causal.js). It also exports
// itself and the processes view as self-contained SVG files. docs/spacetime.md.

import { Causality } from "./causal.js";

const NS = "http://www.w3.org/2000/svg";
const $ = (id) => document.getElementById(id);

const app = $("main");
const section = $("spacetime");
const spec = JSON.parse($("spec")?.textContent || "{}");

// Geometry, in CSS pixels.
const TOP = 22; // room for the step numbers
const BOTTOM = 8;
const PAD = 12; // left margin inside the drawing
const LABEL_W = 46; // the process labels (HTML in the page, text in an export)
const EXPORT_COLUMNS = 4000; // an export bigger than this is clipped at its end
const STORE = "pg-spacetime";

function el(name, attrs, parent) {
  const e = document.createElementNS(NS, name);
  if (attrs) for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (parent) parent.appendChild(e);
  return e;
}

const r1 = (x) => Math.round(x * 10) / 10;

function payload(msg) {
  const extra = Object.entries(msg).filter(([k]) => !["id", "type", "from", "to"].includes(k));
  if (!extra.length) return "";
  return " (" + extra.map(([k, v]) => `${k}=${Array.isArray(v) ? `[${v.join(",")}]` : v}`).join(", ") + ")";
}

function describe(ev) {
  const m = ev.msg;
  switch (ev.type) {
    case "send": return `sends ${m.type} #${m.id} to P${m.to}${payload(m)}`;
    case "deliver": return `receives ${m.type} #${m.id} from P${m.from}${payload(m)}`;
    case "rule": return `rule ${ev.rule}${ev.why ? ` (${ev.why})` : ""}`;
    case "request": return "asks for the CS";
    case "enter": return "enters the CS";
    case "exit": return "leaves the CS";
    case "elect": return "starts an election";
    case "leader": return ev.leader === ev.node ? "becomes the leader" : `takes P${ev.leader} as leader`;
    case "crash": return "crashes";
    case "recover": return "recovers";
    case "timer": return `timer ${ev.name} fires`;
    case "drop": return `${m.type} #${m.id} is lost (${ev.reason})`;
    case "violation": return `violation: ${ev.property}: ${ev.detail}`;
    case "partition": return `partition ${ev.groups.map((g) => `{${g.map((id) => `P${id}`).join(" ")}}`).join(" ")}`;
    case "heal": return "the partition heals";
    default: return ev.type;
  }
}

// ---- the timeline's data ----

// Timeline holds the run as columns of dots. A dot is what one process did in one
// batch (a delivery and what it ran and sent, a request, a crash...). Messages, CS
// stays, leadership and down times refer to columns; the causal order lives in cz.
let serial = 0;

class Timeline {
  constructor(ids) {
    this.serial = ++serial; // a timeline fetched again is another drawing
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
    for (const k of d.evs) lines.push(describe(this.events[k]));
    const ck = this.dotClock(d);
    if (ck) lines.push(`Lamport ${ck.lamport} · vector [${ck.vector.join(", ")}]`);
    return lines;
  }

  describeMsg(m) {
    const where = m.fate === "delivered" ? `delivered at step ${m.eStep}` :
      m.fate === "dropped" ? `lost at step ${m.eStep} (${m.reason})` : "still in flight";
    return `${m.type} #${m.id}: P${this.ids[m.from]} → P${this.ids[m.to]}${payload(m.msg)}, sent at step ${m.sStep}, ${where}`;
  }
}

// ---- the diagram ----

const ui = {
  open: false,
  clocks: false,
  toggle: $("st-toggle"),
  body: $("st-body"),
  scroll: $("st-scroll"),
  labels: $("st-labels"),
  svg: $("st-diagram"),
  info: $("st-info"),
  clockBox: $("st-clock-box"),
  clockBody: document.querySelector("#st-clock-table tbody"),
  clockBtn: $("st-clocks"),
  off: $("st-offscreen"),
};

let ids = [];
let data = null; // the Timeline, once fetched
let model = null; // app.js's model, from the latest frame
let curStep = 0;
let fetching = false;
let again = false; // fetch once more when the current fetch ends
let buffered = null; // events frames that came during a fetch
let selected = -1; // dot whose causal past and future are lit
let active = -1; // dot the keyboard is on
let follow = true; // keep the cursor in view
let programmatic = false;
let wantFollow = false;
let frameAsked = false;
let lastRender = 0;

// The scroll box's viewport, read when it scrolls or resizes: reading it while drawing
// would force a layout of the whole page in the middle of its animation frame.
const vp = { left: 0, top: 0, w: 0, h: 0, known: false };
function measure() {
  vp.left = ui.scroll.scrollLeft;
  vp.top = ui.scroll.scrollTop;
  vp.w = ui.scroll.clientWidth;
  vp.h = ui.scroll.clientHeight;
  vp.known = vp.w > 0;
}
function scrollTo(x) {
  const before = ui.scroll.scrollLeft;
  ui.scroll.scrollLeft = x;
  vp.left = ui.scroll.scrollLeft;
  // (no scroll event comes when it did not move: then nothing is to be ignored)
  if (vp.left !== before) programmatic = true;
}
let drawnKey = "";
const msgClass = new Map((spec.messages || []).map((m, i) => [m.name, "m" + (i % 7)]));

function geometry(d) {
  const n = Math.max(1, d ? d.n : ids.length);
  const colW = n <= 12 ? 26 : 18;
  // (16: room for a horizontal scroll bar, so that its coming never adds a vertical one)
  const avail = (vp.h || 240) - TOP - BOTTOM - 16;
  const rowH = Math.max(16, Math.min(44, Math.floor(avail / n)));
  return { n, colW, rowH, height: TOP + n * rowH + BOTTOM };
}

// draw renders columns c0..c1 and process lines rowA..rowB of the timeline into g (an SVG
// group), for the page or for an export; lpad is the drawing's left margin. Tooltips
// are left to the page (titles on hover): an export has no use for them.
function draw(g, d, geo, c0, c1, rowA, rowB, lpad, opts) {
  const { colW, rowH, n } = geo;
  const x = (col) => lpad + col * colW + colW / 2;
  const y = (p) => TOP + p * rowH + rowH / 2;
  const lastCol = d.cols.length - 1;
  const cut = d.lastColAt(curStep); // the cursor sits after this column
  const xCursor = lpad + (cut + 1) * colW;
  const xEnd = lpad + (lastCol + 1) * colW + colW; // where open things end
  const xa = lpad + c0 * colW, xb = Math.min(xEnd, lpad + (c1 + 1) * colW);
  const sel = selected >= 0 ? d.dots[selected] : null;

  const layer = (cls) => el("g", { class: cls }, g);
  const axis = layer("st-axis");
  const lines = layer("st-lines");
  const bars = layer("st-bars");
  const msgs = layer("st-msgs");
  const dots = layer("st-dots");
  const marks = layer("st-marks");

  // A horizontal segment, split at the cursor: what lies after it is dimmed.
  const seg = (parent, tag, cls, x1, x2, yy, attrs) => {
    x1 = Math.max(x1, xa - colW); x2 = Math.min(x2, xb + colW);
    if (x2 <= x1) return;
    const mk = (u, v, later) => {
      if (v <= u) return;
      if (tag === "line") el("line", { class: cls + (later ? " later" : ""), x1: r1(u), x2: r1(v), y1: r1(yy), y2: r1(yy), ...attrs }, parent);
      else el("rect", { class: cls + (later ? " later" : ""), x: r1(u), width: r1(v - u), y: r1(yy), ...attrs }, parent);
    };
    mk(x1, Math.min(x2, xCursor), false);
    mk(Math.max(x1, xCursor), x2, true);
  };

  // step numbers along the top, every few columns
  // (a step with interventions has several columns: it is numbered once)
  const every = Math.max(1, Math.ceil(44 / colW));
  for (let c = Math.max(0, c0); c <= Math.min(c1, lastCol); c++) {
    if (c % every !== 0 || (c >= every && d.cols[c - every].step === d.cols[c].step)) continue;
    const t = el("text", { class: "st-tick", x: r1(x(c)), y: 12 }, axis);
    t.textContent = String(d.cols[c].step);
  }

  const rowIn = (p) => p >= rowA && p <= rowB;
  for (let p = Math.max(0, rowA); p <= Math.min(n - 1, rowB); p++) {
    seg(lines, "line", `st-line p${p % 8}`, lpad, xEnd, y(p));
  }
  for (const b of d.bars) {
    if (!rowIn(b.p)) continue;
    const bx1 = lpad + b.c0 * colW + colW / 2;
    const bx2 = b.c1 < 0 ? xEnd : lpad + b.c1 * colW + colW / 2;
    if (bx2 < xa - colW || bx1 > xb + colW) continue;
    if (b.kind === "down") seg(bars, "line", "st-down", bx1, bx2, y(b.p));
    else if (b.kind === "cs") seg(bars, "rect", `st-cs${b.c1 < 0 ? " open" : ""}`, bx1, bx2, y(b.p) - 5, { height: 10, rx: 3 });
    else seg(bars, "rect", "st-lead", bx1, bx2, y(b.p) - rowH / 2 + 2, { height: 3 });
  }

  // messages that cross the window
  for (const m of d.msgList) {
    const endCol = m.eCol >= 0 ? m.eCol : lastCol + 1;
    if (m.sCol > c1 + 1 || endCol < c0 - 1) continue;
    if (Math.max(m.from, m.to) < rowA || Math.min(m.from, m.to) > rowB) continue; // above or below the window
    const x1 = x(m.sCol), y1 = y(m.from);
    let x2, y2;
    if (m.fate === "delivered") { x2 = x(m.eCol); y2 = y(m.to); }
    else if (m.fate === "dropped") {
      const same = m.eCol === m.sCol;
      x2 = same ? x1 + colW * 0.8 : x(m.eCol);
      y2 = y1 + (y(m.to) - y1) * (same ? 0.4 : 0.75);
    } else { x2 = xEnd; y2 = y1 + (y(m.to) - y1) * 0.6; }
    const cls = [`st-msg ${msgClass.get(m.type) || "m6"} ${m.fate}`];
    if (m.sStep > curStep) cls.push("later");
    else if (m.eStep > curStep) cls.push("flying");
    if (sel) {
      const r = d.msgRelation(sel, m);
      if (r) cls.push(r);
    }
    const mg = el("g", { class: cls.join(" "), "data-msg": m.id }, msgs);
    el("line", { x1: r1(x1), y1: r1(y1), x2: r1(x2), y2: r1(y2) }, mg);
    if (m.fate === "delivered") {
      const a = Math.atan2(y2 - y1, x2 - x1), L = 7, W = 3.5;
      const bx = x2 - Math.cos(a) * 4, by = y2 - Math.sin(a) * 4; // stop at the dot's rim
      const p1 = [bx - Math.cos(a) * L - Math.sin(a) * W, by - Math.sin(a) * L + Math.cos(a) * W];
      const p2 = [bx - Math.cos(a) * L + Math.sin(a) * W, by - Math.sin(a) * L - Math.cos(a) * W];
      el("path", { class: "head", d: `M${r1(bx)} ${r1(by)}L${r1(p1[0])} ${r1(p1[1])}L${r1(p2[0])} ${r1(p2[1])}Z` }, mg);
    } else if (m.fate === "dropped") {
      const t = el("text", { class: "st-x", x: r1(x2), y: r1(y2) }, mg);
      t.textContent = "✕";
    }
  }

  // dots, with their rule labels
  const labels = rowH >= 20;
  const rad = Math.max(3, Math.min(5.5, rowH * 0.3));
  for (let c = Math.max(0, c0); c <= Math.min(c1, lastCol); c++) {
    const col = d.cols[c];
    for (const i of col.dots) {
      const dot = d.dots[i];
      if (!rowIn(dot.p)) continue;
      const cls = [`st-dot p${dot.p % 8}`];
      if (dot.lo < 0) cls.push("quiet");
      if (col.step > curStep) cls.push("later");
      if (sel) {
        const r = d.relation(sel, dot);
        if (r) cls.push(r);
      }
      if (i === active) cls.push("active");
      const dg = el("g", {
        class: cls.join(" "), id: `st-dot-${i}`, "data-dot": i, "data-step": col.step, "data-col": c, "data-p": dot.p,
        transform: `translate(${r1(x(c))} ${r1(y(dot.p))})`,
      }, dots);
      el("circle", { class: "ring", r: r1(rad + 3.5) }, dg);
      el("circle", { class: "body", r: r1(dot.lo < 0 ? rad * 0.7 : rad) }, dg);
      const mark = dot.flags.has("crash") ? "✕" : dot.flags.has("recover") ? "↻" : d.becameLeader(dot) ? "★" : "";
      if (mark) {
        const t = el("text", { class: `st-mark${mark === "✕" ? " crash" : mark === "★" ? " star" : ""}`, x: r1(rad + 2), y: r1(-rad - 2) }, dg);
        t.textContent = mark;
      }
      if (labels && dot.rules.length) {
        const t = el("text", { class: "st-rule", y: r1(-rad - 4) }, dg);
        t.textContent = dot.rules[0] + (dot.rules.length > 1 ? "…" : "");
      }
      if (opts.clocks) {
        const ck = d.dotClock(dot);
        if (ck) {
          const t = el("text", { class: "st-lam", y: r1(rad + 10) }, dg);
          t.textContent = String(ck.lamport);
        }
      }
    }
    for (const k of col.marks) {
      const ev = d.events[k];
      if (ev.type === "violation") {
        const t = el("text", { class: "st-viol", x: r1(x(c)), y: TOP - 2 }, marks);
        t.textContent = "⚠";
        el("title", {}, t).textContent = `step ${col.step}: ${describe(ev)}`;
      } else if (ev.type === "partition" || ev.type === "heal") {
        const ln = el("line", { class: `st-net ${ev.type}`, x1: r1(x(c)), x2: r1(x(c)), y1: TOP - 4, y2: geo.height - BOTTOM }, marks);
        el("title", {}, ln).textContent = `step ${col.step}: ${describe(ev)}`;
      }
    }
  }

  // the cursor: the state shown is the one after every column left of it
  el("line", { class: "st-cursor", x1: r1(xCursor), x2: r1(xCursor), y1: TOP - 6, y2: geo.height - 2 }, marks);
  return { xCursor, xEnd };
}

// render redraws the visible part of the diagram.
function render() {
  frameAsked = false;
  if (!ui.open || !data) return;
  lastRender = performance.now();
  if (!vp.known) measure();
  const geo = geometry(data);
  const width = PAD + (data.cols.length + 2) * geo.colW;
  ui.svg.setAttribute("width", String(width));
  ui.svg.setAttribute("height", String(geo.height));
  ui.svg.setAttribute("viewBox", `0 0 ${width} ${geo.height}`);
  if (ui.labels.dataset.ids !== data.ids.join() || ui.labels.dataset.rowh !== String(geo.rowH)) buildLabels(geo);
  ui.svg.classList.toggle("causal", selected >= 0);
  ui.svg.classList.toggle("dense", data.n > 12);
  const cut = data.lastColAt(curStep);
  const xCursor = PAD + (cut + 1) * geo.colW;
  if (wantFollow) {
    wantFollow = false;
    const view = vp.w - LABEL_W;
    if (xCursor < vp.left + geo.colW || xCursor > vp.left + view - geo.colW) scrollTo(Math.max(0, xCursor - view * 0.75));
  }
  const left = vp.left;
  const view = vp.w - LABEL_W;
  const c0 = Math.floor((left - PAD) / geo.colW) - 2;
  const c1 = Math.ceil((left + view - PAD) / geo.colW) + 2;
  // and the process lines in view (with 32 processes most are scrolled away)
  const top = vp.top, h = vp.h;
  const rowA = Math.floor((top - TOP) / geo.rowH) - 1;
  const rowB = Math.ceil((top + h - TOP) / geo.rowH) + 1;
  // Redraw only when something shown changed: a dot rebuilt under the pointer loses
  // its tooltip.
  const key = [data.serial, data.events.length, data.cols.length, curStep, selected, active, ui.clocks, c0, c1, rowA, rowB, geo.rowH, geo.colW].join();
  if (key !== drawnKey || ui.svg.firstChild === null) {
    drawnKey = key;
    const g = el("g", {});
    draw(g, data, geo, c0, c1, rowA, rowB, PAD, { clocks: ui.clocks });
    ui.svg.replaceChildren(g);
  }
  section.dataset.columns = String(data.cols.length);
  section.dataset.events = String(data.events.length);
  section.dataset.messages = String(data.msgList.length);
  section.dataset.delivered = String(data.delivered);
  section.dataset.dropped = String(data.dropped);
  section.dataset.seq = String(data.lastSeq);
  section.dataset.stepDrawn = String(curStep);
  if (ui.clocks) showClocks();
}

function buildLabels(geo) {
  ui.labels.dataset.rowh = String(geo.rowH);
  ui.labels.dataset.ids = data.ids.join();
  const top = document.createElement("div");
  top.className = "st-label-top";
  top.textContent = "step";
  const rows = data.ids.map((id, p) => {
    const e = document.createElement("div");
    e.className = `st-label p${p % 8}`;
    const dot = document.createElement("span");
    dot.className = "dot";
    e.append(dot, document.createTextNode(`P${id}`));
    return e;
  });
  ui.labels.replaceChildren(top, ...rows);
  // Through CSSOM, which the page's CSP allows (a style attribute it does not).
  ui.labels.style.setProperty("--st-row", `${geo.rowH}px`);
  ui.labels.style.setProperty("--st-top", `${TOP}px`);
}

// kick asks for a redraw. While the run plays, the diagram redraws a few times a second
// at most (it is read, not watched like the processes view, and the frames are for the
// animation); a scroll redraws at once.
const PLAYING_REDRAW = 150; // ms
let putOff = 0; // a redraw put off while playing
function kick(followCursor, now) {
  if (followCursor && follow) wantFollow = true;
  if (putOff && now) {
    clearTimeout(putOff);
    putOff = 0;
    frameAsked = false;
  }
  if (frameAsked) return;
  frameAsked = true;
  const wait = !now && model?.playing ? lastRender + PLAYING_REDRAW - performance.now() : 0;
  if (wait > 0) {
    putOff = setTimeout(() => {
      putOff = 0;
      requestAnimationFrame(render);
    }, wait);
  } else {
    requestAnimationFrame(render);
  }
}

// ---- clocks at the current step ----

function showClocks() {
  if (!data) return;
  const cks = data.cz.clocksAt(curStep);
  const rows = cks.map((c, p) => {
    const tr = document.createElement("tr");
    tr.className = `p${p % 8}`;
    const th = document.createElement("th");
    th.scope = "row";
    const dot = document.createElement("span");
    dot.className = "dot";
    th.append(dot, document.createTextNode(` P${data.ids[p]}`));
    const l = document.createElement("td");
    l.textContent = String(c.lamport);
    const v = document.createElement("td");
    v.textContent = `[${c.vector.join(", ")}]`;
    tr.append(th, l, v);
    return tr;
  });
  ui.clockBody.replaceChildren(...rows);
  $("st-clock-step").textContent = `at step ${curStep}`;
}

// ---- data: fetch the timeline, then follow the stream ----

// loadTimeline fetches the session's whole timeline (GET .../timeline: the batches
// the stream sends, each with its step) and builds it.
async function loadTimeline() {
  const r = await fetch(`${app.dataset.api}/timeline`, { cache: "no-store" });
  if (!r.ok) throw new Error(`${r.status} ${(await r.text()).trim()}`);
  const doc = await r.json();
  const d = new Timeline(ids);
  d.horizon = doc.horizon;
  d.truncated = doc.truncated;
  for (const b of doc.batches) d.addBatch(b);
  return d;
}

async function refetch() {
  if (fetching) { again = true; return; }
  fetching = true;
  buffered = [];
  section.dataset.state = "loading";
  try {
    data = await loadTimeline();
    if (selected >= data.dots.length) selected = -1;
    if (active >= data.dots.length) active = -1;
    section.dataset.state = "ready";
    say(data.truncated ? `Showing the first ${data.events.length} events of this run.` : "");
  } catch (e) {
    section.dataset.state = "error";
    say(`Could not load the timeline: ${e.message}`);
  }
  fetching = false;
  const frames = buffered;
  buffered = null;
  if (again) { again = false; refetch(); return; }
  for (const f of frames) onEvents(f);
  kick(true);
}

function same(a, b) {
  return a.type === b.type && a.node === b.node && (a.msg?.id ?? 0) === (b.msg?.id ?? 0) && a.rule === b.rule && a.t === b.t;
}

// onEvents appends what the stream adds to the timeline. Steps replayed after a seek
// back come again with the seqs already known, and are skipped; a rewritten future (an
// intervention after a seek back) shows as a lower horizon or a known seq with other
// content, and the timeline is fetched again.
function onEvents(f) {
  if (buffered) { buffered.push(f); return; }
  if (!data) { refetch(); return; }
  if (f.horizon < data.horizon) { refetch(); return; }
  for (const b of f.batches) {
    if (!b.events.length) continue;
    const first = b.events[0].seq;
    if (first <= data.lastSeq) {
      for (const ev of b.events) {
        if (ev.seq > data.lastSeq) { refetch(); return; }
        const old = data.events[ev.seq - data.events[0].seq];
        if (!old || !same(old, ev) || old.step !== b.step) { refetch(); return; }
      }
      continue;
    }
    if (data.truncated) break; // the diagram stops where the fetched timeline did
    if (first !== data.lastSeq + 1) { refetch(); return; }
    data.addBatch(b);
  }
  data.horizon = Math.max(data.horizon, f.horizon);
}

function wireFrames() {
  document.addEventListener("pg:frame", (e) => {
    const { frame: f, model: m } = e.detail;
    model = m;
    section.dataset.step = String(m.step);
    switch (f.type) {
      case "hello":
        ids = m.ids.slice();
        data = null;
        selected = active = -1;
        if (ui.open) refetch();
        return;
      case "snapshot":
        curStep = m.step;
        if (!ui.open) return;
        if (!data && !fetching) refetch();
        else if (data && f.horizon !== data.horizon && !fetching) refetch();
        kick(true);
        return;
      case "events":
        curStep = m.step;
        if (!ui.open) { data = null; return; }
        onEvents(f);
        kick(true);
        return;
      case "state":
        curStep = m.step;
        if (ui.open) kick(false);
    }
  });
}

// ---- interaction ----

function say(text) { ui.info.textContent = text; }

function seek(step) {
  document.dispatchEvent(new CustomEvent("pg:command", { detail: { type: "seek", step } }));
}

// choose lights a dot's causal past and future and, unless only selecting, jumps there.
function choose(i, jump) {
  if (!data || i < 0 || i >= data.dots.length) return;
  const d = data.dots[i];
  selected = i;
  active = i;
  const lines = data.describeDot(d);
  say(`${lines[0]}: ${lines.slice(1).join("; ")}. Lit: its causal past (blue) and future (orange).`);
  if (jump) {
    follow = true;
    seek(data.cols[d.col].step);
  }
  kick(false);
}

function clearSelection() {
  selected = -1;
  say("");
  kick(false);
}

function wirePointer() {
  // Tooltips are made when the pointer comes: building one for every element drawn
  // costs more than the drawing.
  ui.svg.addEventListener("pointerover", (e) => {
    if (!data) return;
    const g = e.target.closest?.(".st-dot, .st-msg");
    if (!g || g.querySelector(":scope > title")) return;
    const text = g.classList.contains("st-dot") ? data.dots[Number(g.dataset.dot)] && data.describeDot(data.dots[Number(g.dataset.dot)]).join("\n")
      : data.msgs.get(Number(g.dataset.msg)) && data.describeMsg(data.msgs.get(Number(g.dataset.msg)));
    if (text) el("title", {}, g).textContent = text;
  });
  ui.svg.addEventListener("click", (e) => {
    const g = e.target.closest?.(".st-dot");
    if (!g) { clearSelection(); return; }
    choose(Number(g.dataset.dot), !e.shiftKey);
    ui.scroll.focus({ preventScroll: true });
  });

  ui.scroll.addEventListener("scroll", () => {
    measure();
    if (programmatic) { programmatic = false; }
    else if (data) {
      // The user scrolled: follow the cursor again only once it is in view.
      const geo = geometry(data);
      const x = PAD + (data.lastColAt(curStep) + 1) * geo.colW;
      follow = x >= vp.left && x <= vp.left + vp.w - LABEL_W;
    }
    kick(false, true);
  }, { passive: true });

  new ResizeObserver(() => {
    measure();
    if (ui.open) kick(false);
  }).observe(ui.scroll);
}

// Keyboard: the diagram is one tab stop; arrows move between events (left/right in
// time, up/down between processes), Enter jumps there and lights its causality,
// Shift+Enter only lights it, Escape clears, Home/End go to the first/last event.
function moveActive(dir) {
  if (!data || !data.dots.length) return;
  if (active < 0) {
    const c = Math.max(0, data.lastColAt(curStep));
    active = data.cols[c]?.dots[0] ?? data.dots.length - 1;
  } else if (dir === "left") active = Math.max(0, active - 1);
  else if (dir === "right") active = Math.min(data.dots.length - 1, active + 1);
  else if (dir === "home") active = 0;
  else if (dir === "end") active = data.dots.length - 1;
  else {
    // the nearest dot, by column, on the next process line up or down that has one
    const cur = data.dots[active];
    const step = dir === "up" ? -1 : 1;
    for (let p = cur.p + step; p >= 0 && p < data.n; p += step) {
      let best = -1, bd = Infinity;
      for (const dt of data.dots) {
        if (dt.p !== p) continue;
        const dd = Math.abs(dt.col - cur.col);
        if (dd < bd) { bd = dd; best = dt.i; }
      }
      if (best >= 0) { active = best; break; }
    }
  }
  const d = data.dots[active];
  say(data.describeDot(d).join("; "));
  // bring it into view
  const geo = geometry(data);
  const x = PAD + d.col * geo.colW;
  const view = vp.w - LABEL_W;
  if (x < vp.left || x > vp.left + view - geo.colW) scrollTo(Math.max(0, x - view / 2));
  const y = TOP + d.p * geo.rowH;
  if (y < vp.top || y > vp.top + vp.h - 2 * geo.rowH) {
    const before = ui.scroll.scrollTop;
    ui.scroll.scrollTop = Math.max(0, y - vp.h / 2);
    vp.top = ui.scroll.scrollTop;
    if (vp.top !== before) programmatic = true;
  }
  kick(false);
}

function wireKeys() {
  ui.scroll.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const keys = { ArrowLeft: "left", ArrowRight: "right", ArrowUp: "up", ArrowDown: "down", Home: "home", End: "end" };
    if (keys[e.key]) {
      moveActive(keys[e.key]);
    } else if (e.key === "Enter" || e.key === " ") {
      if (active < 0) moveActive("right");
      else choose(active, !e.shiftKey);
    } else if (e.key === "Escape") {
      clearSelection();
    } else {
      return;
    }
    // The page's own shortcuts (arrows step the run) stay out of the diagram's way.
    e.preventDefault();
    e.stopPropagation();
  });
}

// ---- open, close, clocks ----

function setOpen(open) {
  ui.open = open;
  follow = true;
  section.dataset.open = String(open);
  ui.toggle.setAttribute("aria-expanded", String(open));
  ui.body.hidden = !open;
  for (const b of section.querySelectorAll("[data-needs-open]")) b.hidden = !open;
  try { localStorage.setItem(STORE, open ? "open" : "closed"); } catch { /* private mode */ }
  if (open) {
    if (model) {
      // before the first frame, the hello frame will fetch
      curStep = model.step;
      ids = model.ids.slice();
      refetch();
    }
  } else {
    data = null;
    ui.svg.replaceChildren();
    drawnKey = "";
  }
}

function wireToggles() {
  ui.toggle.addEventListener("click", () => setOpen(!ui.open));

  ui.clockBtn.addEventListener("click", () => {
    ui.clocks = !ui.clocks;
    ui.clockBtn.setAttribute("aria-pressed", String(ui.clocks));
    ui.clockBox.hidden = !ui.clocks;
    kick(false);
  });
}

// ---- SVG exports for slides ----

const STYLE_PROPS = ["fill", "fill-opacity", "stroke", "stroke-width", "stroke-opacity", "stroke-dasharray",
  "stroke-linecap", "stroke-linejoin", "opacity", "font-family", "font-size", "font-weight", "font-style",
  "text-anchor", "dominant-baseline", "letter-spacing"];
const COLOR_PROPS = new Set(["fill", "stroke"]);
const KEEP_AS_IS = new Set(["defs", "marker", "title", "desc", "symbol", "clipPath", "linearGradient", "radialGradient", "style"]);

// colour turns a computed colour into #rrggbb and an opacity.
function colour(v) {
  const num = (s) => s.trim().endsWith("%") ? parseFloat(s) / 100 : parseFloat(s);
  let m = v.match(/^rgba?\(([^)]+)\)$/);
  let rgb, a = 1;
  if (m) {
    const parts = m[1].split(/[\s,/]+/).filter(Boolean);
    rgb = parts.slice(0, 3).map(Number);
    if (parts[3] !== undefined) a = num(parts[3]);
  } else if ((m = v.match(/^color\(srgb ([^)]+)\)$/))) {
    const parts = m[1].split(/[\s/]+/).filter(Boolean);
    rgb = parts.slice(0, 3).map((s) => Math.round(num(s) * 255));
    if (parts[3] !== undefined) a = num(parts[3]);
  } else {
    return { hex: v, a: 1 };
  }
  const hex = "#" + rgb.map((c) => Math.max(0, Math.min(255, Math.round(c))).toString(16).padStart(2, "0")).join("");
  return { hex, a };
}

// flatten copies an SVG in the page with every style it has resolved to presentation
// attributes, in the light theme, so that the file looks the same without the page's
// CSS: what slides and other tools need.
function flatten(src, width, height) {
  const root = document.documentElement;
  const had = root.getAttribute("data-theme");
  root.setAttribute("data-theme", "light");
  try {
    const out = src.cloneNode(true);
    const a = [src, ...src.querySelectorAll("*")];
    const b = [out, ...out.querySelectorAll("*")];
    const gone = [];
    for (let i = 0; i < a.length; i++) {
      const s = a[i], o = b[i];
      o.removeAttribute("style");
      o.removeAttribute("tabindex");
      if (KEEP_AS_IS.has(s.localName) || s.closest("defs")) continue;
      const cs = getComputedStyle(s);
      if (cs.display === "none" || cs.visibility === "hidden") { gone.push(o); continue; }
      const vals = {};
      for (const p of STYLE_PROPS) vals[p] = cs.getPropertyValue(p).trim();
      for (const p of COLOR_PROPS) {
        if (!vals[p] || vals[p] === "none") continue;
        const c = colour(vals[p]);
        vals[p] = c.hex;
        if (c.a < 1) {
          const o0 = parseFloat(vals[`${p}-opacity`]);
          vals[`${p}-opacity`] = String(Math.round((Number.isFinite(o0) ? o0 : 1) * c.a * 1000) / 1000);
        }
      }
      for (const p of STYLE_PROPS) {
        const v = vals[p];
        if (!v || v === "normal" || (p === "stroke-dasharray" && v === "none")) continue;
        o.setAttribute(p, v);
      }
    }
    for (const o of gone) o.remove();
    out.setAttribute("xmlns", NS);
    out.setAttribute("width", String(Math.round(width)));
    out.setAttribute("height", String(Math.round(height)));
    const bg = document.createElementNS(NS, "rect");
    const vb = (out.getAttribute("viewBox") || `0 0 ${width} ${height}`).split(/[\s,]+/).map(Number);
    bg.setAttribute("x", String(vb[0]));
    bg.setAttribute("y", String(vb[1]));
    bg.setAttribute("width", String(vb[2]));
    bg.setAttribute("height", String(vb[3]));
    bg.setAttribute("fill", "#ffffff");
    out.insertBefore(bg, out.firstChild);
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + new XMLSerializer().serializeToString(out) + "\n";
  } finally {
    if (had === null) root.removeAttribute("data-theme");
    else root.setAttribute("data-theme", had);
  }
}

// diagramSVG draws the whole diagram (up to EXPORT_COLUMNS columns), process labels
// included, off screen, and flattens it.
export function diagramSVG(d = data) {
  if (!d) return null;
  const geo = geometry(d);
  const cols = Math.min(d.cols.length, EXPORT_COLUMNS);
  const width = LABEL_W + PAD + (cols + 2) * geo.colW;
  const svg = el("svg", { class: "st-svg st-export", viewBox: `0 0 ${width} ${geo.height}`, width, height: geo.height });
  if (selected >= 0) svg.classList.add("causal");
  if (d.n > 12) svg.classList.add("dense");
  const g = el("g", {}, svg);
  draw(g, d, geo, 0, cols - 1, 0, d.n - 1, LABEL_W + PAD, { clocks: ui.clocks });
  const lg = el("g", { class: "st-export-labels" }, svg);
  d.ids.forEach((id, p) => {
    const t = el("text", { class: `st-export-label p${p % 8}`, x: 6, y: TOP + p * geo.rowH + geo.rowH / 2 }, lg);
    t.textContent = `P${id}`;
  });
  ui.off.replaceChildren(svg);
  try {
    return flatten(svg, width, geo.height);
  } finally {
    ui.off.replaceChildren();
  }
}

// viewSVG flattens the processes view as it is now.
export function viewSVG() {
  const v = $("view");
  const box = v.getBoundingClientRect();
  return flatten(v, box.width, box.height);
}

function download(name, text) {
  const blob = new Blob([text], { type: "image/svg+xml" });
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

function wireExports() {
  const slug = app.dataset.slug || "run";
  const saveDiagram = async () => {
    try {
      // Closed, the panel keeps no timeline: fetch one for the file.
      const d = data || (model ? await loadTimeline() : null);
      const text = diagramSVG(d);
      if (text) download(`${slug}-spacetime-step${curStep}.svg`, text);
    } catch (e) {
      say(`No diagram to save: ${e.message}`);
    }
  };
  const saveView = () => download(`${slug}-view-step${model ? model.step : 0}.svg`, viewSVG());
  $("st-svg").addEventListener("click", saveDiagram);
  $("st-view-svg").addEventListener("click", saveView);
  // The page's Export menu, when it has one, offers them too.
  const list = $("export-list");
  if (list) {
    for (const [id, text, fn] of [["export-view-svg", "Processes view (SVG)", saveView], ["export-spacetime-svg", "Space-time diagram (SVG)", saveDiagram]]) {
      const li = document.createElement("li");
      const b = document.createElement("button");
      b.type = "button";
      b.id = id;
      b.textContent = text;
      b.addEventListener("click", () => {
        fn();
        const menu = $("export-menu");
        if (menu) menu.open = false;
      });
      li.append(b);
      list.append(li);
    }
  }
}

// ---- start ----

function start() {
  let startOpen = false;
  try { startOpen = localStorage.getItem(STORE) === "open"; } catch { /* private mode */ }
  if (document.body.classList.contains("page-embed")) startOpen = false; // not shown there
  section.dataset.state = "idle";
  ui.open = false;
  if (startOpen) {
    ui.open = true;
    section.dataset.open = "true";
    ui.toggle.setAttribute("aria-expanded", "true");
    ui.body.hidden = false;
    for (const b of section.querySelectorAll("[data-needs-open]")) b.hidden = false;
  }
}

if (section) {
  wireFrames();
  wirePointer();
  wireKeys();
  wireToggles();
  wireExports();
  start();
}
