// The space-time (Lamport) diagram: one horizontal line per process, time running to
// the right one column per batch (a step of the run, or an intervention), messages as
// arrows from send to delivery, CS stays as bars, leadership, crashes and recoveries
// marked. It covers the whole timeline up to the horizon; a cursor shows the current
// step and what comes after it is dimmed. Clicking an event jumps there and lights its
// causal past and future (happened-before, computed by causal.js). It also exports
// itself and the processes view as self-contained SVG files. docs/spacetime.md.


import { byId as $, htmlEl, svgEl, noModifier } from "./dom.js";
import { messageClasses } from "./layout.js";
import { Timeline, TOP, BOTTOM, geometry } from "./timeline.js";
import { describeEvent } from "./text.js";
import { flatten, download } from "./svgexport.js";

const PAD = 12; // left margin inside the drawing
const LABEL_W = 46; // the process labels (HTML in the page, text in an export)
const EXPORT_COLUMNS = 4000; // an export bigger than this is clipped at its end
const STORE = "pg-spacetime";

const r1 = (x) => Math.round(x * 10) / 10;

// createSpacetime starts the diagram, when the page has one: page.root is the page's
// main element (data-api, data-slug), page.spec the algorithm, page.model the run,
// page.seek(step) moves the run. It returns what follows the run's frames, or null.
export function createSpacetime(page) {
  const section = $("spacetime");
  if (!section) return null;
  const st = {
    app: page.root,
    section,
    msgClass: messageClasses(page.spec),
    seekRun: page.seek,
    ui: {
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
    },
    ids: [],
    data: null, // the Timeline, once fetched
    timelines: 0, // timelines fetched: one fetched again is another drawing
    model: null, // the run, once its first frame came
    curStep: 0,
    fetching: false,
    again: false, // fetch once more when the current fetch ends
    buffered: null, // events frames that came during a fetch
    selected: -1, // dot whose causal past and future are lit
    active: -1, // dot the keyboard is on
    follow: true, // keep the cursor in view
    programmatic: false, // the next scroll event is the diagram's own
    wantFollow: false,
    frameAsked: false,
    lastRender: 0,
    putOff: 0, // a redraw put off while playing
    drawnKey: "",
    // The scroll box's viewport, read when it scrolls or resizes: reading it while
    // drawing would force a layout of the whole page in the middle of its animation frame.
    vp: { left: 0, top: 0, w: 0, h: 0, known: false },
  };
  wirePointer(st);
  wireKeys(st);
  wireToggles(st);
  wireExports(st);
  start(st);
  return { frame: (f, model) => frameTaken(st, f, model) };
}

function measure(st) {
  const { vp, ui } = st;
  vp.left = ui.scroll.scrollLeft;
  vp.top = ui.scroll.scrollTop;
  vp.w = ui.scroll.clientWidth;
  vp.h = ui.scroll.clientHeight;
  vp.known = vp.w > 0;
}

function scrollTo(st, x) {
  const before = st.ui.scroll.scrollLeft;
  st.ui.scroll.scrollLeft = x;
  st.vp.left = st.ui.scroll.scrollLeft;
  // (no scroll event comes when it did not move: then nothing is to be ignored)
  if (st.vp.left !== before) st.programmatic = true;
}

