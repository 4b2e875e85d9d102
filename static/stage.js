// The stage: the processes view, the panels beside it (pseudocode, inspector, log) and
// the run's controls, following the model. Frames come in through takeFrame; the
// drawing waits for the next animation frame, so that a fast run's many frames cost
// one paint.

import { workloadScenario, WORKLOAD_TITLE } from "./workload.js";
import { byId as $, htmlEl } from "./dom.js";
import { applyHello, applySnapshot, applyEvents, applyState, standingViolation } from "./model.js";
import { violationText } from "./text.js";
import { View } from "./view.js";
import { Code, Inspector, Narrator } from "./panels.js";
import { newClock, clockTo, clockNow, nextSpeed, panelsDue, FAST_SPEED } from "./clock.js";
import { end } from "./connection.js";
import { readParams, controlState, errorParam, playQuery } from "./setupform.js";
import { crowded } from "./layout.js";
import { Announcer } from "./announce.js";

// createStage builds the stage of the page: page.root is the main element, page.spec
// the algorithm, page.model the run, page.conn the socket, page.send(frame) sends a
// command. It returns the stage's state, which every function here takes.
export function createStage(page) {
  const st = {
    app: page.root,
    spec: page.spec,
    model: page.model,
    conn: page.conn,
    send: page.send,
    view: new View($("view"), page.spec),
    code: new Code($("code-scroll"), $("follow")),
    inspector: null,
    narrator: new Narrator($("log"), page.spec),
    announcer: new Announcer($("announce")),
    selected: -1, // process position followed by the pseudocode and the keyboard
    pending: new Map(), // ref -> what to do with an error about it
    clk: newClock(),
    drawnTopology: -1,
    frameRequested: false,
    dirty: false, // the model changed since the last paint
    dirtyFull: false, // ... by a snapshot: the log is rebuilt from the model
    panelsDirty: false, // the view follows the model, the panels not yet (clock.js, panelsDue)
    panelsAt: -Infinity, // when the panels last followed (performance.now())
    panelsPart: 0, // the next part of a round of the panels begun (PANELS), 0: none
    logQueue: [], // events for the log since the last paint
    logFrom: 0, // the step of the queue's first event
    seekBusy: false,
    seekWanted: null,
    timelineDragging: false,
    toastTimer: 0,
    toastEl: htmlEl("div", { class: "toast", role: "alert", hidden: true }),
    playBtn: $("btn-play"),
    timeline: $("timeline"),
    readout: $("readout"),
    speedSel: $("speed"),
    form: $("setup-form"),
    setupURL: null, // the /play address of a setup sent, taken when the server accepts it
  };
  st.inspector = new Inspector($("vars"), $("inflight"), $("inflight-count"), page.spec, (id) => act(st, "drop", { msg: id }));
  // The view is drawn in CSS pixels: a new size of its box (or of the SVG in it, which
  // a caption shares the box with) redraws it.
  // (Observer callbacks come after layout and before paint: redrawing here never shows
  // a frame at the old size.)
  const refit = () => {
    if (st.drawnTopology < 0 || !st.view.fitToWrap()) return;
    st.drawnTopology = -1;
    redraw(st, false);
    paint(st); // now: before this frame is painted at the new size
  };
  const resized = new ResizeObserver(refit);
  resized.observe($("svg-wrap"));
  resized.observe($("view"));
  // The stage's scale follows the window and the type size (projector.js says when).
  window.addEventListener("resize", refit);
  document.addEventListener("pg:stagescale", refit);
  // The run controls' height, for the narrow layout's drawing (app.css, --ctl-h).
  new ResizeObserver(([e]) => {
    document.documentElement.style.setProperty("--ctl-h", `${Math.ceil(e.borderBoxSize[0].blockSize)}px`);
  }).observe($("controls"));
  $("svg-wrap").appendChild(st.toastEl);
  wireControls(st);
  wireSetup(st);
  return st;
}

// ---- frames ----

// showAlgorithm heads the page with the run's algorithm: a Starlark source's title
// (hello.title, with its rules), marked as the student's own when the source was
// written from scratch (hello.own), or the page's own algorithm's.
function showAlgorithm(f) {
  const h1 = document.getElementById("algo-title");
  if (!h1) return;
  const title = f.rules && f.title ? f.title : h1.dataset.page;
  if (title) {
    h1.textContent = title;
    document.title = `${title} · Distributed playground`;
  }
  const own = document.getElementById("own-tag");
  if (own) own.hidden = !f.own;
}