// draw renders columns c0..c1 and process lines rowA..rowB of the timeline into g (an SVG
// group), for the page or for an export; lpad is the drawing's left margin. Tooltips
// are left to the page (titles on hover): an export has no use for them.
function draw(st, g, d, geo, c0, c1, rowA, rowB, lpad, opts) {
  const { colW, rowH, n } = geo;
  const x = (col) => lpad + col * colW + colW / 2;
  const y = (p) => TOP + p * rowH + rowH / 2;
  const lastCol = d.cols.length - 1;
  const cut = d.lastColAt(st.curStep); // the cursor sits after this column
  const xCursor = lpad + (cut + 1) * colW;
  const xEnd = lpad + (lastCol + 1) * colW + colW; // where open things end
  const xa = lpad + c0 * colW, xb = Math.min(xEnd, lpad + (c1 + 1) * colW);
  const sel = st.selected >= 0 ? d.dots[st.selected] : null;

  const layer = (cls) => svgEl("g", { class: cls }, g);
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
      if (tag === "line") svgEl("line", { class: cls + (later ? " later" : ""), x1: r1(u), x2: r1(v), y1: r1(yy), y2: r1(yy), ...attrs }, parent);
      else svgEl("rect", { class: cls + (later ? " later" : ""), x: r1(u), width: r1(v - u), y: r1(yy), ...attrs }, parent);
    };
    mk(x1, Math.min(x2, xCursor), false);
    mk(Math.max(x1, xCursor), x2, true);
  };

  // step numbers along the top, every few columns
  // (a step with interventions has several columns: it is numbered once)
  const every = Math.max(1, Math.ceil(44 / colW));
  for (let c = Math.max(0, c0); c <= Math.min(c1, lastCol); c++) {
    if (c % every !== 0 || (c >= every && d.cols[c - every].step === d.cols[c].step)) continue;
    const t = svgEl("text", { class: "st-tick", x: r1(x(c)), y: 12 }, axis);
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
    const cls = [`st-msg ${st.msgClass.get(m.type) || "m6"} ${m.fate}`];
    if (m.sStep > st.curStep) cls.push("later");
    else if (m.eStep > st.curStep) cls.push("flying");
    if (sel) {
      const r = d.msgRelation(sel, m);
      if (r) cls.push(r);
    }
    const mg = svgEl("g", { class: cls.join(" "), "data-msg": m.id }, msgs);
    svgEl("line", { x1: r1(x1), y1: r1(y1), x2: r1(x2), y2: r1(y2) }, mg);
    if (m.fate === "delivered") {
      const a = Math.atan2(y2 - y1, x2 - x1), L = 7, W = 3.5;
      const bx = x2 - Math.cos(a) * 4, by = y2 - Math.sin(a) * 4; // stop at the dot's rim
      const p1 = [bx - Math.cos(a) * L - Math.sin(a) * W, by - Math.sin(a) * L + Math.cos(a) * W];
      const p2 = [bx - Math.cos(a) * L + Math.sin(a) * W, by - Math.sin(a) * L - Math.cos(a) * W];
      svgEl("path", { class: "head", d: `M${r1(bx)} ${r1(by)}L${r1(p1[0])} ${r1(p1[1])}L${r1(p2[0])} ${r1(p2[1])}Z` }, mg);
    } else if (m.fate === "dropped") {
      const t = svgEl("text", { class: "st-x", x: r1(x2), y: r1(y2) }, mg);
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
      if (col.step > st.curStep) cls.push("later");
      if (sel) {
        const r = d.relation(sel, dot);
        if (r) cls.push(r);
      }
      if (i === st.active) cls.push("active");
      const dg = svgEl("g", {
        class: cls.join(" "), id: `st-dot-${i}`, "data-dot": i, "data-step": col.step, "data-col": c, "data-p": dot.p,
        transform: `translate(${r1(x(c))} ${r1(y(dot.p))})`,
      }, dots);
      svgEl("circle", { class: "ring", r: r1(rad + 3.5) }, dg);
      svgEl("circle", { class: "body", r: r1(dot.lo < 0 ? rad * 0.7 : rad) }, dg);
      const mark = dot.flags.has("crash") ? "✕" : dot.flags.has("recover") ? "↻" : d.becameLeader(dot) ? "★" : "";
      if (mark) {
        const t = svgEl("text", { class: `st-mark${mark === "✕" ? " crash" : mark === "★" ? " star" : ""}`, x: r1(rad + 2), y: r1(-rad - 2) }, dg);
        t.textContent = mark;
      }
      if (labels && dot.rules.length) {
        // Every rule the step fired, one a line, the latest nearest the dot.
        const t = svgEl("text", { class: "st-rule", y: r1(-rad - 4) }, dg);
        dot.rules.forEach((rule, k) => {
          const line = svgEl("tspan", { x: "0", dy: k === 0 ? r1(-(dot.rules.length - 1) * 12) : "12" }, t);
          line.textContent = rule;
        });
      }
      if (opts.clocks) {
        const ck = d.dotClock(dot);
        if (ck) {
          const t = svgEl("text", { class: "st-lam", y: r1(rad + 10) }, dg);
          t.textContent = String(ck.lamport);
        }
      }
    }
    for (const k of col.marks) {
      const ev = d.events[k];
      if (ev.type === "violation") {
        const t = svgEl("text", { class: "st-viol", x: r1(x(c)), y: TOP - 2 }, marks);
        t.textContent = "⚠";
        svgEl("title", {}, t).textContent = `step ${col.step}: ${describeEvent(ev)}`;
      } else if (ev.type === "partition" || ev.type === "heal") {
        const ln = svgEl("line", { class: `st-net ${ev.type}`, x1: r1(x(c)), x2: r1(x(c)), y1: TOP - 4, y2: geo.height - BOTTOM }, marks);
        svgEl("title", {}, ln).textContent = `step ${col.step}: ${describeEvent(ev)}`;
      }
    }
  }

  // the cursor: the state shown is the one after every column left of it
  svgEl("line", { class: "st-cursor", x1: r1(xCursor), x2: r1(xCursor), y1: TOP - 6, y2: geo.height - 2 }, marks);
  return { xCursor, xEnd };
}

// render redraws the visible part of the diagram.
function render(st) {
  st.frameAsked = false;
  if (!st.ui.open || !st.data) return;
  st.lastRender = performance.now();
  if (!st.vp.known) measure(st);
  const geo = geometry(st.data.n, st.vp.h);
  const width = PAD + (st.data.cols.length + 2) * geo.colW;
  st.ui.svg.setAttribute("width", String(width));
  st.ui.svg.setAttribute("height", String(geo.height));
  st.ui.svg.setAttribute("viewBox", `0 0 ${width} ${geo.height}`);
  if (st.ui.labels.dataset.ids !== st.data.ids.join() || st.ui.labels.dataset.rowh !== String(geo.rowH)) buildLabels(st, geo);
  st.ui.svg.classList.toggle("causal", st.selected >= 0);
  st.ui.svg.classList.toggle("dense", st.data.n > 12);
  const cut = st.data.lastColAt(st.curStep);
  const xCursor = PAD + (cut + 1) * geo.colW;
  if (st.wantFollow) {
    st.wantFollow = false;
    const view = st.vp.w - LABEL_W;
    if (xCursor < st.vp.left + geo.colW || xCursor > st.vp.left + view - geo.colW) scrollTo(st, Math.max(0, xCursor - view * 0.75));
  }
  const left = st.vp.left;
  const view = st.vp.w - LABEL_W;
  const c0 = Math.floor((left - PAD) / geo.colW) - 2;
  const c1 = Math.ceil((left + view - PAD) / geo.colW) + 2;
  // and the process lines in view (with 32 processes most are scrolled away)
  const top = st.vp.top, h = st.vp.h;
  const rowA = Math.floor((top - TOP) / geo.rowH) - 1;
  const rowB = Math.ceil((top + h - TOP) / geo.rowH) + 1;
  // Redraw only when something shown changed: a dot rebuilt under the pointer loses
  // its tooltip.
  const key = [st.data.serial, st.data.events.length, st.data.cols.length, st.curStep, st.selected, st.active, st.ui.clocks, c0, c1, rowA, rowB, geo.rowH, geo.colW].join();
  if (key !== st.drawnKey || st.ui.svg.firstChild === null) {
    st.drawnKey = key;
    const g = svgEl("g", {});
    draw(st, g, st.data, geo, c0, c1, rowA, rowB, PAD, { clocks: st.ui.clocks });
    st.ui.svg.replaceChildren(g);
  }
  st.section.dataset.columns = String(st.data.cols.length);
  st.section.dataset.events = String(st.data.events.length);
  st.section.dataset.messages = String(st.data.msgList.length);
  st.section.dataset.delivered = String(st.data.delivered);
  st.section.dataset.dropped = String(st.data.dropped);
  st.section.dataset.seq = String(st.data.lastSeq);
  st.section.dataset.stepDrawn = String(st.curStep);
  if (st.ui.clocks) showClocks(st);
}