// takeFrame lets the model take a frame from the server and the stage follow it.
export function takeFrame(st, f) {
  const model = st.model;
  switch (f.type) {
    case "hello":
      applyHello(model, f);
      st.code.setRules(f.rules); // a Starlark source's rules, or the page's own
      st.narrator.setRules(f.rules);
      st.inspector.setVars(f.vars);
      showAlgorithm(f);
      setupTaken(st);
      fillSetup(st);
      break;
    case "snapshot":
      applySnapshot(model, f);
      glideTo(st, model.t, false);
      st.seekBusy = false;
      if (st.seekWanted !== null) { const s = st.seekWanted; st.seekWanted = null; seek(st, s); }
      redraw(st, true); // paint sets data-ready once the page shows the snapshot
      break;
    case "events": {
      const wasPlaying = model.playing;
      const evs = f.batches.flatMap((b) => b.events);
      if (!st.logQueue.length) st.logFrom = model.step + 1;
      applyEvents(model, f);
      st.logQueue.push(...evs);
      glideTo(st, model.t, wasPlaying && model.playing);
      redraw(st, false);
      break;
    }
    case "state":
      applyState(model, f);
      glideTo(st, model.t, model.playing);
      redraw(st, false);
      break;
    case "error":
      takeError(st, f);
      break;
  }
}

function takeError(st, f) {
  st.seekBusy = false; // a refused seek must not block the next one
  const what = st.pending.get(f.ref);
  st.pending.delete(f.ref);
  if (f.code === "gone") {
    end(st.conn);
    setStatus("offline", "This run has ended");
    // A fresh page gets a fresh session; do not loop if that fails too. The page says
    // what it chose (data-on-gone: reload or stay), so a test need not wait to see.
    const last = Number(sessionStorage.getItem("reloaded") || 0);
    const reload = Date.now() - last > 10000;
    st.app.dataset.onGone = reload ? "reload" : "stay";
    if (reload) {
      sessionStorage.setItem("reloaded", String(Date.now()));
      setTimeout(() => location.reload(), 800);
    }
    return;
  }
  if (what === "setup") {
    setupError(st, f.error);
    return;
  }
  toast(st, f.error);
}

let lessMotion = null; // the media query, made once the page first needs it

// glideTo sets the virtual clock to a frame's time (clock.js); a paused step glides
// there unless the page is not shown yet or the user asks for less motion (then a
// playing run's messages jump from step to step too).
function glideTo(st, t, playing) {
  lessMotion ??= matchMedia("(prefers-reduced-motion: reduce)");
  const still = lessMotion.matches;
  st.clk.jump = still; // playing, the messages jump from step to step
  const smooth = st.app.dataset.ready === "true" && !still;
  clockTo(st.clk, t, playing, smooth, performance.now());
  kick(st);
}

// ---- drawing ----

// redraw asks for the view and panels to follow the model at the next animation
// frame. A fast run delivers several socket frames per display frame; painting each
// one made the browser lay the page out again for each (the log's scroll, the
// pseudocode's scroll into view; docs/benchmarks.md, "Heavy traffic at 4x").
function redraw(st, full) {
  st.dirty = true;
  if (full) st.dirtyFull = true;
  st.app.dataset.settled = "false"; // until the next frame has placed the messages
  kick(st);
}