function buildLabels(st, geo) {
  st.ui.labels.dataset.rowh = String(geo.rowH);
  st.ui.labels.dataset.ids = st.data.ids.join();
  const top = htmlEl("div", { class: "st-label-top" }, "step");
  const rows = st.data.ids.map((id, p) => htmlEl("div", { class: `st-label p${p % 8}` }, htmlEl("span", { class: "dot" }), `P${id}`));
  st.ui.labels.replaceChildren(top, ...rows);
  // Through CSSOM, which the page's CSP allows (a style attribute it does not).
  st.ui.labels.style.setProperty("--st-row", `${geo.rowH}px`);
  st.ui.labels.style.setProperty("--st-top", `${TOP}px`);
}

// kick asks for a redraw. While the run plays, the diagram redraws a few times a second
// at most (it is read, not watched like the processes view, and the frames are for the
// animation); a scroll redraws at once.
const PLAYING_REDRAW = 150; // ms
function kick(st, followCursor, now) {
  if (followCursor && st.follow) st.wantFollow = true;
  if (st.putOff && now) {
    clearTimeout(st.putOff);
    st.putOff = 0;
    st.frameAsked = false;
  }
  if (st.frameAsked) return;
  st.frameAsked = true;
  const wait = !now && st.model?.playing ? st.lastRender + PLAYING_REDRAW - performance.now() : 0;
  if (wait > 0) {
    st.putOff = setTimeout(() => {
      st.putOff = 0;
      requestAnimationFrame(() => render(st));
    }, wait);
  } else {
    requestAnimationFrame(() => render(st));
  }
}

// ---- clocks at the current step ----

function showClocks(st) {
  if (!st.data) return;
  const cks = st.data.cz.clocksAt(st.curStep);
  const rows = cks.map((c, p) => htmlEl("tr", { class: `p${p % 8}` },
    htmlEl("th", { scope: "row" }, htmlEl("span", { class: "dot" }), ` P${st.data.ids[p]}`),
    htmlEl("td", {}, String(c.lamport)),
    htmlEl("td", {}, `[${c.vector.join(", ")}]`)));
  st.ui.clockBody.replaceChildren(...rows);
  $("st-clock-step").textContent = `at step ${st.curStep}`;
}

// ---- data: fetch the timeline, then follow the stream ----

// loadTimeline fetches the session's whole timeline (GET .../timeline: the batches
// the stream sends, each with its step) and builds it.
async function loadTimeline(st) {
  const r = await fetch(`${st.app.dataset.api}/timeline`, { cache: "no-store" });
  if (!r.ok) throw new Error(`${r.status} ${(await r.text()).trim()}`);
  const doc = await r.json();
  const d = new Timeline(st.ids);
  d.horizon = doc.horizon;
  d.truncated = doc.truncated;
  for (const b of doc.batches) d.addBatch(b);
  return d;
}

async function refetch(st) {
  if (st.fetching) { st.again = true; return; }
  st.fetching = true;
  st.buffered = [];
  st.section.dataset.state = "loading";
  try {
    st.data = await loadTimeline(st);
    st.data.serial = ++st.timelines;
    if (st.selected >= st.data.dots.length) st.selected = -1;
    if (st.active >= st.data.dots.length) st.active = -1;
    st.section.dataset.state = "ready";
    say(st, st.data.truncated ? `Showing the first ${st.data.events.length} events of this run.` : "");
  } catch (e) {
    st.section.dataset.state = "error";
    say(st, `Could not load the timeline: ${e.message}`);
  }
  st.fetching = false;
  const frames = st.buffered;
  st.buffered = null;
  if (st.again) { st.again = false; refetch(st); return; }
  for (const f of frames) onEvents(st, f);
  kick(st, true);
}

// onEvents appends what the stream adds to the timeline (Timeline.follow), or fetches
// it again when the stream rewrote it.
function onEvents(st, f) {
  if (st.buffered) { st.buffered.push(f); return; }
  if (!st.data || !st.data.follow(f)) refetch(st);
}

// frameTaken follows the run's frame f, once the model m has taken it.
function frameTaken(st, f, m) {
  st.model = m;
  st.section.dataset.step = String(m.step);
  switch (f.type) {
    case "hello":
      st.ids = m.ids.slice();
      st.data = null;
      st.selected = st.active = -1;
      if (st.ui.open) refetch(st);
      return;
    case "snapshot":
      st.curStep = m.step;
      if (!st.ui.open) return;
      if (!st.data && !st.fetching) refetch(st);
      else if (st.data && f.horizon !== st.data.horizon && !st.fetching) refetch(st);
      kick(st, true);
      return;
    case "events":
      st.curStep = m.step;
      if (!st.ui.open) { st.data = null; return; }
      onEvents(st, f);
      kick(st, true);
      return;
    case "state":
      st.curStep = m.step;
      if (st.ui.open) kick(st, false);
  }
}

// ---- interaction ----

function say(st, text) { st.ui.info.textContent = text; }

// choose lights a dot's causal past and future and, unless only selecting, jumps there.
function choose(st, i, jump) {
  if (!st.data || i < 0 || i >= st.data.dots.length) return;
  const d = st.data.dots[i];
  st.selected = i;
  st.active = i;
  const lines = st.data.describeDot(d);
  say(st, `${lines[0]}: ${lines.slice(1).join("; ")}. Lit: its causal past (blue) and future (orange).`);
  if (jump) {
    st.follow = true;
    st.seekRun(st.data.cols[d.col].step);
  }
  kick(st, false);
}

function clearSelection(st) {
  st.selected = -1;
  say(st, "");
  kick(st, false);
}

function wirePointer(st) {
  // Tooltips are made when the pointer comes: building one for every element drawn
  // costs more than the drawing.
  st.ui.svg.addEventListener("pointerover", (e) => {
    if (!st.data) return;
    const g = e.target.closest?.(".st-dot, .st-msg");
    if (!g || g.querySelector(":scope > title")) return;
    const text = g.classList.contains("st-dot") ? st.data.dots[Number(g.dataset.dot)] && st.data.describeDot(st.data.dots[Number(g.dataset.dot)]).join("\n")
      : st.data.msgs.get(Number(g.dataset.msg)) && st.data.describeMsg(st.data.msgs.get(Number(g.dataset.msg)));
    if (text) svgEl("title", {}, g).textContent = text;
  });
  st.ui.svg.addEventListener("click", (e) => {
    const g = e.target.closest?.(".st-dot");
    if (!g) { clearSelection(st); return; }
    choose(st, Number(g.dataset.dot), !e.shiftKey);
    st.ui.scroll.focus({ preventScroll: true });
  });

  st.ui.scroll.addEventListener("scroll", () => {
    measure(st);
    if (st.programmatic) { st.programmatic = false; }
    else if (st.data) {
      // The user scrolled: follow the cursor again only once it is in view.
      const geo = geometry(st.data.n, st.vp.h);
      const x = PAD + (st.data.lastColAt(st.curStep) + 1) * geo.colW;
      st.follow = x >= st.vp.left && x <= st.vp.left + st.vp.w - LABEL_W;
    }
    kick(st, false, true);
  }, { passive: true });

  new ResizeObserver(() => {
    measure(st);
    if (st.ui.open) kick(st, false);
  }).observe(st.ui.scroll);
}