// paint makes the view follow the model, and the panels too unless they followed less
// than PANELS_MS (PANELS_FAST_MS at 4x and faster, PANELS_CROWD_MS in a crowd) ago
// while the run plays (then a later frame does it).
function paint(st, now = performance.now()) {
  const { model, view, code, narrator } = st;
  // Scrolls left by the last paint first, while the layout is still the one on screen.
  code.settle();
  narrator.settle();
  if (st.dirty) {
    st.dirty = false;
    st.panelsDirty = true;
    if (model.topology !== st.drawnTopology) {
      view.build(model);
      st.drawnTopology = model.topology;
      if (st.selected >= model.nodes.length) st.selected = -1;
    }
    view.select(st.selected);
    view.update(model);
    view.syncMessages(model, model.index);
  }
  // Paused, or after a snapshot, all the panels follow in this frame; while the run
  // plays, one a frame: the page lays each out and paints it in a frame of its own,
  // and none of them makes a frame miss its vsync (docs/benchmarks.md, "Heavy
  // traffic at 4x").
  const all = st.dirtyFull || !model.playing;
  if (st.panelsPart > 0) {
    if (!all) { showPanels(st, 1); return; } // the next part of the round begun
    st.panelsPart = 0; // the round begun gives way to a whole one, now
    st.panelsDirty = true;
  }
  if (!st.panelsDirty || !(all || panelsDue(model.playing, model.speed, now, st.panelsAt, crowded(model.inflight.size)))) return;
  st.panelsDirty = false;
  st.panelsAt = now;
  showPanels(st, all ? PANELS.length : 1);
}

// PANELS are the parts of a round of the panels, in order: the log, the inspector,
// then the pseudocode and the controls.
const PANELS = [
  (st) => {
    st.narrator.fast(st.model.playing && st.model.speed >= FAST_SPEED);
    const { model } = st;
    if (st.dirtyFull) {
      st.narrator.rebuild(model); // model.recent has every event queued too
      if (!model.playing && st.app.dataset.ready === "true") st.announcer.moved(model.step, st.narrator.latest());
    } else if (st.logQueue.length) {
      const lines = st.narrator.append(st.logQueue, model);
      st.announcer.take(st.logQueue, lines, model.playing, st.logFrom, model.step);
    }
    st.logQueue = [];
  },
  (st) => st.inspector.show(st.model, st.selected),
  (st) => {
    st.code.show(st.model, st.selected);
    updateControls(st);
    if (st.dirtyFull && st.conn.ws) st.app.dataset.ready = "true";
    st.dirtyFull = false;
  },
];

// showPanels shows at most count parts of the round of the panels, from
// st.panelsPart on; st.panelsPart is 0 again when the round is over.
function showPanels(st, count) {
  const from = st.panelsPart;
  const to = Math.min(PANELS.length, from + count);
  for (let k = from; k < to; k++) PANELS[k](st);
  st.panelsPart = to === PANELS.length ? 0 : to;
}

function kick(st) {
  if (!st.frameRequested) {
    st.frameRequested = true;
    requestAnimationFrame((now) => frame(st, now));
  }
}

function frame(st, now) {
  st.frameRequested = false;
  paint(st, now);
  const vt = clockNow(st.clk, st.model, now);
  st.clk.last = vt;
  st.view.place(vt);
  const moving = (st.model.playing && !st.model.quiet) || st.clk.tween !== 0;
  const scrolling = st.code.visible || st.narrator.stick; // settle at the next frame
  const busy = moving || scrolling || st.panelsDirty || st.panelsPart > 0;
  st.app.dataset.settled = busy ? "false" : "true";
  if (busy) kick(st);
}

// select makes process position i (-1: none) the one the pseudocode, the inspector
// and the keyboard follow.
export function select(st, i) {
  st.selected = i;
  st.view.select(i);
  st.view.update(st.model);
  st.code.show(st.model, i);
  st.inspector.show(st.model, i);
  // The projector's rule strip follows the selection too (projector.js).
  document.dispatchEvent(new CustomEvent("pg:select", { detail: i }));
}

// ---- status and toasts ----