// Keyboard: the diagram is one tab stop; arrows move between events (left/right in
// time, up/down between processes), Enter jumps there and lights its causality,
// Shift+Enter only lights it, Escape clears, Home/End go to the first/last event.
function moveActive(st, dir) {
  if (!st.data || !st.data.dots.length) return;
  if (st.active < 0) {
    const c = Math.max(0, st.data.lastColAt(st.curStep));
    st.active = st.data.cols[c]?.dots[0] ?? st.data.dots.length - 1;
  } else if (dir === "left") st.active = Math.max(0, st.active - 1);
  else if (dir === "right") st.active = Math.min(st.data.dots.length - 1, st.active + 1);
  else if (dir === "home") st.active = 0;
  else if (dir === "end") st.active = st.data.dots.length - 1;
  else {
    // the nearest dot, by column, on the next process line up or down that has one
    const cur = st.data.dots[st.active];
    const step = dir === "up" ? -1 : 1;
    for (let p = cur.p + step; p >= 0 && p < st.data.n; p += step) {
      let best = -1, bd = Infinity;
      for (const dt of st.data.dots) {
        if (dt.p !== p) continue;
        const dd = Math.abs(dt.col - cur.col);
        if (dd < bd) { bd = dd; best = dt.i; }
      }
      if (best >= 0) { st.active = best; break; }
    }
  }
  const d = st.data.dots[st.active];
  say(st, st.data.describeDot(d).join("; "));
  // bring it into view
  const geo = geometry(st.data.n, st.vp.h);
  const x = PAD + d.col * geo.colW;
  const view = st.vp.w - LABEL_W;
  if (x < st.vp.left || x > st.vp.left + view - geo.colW) scrollTo(st, Math.max(0, x - view / 2));
  const y = TOP + d.p * geo.rowH;
  if (y < st.vp.top || y > st.vp.top + st.vp.h - 2 * geo.rowH) {
    const before = st.ui.scroll.scrollTop;
    st.ui.scroll.scrollTop = Math.max(0, y - st.vp.h / 2);
    st.vp.top = st.ui.scroll.scrollTop;
    if (st.vp.top !== before) st.programmatic = true;
  }
  kick(st, false);
}

function wireKeys(st) {
  st.ui.scroll.addEventListener("keydown", (e) => {
    if (!noModifier(e)) return;
    const keys = { ArrowLeft: "left", ArrowRight: "right", ArrowUp: "up", ArrowDown: "down", Home: "home", End: "end" };
    if (keys[e.key]) {
      moveActive(st, keys[e.key]);
    } else if (e.key === "Enter" || e.key === " ") {
      if (st.active < 0) moveActive(st, "right");
      else choose(st, st.active, !e.shiftKey);
    } else if (e.key === "Escape") {
      clearSelection(st);
    } else {
      return;
    }
    // The page's own shortcuts (arrows step the run) stay out of the diagram's way.
    e.preventDefault();
    e.stopPropagation();
  });
}

// ---- open, close, clocks ----

function setOpen(st, open) {
  st.ui.open = open;
  st.follow = true;
  st.section.dataset.open = String(open);
  st.ui.toggle.setAttribute("aria-expanded", String(open));
  st.ui.body.hidden = !open;
  for (const b of st.section.querySelectorAll("[data-needs-open]")) b.hidden = !open;
  try { localStorage.setItem(STORE, open ? "open" : "closed"); } catch { /* private mode */ }
  if (open) {
    if (st.model) {
      // before the first frame, the hello frame will fetch
      st.curStep = st.model.step;
      st.ids = st.model.ids.slice();
      refetch(st);
    }
  } else {
    st.data = null;
    st.ui.svg.replaceChildren();
    st.drawnKey = "";
  }
}