function updateControls(st) {
  const { model, playBtn, timeline, speedSel } = st;
  playBtn.setAttribute("aria-pressed", String(model.playing));
  playBtn.setAttribute("aria-label", model.playing ? "Pause" : "Play");
  timeline.max = String(model.horizon);
  if (!st.timelineDragging) timeline.value = String(model.step);
  st.readout.textContent = `step ${model.step} of ${model.horizon} · t = ${model.t}` +
    (model.interventions ? ` · ${model.interventions} intervention${model.interventions > 1 ? "s" : ""}` : "");
  if (String(model.speed) !== speedSel.value) speedSel.value = String(model.speed);
  st.app.dataset.step = String(model.step);
  // A lecture's follower cannot click a process: the presenter acts.
  const follower = document.body.classList.contains("lecture-follower");
  const todo = st.spec.family === "election" ? "Crash or Start an election" : "Request the CS";
  const what = `click a process and choose ${todo}`;
  // The server slows the runs of a network using more than its share of the CPU
  // while others wait (docs/protocol.md, "slowed"): the pill says so.
  const [state, said] = model.stopped ? ["stopped", "Stopped: " + model.stopped]
    : follower && model.quiet ? ["quiet", "Waiting for the presenter"]
      : model.quiet && !model.playing && canStartWorkload(st) ? ["quiet", `Ready: press Play to start, or ${what}`]
        : model.quiet ? ["quiet", `Nothing more will happen by itself: ${what}`]
          : model.playing && model.slowed ? ["playing", `Playing ${model.speed}× · slowed: the server is busy`]
            : model.playing ? ["playing", `Playing ${model.speed}×`]
              : ["paused", "Paused"];
  // A broken property the run is in takes the pill's words, for presenter and
  // followers alike; data-state still says whether the run plays or is quiet.
  const violation = standingViolation(model);
  const covered = violation && !model.stopped;
  // the title keeps the run's state, which the violation's words cover
  const [text, title] = covered ? [violationText(violation), said] : [said, ""];
  showStatus(state, text, violation ? violation.property : "", title);
}

// showStatus writes the status pill, a live region: only what changed, so that a
// screen reader hears a state once.
function showStatus(state, text, violation, title) {
  const s = $("status");
  if (s.dataset.state !== state) s.dataset.state = state;
  if (s.dataset.violation !== violation) s.dataset.violation = violation;
  if (s.title !== title) s.title = title;
  if (s.textContent !== text) s.textContent = text;
}

// setStatus shows the run's state (data-state) and says it in words.
export function setStatus(state, text) {
  showStatus(state, text, "", "");
}

// toast says something briefly over the view.
export function toast(st, text) {
  st.toastEl.textContent = text;
  st.toastEl.hidden = false;
  clearTimeout(st.toastTimer);
  st.toastTimer = setTimeout(() => { st.toastEl.hidden = true; }, 3500);
}

// ---- commands ----

// togglePlay plays or pauses. Play on a free run with nothing scheduled and nothing
// done yet starts the algorithm's default workload (static/workload.js): the run is
// set up again with it as its events, so a link or a replay carries it exactly.
export function togglePlay(st) {
  const m = st.model;
  if (!m.playing && canStartWorkload(st)) {
    const sc = workloadScenario(m.scenario, st.spec.family, m.ids, m.seed);
    if (sc && st.send({ type: "reset", scenario: sc })) {
      toast(st, `${WORKLOAD_TITLE}: ${sc.about}`);
      st.send({ type: "play" });
      return;
    }
  }
  st.send({ type: m.playing ? "pause" : "play" });
}

// canStartWorkload: a free run, quiet at its first step, with nothing scheduled.
function canStartWorkload(st) {
  const m = st.model;
  return !document.body.classList.contains("lecture-follower") && !m.name && m.quiet &&
    m.step === 0 && !m.interventions && !m.scenario?.events?.length && !m.scenario?.title;
}
export const step = (st) => st.send({ type: "step" });
export const back = (st) => st.send({ type: "back" });
export const restart = (st) => st.send({ type: "reset" });

// seek sends one seek at a time; while the server replays, only the latest wish waits.
export function seek(st, s) {
  s = Math.max(0, Math.min(st.model.horizon, s));
  if (st.seekBusy) { st.seekWanted = s; return; }
  st.seekBusy = true;
  if (!st.send({ type: "seek", step: s })) st.seekBusy = false;
}

function setSpeed(st, x) {
  st.send({ type: "speed", speed: x });
}

export function speedBy(st, d) {
  setSpeed(st, nextSpeed(st.model.speed, d));
}

// act sends an intervention; an error about it is toasted.
export function act(st, what, extra) {
  const r = st.send({ type: "act", do: what, ...extra });
  if (r) st.pending.set(r, "act");
}

function wireControls(st) {
  const { timeline, playBtn, speedSel } = st;
  timeline.addEventListener("pointerdown", () => { st.timelineDragging = true; });
  timeline.addEventListener("pointerup", () => { st.timelineDragging = false; });
  timeline.addEventListener("input", () => seek(st, Number(timeline.value)));
  playBtn.addEventListener("click", () => togglePlay(st));
  $("btn-step").addEventListener("click", () => step(st));
  $("btn-back").addEventListener("click", () => back(st));
  $("btn-reset").addEventListener("click", () => restart(st));
  speedSel.addEventListener("change", () => setSpeed(st, Number(speedSel.value)));
}