function wireToggles(st) {
  st.ui.toggle.addEventListener("click", () => setOpen(st, !st.ui.open));

  st.ui.clockBtn.addEventListener("click", () => {
    st.ui.clocks = !st.ui.clocks;
    st.ui.clockBtn.setAttribute("aria-pressed", String(st.ui.clocks));
    st.ui.clockBox.hidden = !st.ui.clocks;
    kick(st, false);
  });
}

// diagramSVG draws the whole diagram (up to EXPORT_COLUMNS columns), process labels
// included, off screen, and flattens it.
function diagramSVG(st, d = st.data) {
  if (!d) return null;
  const geo = geometry(d.n, st.vp.h);
  const cols = Math.min(d.cols.length, EXPORT_COLUMNS);
  const width = LABEL_W + PAD + (cols + 2) * geo.colW;
  const svg = svgEl("svg", { class: "st-svg st-export", viewBox: `0 0 ${width} ${geo.height}`, width, height: geo.height });
  if (st.selected >= 0) svg.classList.add("causal");
  if (d.n > 12) svg.classList.add("dense");
  const g = svgEl("g", {}, svg);
  draw(st, g, d, geo, 0, cols - 1, 0, d.n - 1, LABEL_W + PAD, { clocks: st.ui.clocks });
  const lg = svgEl("g", { class: "st-export-labels" }, svg);
  d.ids.forEach((id, p) => {
    const t = svgEl("text", { class: `st-export-label p${p % 8}`, x: 6, y: TOP + p * geo.rowH + geo.rowH / 2 }, lg);
    t.textContent = `P${id}`;
  });
  st.ui.off.replaceChildren(svg);
  try {
    return flatten(svg, width, geo.height);
  } finally {
    st.ui.off.replaceChildren();
  }
}

// viewSVG flattens the processes view as it is now.
// A crowded view paints its moving messages on a canvas (msglayer.js): it puts them
// back in the SVG, where they are, for the time of the copy.
function viewSVG() {
  const v = $("view");
  const box = v.getBoundingClientRect();
  v.dispatchEvent(new Event("pg:exporting"));
  try {
    return flatten(v, box.width, box.height);
  } finally {
    v.dispatchEvent(new Event("pg:exported"));
  }
}

function wireExports(st) {
  const slug = st.app.dataset.slug || "run";
  const saveDiagram = async () => {
    try {
      // Closed, the panel keeps no timeline: fetch one for the file.
      const d = st.data || (st.model ? await loadTimeline(st) : null);
      const text = diagramSVG(st, d);
      if (text) download(`${slug}-spacetime-step${st.curStep}.svg`, text);
    } catch (e) {
      say(st, `No diagram to save: ${e.message}`);
    }
  };
  const saveView = () => download(`${slug}-view-step${st.model ? st.model.step : 0}.svg`, viewSVG());
  $("st-svg").addEventListener("click", saveDiagram);
  $("st-view-svg").addEventListener("click", saveView);
  // The page's Export menu, when it has one, offers them too.
  const list = $("export-list");
  if (list) {
    for (const [id, text, fn] of [["export-view-svg", "Processes view (SVG)", saveView], ["export-spacetime-svg", "Space-time diagram (SVG)", saveDiagram]]) {
      const b = htmlEl("button", { type: "button", id }, text);
      b.addEventListener("click", () => {
        fn();
        const menu = $("export-menu");
        if (menu) menu.open = false;
      });
      list.append(htmlEl("li", {}, b));
    }
  }
}

// ---- start ----

function start(st) {
  let startOpen = false;
  try { startOpen = localStorage.getItem(STORE) === "open"; } catch { /* private mode */ }
  if (document.body.classList.contains("page-embed")) startOpen = false; // not shown there
  st.section.dataset.state = "idle";
  st.ui.open = false;
  if (startOpen) {
    st.ui.open = true;
    st.section.dataset.open = "true";
    st.ui.toggle.setAttribute("aria-expanded", "true");
    st.ui.body.hidden = false;
    for (const b of st.section.querySelectorAll("[data-needs-open]")) b.hidden = false;
  }
}