// ---- run setup ----

// The params controls (web/pages/setup.go): one .param per declared field, read and
// filled through setupform.js whatever the algorithm.
function paramControls(st) {
  return [...st.form.querySelectorAll(".param")].map((div) => {
    const input = div.querySelector("[name]");
    return { div, input, name: div.dataset.param, kind: div.dataset.kind, def: div.dataset.default,
      value: input.value, checked: input.checked };
  });
}

function fillSetup(st) {
  const { model } = st;
  const fe = st.form.elements;
  const nw = model.network;
  fe.nodes.value = model.ids.length;
  fe.seed.value = model.seed;
  fe.dmin.value = nw.delay[0];
  fe.dmax.value = nw.delay[1];
  fe.loss.value = nw.loss;
  fe.cs.value = model.cs;
  fe.fifo.checked = nw.fifo;
  fe.hold.checked = nw.hold;
  const params = model.scenario?.params;
  for (const c of paramControls(st)) {
    if (c.kind === "node") {
      // A node is one of the run's ids; the first option leaves the default.
      c.input.replaceChildren(c.input.options[0], ...model.ids.map((id) => htmlEl("option", { value: String(id) }, `P${id}`)));
    }
    const s = controlState(c, params);
    if (c.kind === "bool") c.input.checked = s.checked;
    else c.input.value = s.value;
  }
  clearSetupErrors(st);
}

function clearSetupErrors(st) {
  $("setup-error").textContent = "";
  for (const c of paramControls(st)) showParamError(c, "");
}

function showParamError(c, msg) {
  c.div.querySelector(".param-error").textContent = msg;
  if (msg) c.input.setAttribute("aria-invalid", "true");
  else c.input.removeAttribute("aria-invalid");
}

// setupError shows a refused setup: in the form, and beside the control of the param
// it names.
function setupError(st, msg) {
  st.setupURL = null;
  $("setup-error").textContent = msg;
  const name = errorParam(msg);
  const c = paramControls(st).find((x) => x.name === name);
  if (c) {
    showParamError(c, msg);
    c.div.closest("details").open = true;
  }
}

// setupTaken follows an accepted setup: a /play page's URL then says the new setup,
// so that a reload or a copied address gives it again (docs/links.md).
function setupTaken(st) {
  if (st.setupURL) history.replaceState(history.state, "", st.setupURL);
  st.setupURL = null;
}

function wireSetup(st) {
  const fe = st.form.elements;
  st.form.addEventListener("submit", (e) => {
    e.preventDefault();
    const { model } = st;
    clearSetupErrors(st);
    const controls = paramControls(st);
    const { params, problems } = readParams(controls);
    const bad = controls.filter((c) => problems[c.name]);
    if (bad.length) {
      for (const c of bad) showParamError(c, problems[c.name]);
      $("setup-error").textContent = problems[bad[0].name];
      return;
    }
    const sc = structuredClone(model.scenario || { version: 2, algorithm: st.spec.slug });
    // A new setup starts as a free run again: the default workload was this setup's.
    if (sc.title === WORKLOAD_TITLE) for (const k of ["title", "about", "events", "captions"]) delete sc[k];
    const nodes = Number(fe.nodes.value);
    if (nodes !== model.ids.length) delete sc.ids;
    sc.nodes = nodes;
    sc.seed = Number(fe.seed.value);
    sc.cs = Number(fe.cs.value);
    sc.network = {
      delay: [Number(fe.dmin.value), Number(fe.dmax.value)],
      fifo: fe.fifo.checked, loss: Number(fe.loss.value), hold: fe.hold.checked,
    };
    if (Object.keys(params).length) sc.params = params;
    else delete sc.params;
    // Only a /play page's address describes its run by query (its ids are the
    // default ones, and it has no events); /s/ and /r/ keep theirs.
    st.setupURL = /^\/(embed\/)?play\//.test(location.pathname) && !sc.events?.length
      ? `${location.pathname}?${playQuery(sc)}` : null;
    const r = st.send({ type: "reset", scenario: sc });
    if (r) st.pending.set(r, "setup");
  });
}
