// The playground page: connects to its session over a WebSocket, keeps the model, and
// drives the view, the panels and the controls. No framework, no build step.

import { newModel, applyHello, applySnapshot, applyEvents, applyState } from "./model.js";
import { View } from "./view.js";
import { Code, Inspector, Narrator } from "./panels.js";
import "./network.js"; // Be the network: hold mode, partitions, FIFO/delay/loss live
import "./share.js"; // Copy link, Export menu
import "./captions.js"; // curated scenarios' captions
import "./spacetime.js"; // space-time diagram, clocks, SVG exports
import "./metrics.js"; // measured against the notes' formulas
import "./lecture.js"; // lecture mode: presenter and followers
import "./explore.js"; // Explore: every interleaving checked on the server

const app = document.getElementById("main");
const spec = JSON.parse(document.getElementById("spec").textContent);
const $ = (id) => document.getElementById(id);

const model = newModel();
const view = new View($("view"), spec);
const code = new Code($("code-scroll"), $("follow"));
const inspector = new Inspector($("vars"), $("inflight"), $("inflight-count"), spec, (id) => act("drop", { msg: id }));
const narrator = new Narrator($("log"), spec);

let selected = -1; // process position followed by the pseudocode and the keyboard
let ws = null;
let ref = 0;
let retry = 0;
const pending = new Map(); // ref -> what to do with an error about it

// ---- connection ----

function connect() {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  ws = new WebSocket(`${scheme}//${location.host}${app.dataset.ws}`);
  setStatus("connecting", "Connecting…");
  ws.onopen = () => { retry = 0; };
  ws.onmessage = (e) => {
    let f;
    try { f = JSON.parse(e.data); } catch { return; }
    receive(f);
  };
  ws.onclose = () => {
    ws = null;
    app.dataset.ready = "false";
    if (gone) return;
    setStatus("offline", "Disconnected: retrying…");
    retry = Math.min(retry + 1, 6);
    setTimeout(connect, 500 * 2 ** retry);
  };
}

let gone = false;

function send(frame) {
  if (!ws || ws.readyState !== WebSocket.OPEN) {
    toast("Not connected yet");
    return 0;
  }
  frame.ref = ++ref;
  ws.send(JSON.stringify(frame));
  return frame.ref;
}

function receive(f) {
  switch (f.type) {
    case "hello":
      applyHello(model, f);
      fillSetup();
      break;
    case "snapshot":
      applySnapshot(model, f);
      clockTo(model.t, false);
      seekBusy = false;
      if (seekWanted !== null) { const s = seekWanted; seekWanted = null; seek(s); }
      redraw(true); // paint sets data-ready once the page shows the snapshot
      break;
    case "events": {
      const wasPlaying = model.playing;
      const evs = f.batches.flatMap((b) => b.events);
      applyEvents(model, f);
      logQueue.push(...evs);
      clockTo(model.t, wasPlaying && model.playing);
      redraw(false);
      break;
    }
    case "state":
      applyState(model, f);
      clockTo(model.t, model.playing);
      redraw(false);
      break;
    case "error":
      onError(f);
      break;
  }
  // Panels in their own modules (space-time diagram, metrics, network, lecture...)
  // follow the run through this event, after the model has taken the frame.
  document.dispatchEvent(new CustomEvent("pg:frame", { detail: { frame: f, model } }));
}

// Panels ask for a command through this event: {detail: frame}; they never hold the socket.
document.addEventListener("pg:command", (e) => send({ ...e.detail }));

function onError(f) {
  seekBusy = false; // a refused seek must not block the next one
  const what = pending.get(f.ref);
  pending.delete(f.ref);
  if (f.code === "gone") {
    gone = true;
    setStatus("offline", "This run has ended");
    // A fresh page gets a fresh session; do not loop if that fails too.
    const last = Number(sessionStorage.getItem("reloaded") || 0);
    if (Date.now() - last > 10000) {
      sessionStorage.setItem("reloaded", String(Date.now()));
      setTimeout(() => location.reload(), 800);
    }
    return;
  }
  if (what === "setup") {
    $("setup-error").textContent = f.error;
    return;
  }
  toast(f.error);
}

// ---- virtual clock: where messages are drawn ----

// The server paces virtual time; between frames the page extrapolates it, never past
// the latest arrival in flight, and when paused it glides to the step's time.
const clk = { base: 0, wall: 0, from: 0, to: 0, tween: 0, tweenStart: 0 };

function vtNow(now = performance.now()) {
  if (model.playing) {
    let cap = clk.base;
    for (const f of model.inflight.values()) if (f.at > cap) cap = f.at;
    return Math.min(cap, clk.base + ((now - clk.wall) / 1000) * model.rate * model.speed);
  }
  if (clk.tween) {
    const k = Math.min(1, (now - clk.tweenStart) / clk.tween);
    if (k >= 1) { clk.tween = 0; return clk.to; }
    const e = 1 - (1 - k) ** 3;
    return clk.from + (clk.to - clk.from) * e;
  }
  return clk.to;
}

let lastVt = 0;

function clockTo(t, playing) {
  const now = performance.now();
  const cur = lastVt;
  if (playing) {
    clk.base = Math.max(t, Math.min(cur, t + 1));
    clk.wall = now;
    clk.tween = 0;
    clk.to = t;
  } else if (app.dataset.ready === "true" && cur !== t && Math.abs(cur - t) < 50 && !matchMedia("(prefers-reduced-motion: reduce)").matches) {
    clk.from = cur; clk.to = t; clk.tween = 280; clk.tweenStart = now;
  } else {
    clk.to = t; clk.tween = 0;
  }
  kick();
}

// ---- drawing ----

let drawnTopology = -1;
let frameRequested = false;
let dirty = false; // the model changed since the last paint
let dirtyFull = false; // ... by a snapshot: the log is rebuilt from the model
let logQueue = []; // events for the log since the last paint

// redraw asks for the view and panels to follow the model at the next animation
// frame. A fast run delivers several socket frames per display frame; painting each
// one made the browser lay the page out again for each (the log's scroll, the
// pseudocode's scroll into view; docs/benchmarks.md, "Heavy traffic at 4x").
function redraw(full) {
  dirty = true;
  if (full) dirtyFull = true;
  app.dataset.settled = "false"; // until the next frame has placed the messages
  kick();
}

function paint() {
  // Scrolls left by the last paint first, while the layout is still the one on screen.
  code.settle();
  narrator.settle();
  if (!dirty) return;
  dirty = false;
  if (model.topology !== drawnTopology) {
    view.build(model);
    drawnTopology = model.topology;
    if (selected >= model.nodes.length) selected = -1;
  }
  view.select(selected);
  view.update(model);
  view.syncMessages(model, model.index);
  code.show(model, selected);
  inspector.show(model, selected);
  if (dirtyFull) narrator.rebuild(model); // model.recent has every event queued too
  else if (logQueue.length) narrator.append(logQueue, model);
  logQueue = [];
  updateControls();
  if (dirtyFull && ws) app.dataset.ready = "true";
  dirtyFull = false;
}

function kick() {
  if (!frameRequested) {
    frameRequested = true;
    requestAnimationFrame(frame);
  }
}

function frame(now) {
  frameRequested = false;
  paint();
  const vt = vtNow(now);
  lastVt = vt;
  view.place(vt);
  const moving = (model.playing && !model.quiet) || clk.tween !== 0;
  const scrolling = code.visible || narrator.stick; // settle at the next frame
  app.dataset.settled = moving || scrolling ? "false" : "true";
  if (moving || scrolling) kick();
}

// The view is drawn in CSS pixels: a new size redraws it.
// (Observer callbacks come after layout and before paint: redrawing here never shows
// a frame at the old size.)
new ResizeObserver(() => {
  if (drawnTopology < 0) return;
  const b = $("view").getBoundingClientRect();
  if (Math.round(b.width) === view.W && Math.round(b.height) === view.H) return;
  drawnTopology = -1;
  redraw(false);
  paint(); // now: before this frame is painted at the new size
}).observe($("view"));

// ---- controls ----

const playBtn = $("btn-play");
const timeline = $("timeline");
const readout = $("readout");
const speedSel = $("speed");

function updateControls() {
  playBtn.setAttribute("aria-pressed", String(model.playing));
  playBtn.setAttribute("aria-label", model.playing ? "Pause" : "Play");
  timeline.max = String(model.horizon);
  if (!timelineDragging) timeline.value = String(model.step);
  readout.textContent = `step ${model.step} of ${model.horizon} · t = ${model.t}` +
    (model.interventions ? ` · ${model.interventions} intervention${model.interventions > 1 ? "s" : ""}` : "");
  if (String(model.speed) !== speedSel.value) speedSel.value = String(model.speed);
  app.dataset.step = String(model.step);
  if (model.stopped) setStatus("stopped", "Stopped: " + model.stopped);
  else if (model.playing && model.quiet) setStatus("quiet", "Waiting for you: click a process");
  else if (model.playing) setStatus("playing", `Playing ${model.speed}×`);
  else if (model.quiet) setStatus("quiet", "Nothing left to happen: click a process");
  else setStatus("paused", "Paused");
}

function setStatus(state, text) {
  const s = $("status");
  s.dataset.state = state;
  s.textContent = text;
}

let toastTimer = 0;
const toastEl = document.createElement("div");
toastEl.className = "toast";
toastEl.setAttribute("role", "alert");
toastEl.hidden = true;
$("svg-wrap").appendChild(toastEl);

function toast(text) {
  toastEl.textContent = text;
  toastEl.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { toastEl.hidden = true; }, 3500);
}

const togglePlay = () => send({ type: model.playing ? "pause" : "play" });
const step = () => send({ type: "step" });
const back = () => send({ type: "back" });
const restart = () => send({ type: "reset" });

let seekBusy = false;
let seekWanted = null;

// seek sends one seek at a time; while the server replays, only the latest wish waits.
function seek(s) {
  s = Math.max(0, Math.min(model.horizon, s));
  if (seekBusy) { seekWanted = s; return; }
  seekBusy = true;
  if (!send({ type: "seek", step: s })) seekBusy = false;
}

function setSpeed(x) {
  send({ type: "speed", speed: x });
}

const speeds = [0.25, 0.5, 1, 2, 4, 8, 16];
function speedBy(d) {
  const i = speeds.indexOf(model.speed);
  const j = Math.max(0, Math.min(speeds.length - 1, (i < 0 ? 2 : i) + d));
  setSpeed(speeds[j]);
}

function act(what, extra) {
  const r = send({ type: "act", do: what, ...extra });
  if (r) pending.set(r, "act");
}

let timelineDragging = false;
timeline.addEventListener("pointerdown", () => { timelineDragging = true; });
timeline.addEventListener("pointerup", () => { timelineDragging = false; });
timeline.addEventListener("input", () => seek(Number(timeline.value)));
playBtn.addEventListener("click", togglePlay);
$("btn-step").addEventListener("click", step);
$("btn-back").addEventListener("click", back);
$("btn-reset").addEventListener("click", restart);
speedSel.addEventListener("change", () => setSpeed(Number(speedSel.value)));

// ---- process and message menus ----

const menu = $("menu");
const msgMenu = $("msg-menu");
let menuMsg = 0;

function placeMenu(m, target) {
  const wrap = $("svg-wrap").getBoundingClientRect();
  const box = target.getBoundingClientRect();
  m.hidden = false;
  const w = m.offsetWidth, hgt = m.offsetHeight;
  let x = box.right - wrap.left + 8;
  if (x + w > wrap.width) x = box.left - wrap.left - w - 8;
  let y = box.top - wrap.top;
  y = Math.max(4, Math.min(y, wrap.height - hgt - 4));
  m.style.left = `${Math.max(4, x)}px`;
  m.style.top = `${y}px`;
}

function openMenu(i) {
  const n = model.nodes[i];
  if (!n) return;
  select(i);
  msgMenu.hidden = true;
  const head = $("menu-title");
  head.replaceChildren();
  const dot = document.createElement("span");
  dot.className = `dot p${i % 8}`;
  head.append(dot, document.createTextNode(`P${n.id}`));
  for (const b of menu.querySelectorAll("button")) {
    const a = b.dataset.act;
    b.disabled = (a === "request" && (!n.alive || n.cs)) || (a === "release" && (!n.alive || !n.cs)) ||
      (a === "elect" && !n.alive) || (a === "crash" && !n.alive) || (a === "recover" && n.alive);
  }
  fillTell(n);
  placeMenu(menu, view.nodeEls[i].g);
  menu.querySelector("button:not(:disabled)")?.focus({ preventScroll: true });
}

function closeMenus() {
  menu.hidden = true;
  msgMenu.hidden = true;
}

menu.addEventListener("click", (e) => {
  const b = e.target.closest("button[data-act]");
  if (!b || selected < 0) return;
  act(b.dataset.act, { node: model.nodes[selected].id });
  closeMenus();
});

// Tell: an application message (APP) from the menu's process to another one, so a
// student can make one request happen before another outside the algorithm.
const tellOpen = $("menu-tell-open");
const tellGroup = $("menu-tell");

function fillTell(n) {
  tellOpen.disabled = !n.alive;
  tellOpen.setAttribute("aria-expanded", "false");
  tellGroup.hidden = true;
  tellGroup.replaceChildren(...model.nodes.filter((o) => o.id !== n.id).map((o) => {
    const b = document.createElement("button");
    b.type = "button";
    b.setAttribute("role", "menuitem");
    b.dataset.to = String(o.id);
    b.textContent = `Tell P${o.id}`;
    return b;
  }));
}

menu.addEventListener("click", (e) => {
  if (e.target.closest("#menu-tell-open")) {
    const open = tellGroup.hidden;
    tellGroup.hidden = !open;
    tellOpen.setAttribute("aria-expanded", String(open));
    if (selected >= 0) placeMenu(menu, view.nodeEls[selected].g);
    if (open) tellGroup.querySelector("button")?.focus({ preventScroll: true });
    return;
  }
  const b = e.target.closest("button[data-to]");
  if (!b || selected < 0) return;
  act("tell", { node: model.nodes[selected].id, to: Number(b.dataset.to) });
  closeMenus();
});

msgMenu.addEventListener("click", (e) => {
  const b = e.target.closest("button[data-act]");
  if (!b) return;
  act(b.dataset.act, { msg: menuMsg });
  closeMenus();
});

$("view").addEventListener("click", (e) => {
  const node = e.target.closest(".node");
  if (node) { openMenu(Number(node.dataset.index)); e.stopPropagation(); return; }
  const msg = e.target.closest(".msg");
  if (msg) {
    const id = Number(msg.dataset.id);
    const f = model.inflight.get(id);
    if (!f) return;
    menuMsg = id;
    menu.hidden = true;
    $("msg-menu-title").textContent = `${f.msg.type} #${id}: P${f.msg.from} → P${f.msg.to}`;
    msgMenu.querySelector('[data-act="deliver"]').disabled = f.at >= 0;
    placeMenu(msgMenu, msg);
    e.stopPropagation();
    return;
  }
  closeMenus();
  select(-1);
});

document.addEventListener("click", (e) => {
  if (!menu.contains(e.target) && !msgMenu.contains(e.target) && !e.target.closest("#view")) closeMenus();
});

$("view").addEventListener("keydown", (e) => {
  const node = e.target.closest?.(".node");
  if (node && (e.key === "Enter" || e.key === " ")) {
    e.preventDefault();
    e.stopPropagation();
    openMenu(Number(node.dataset.index));
  }
});
$("view").addEventListener("focusin", (e) => {
  const node = e.target.closest?.(".node");
  if (node) select(Number(node.dataset.index));
});

function select(i) {
  selected = i;
  view.select(i);
  view.update(model);
  code.show(model, selected);
  inspector.show(model, selected);
}

// ---- keyboard ----

document.addEventListener("keydown", (e) => {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  const tag = document.activeElement?.tagName;
  const typing = tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA";
  if (e.key === "Escape") {
    closeMenus();
    select(-1);
    if (document.activeElement?.closest?.(".node")) document.activeElement.blur();
    return;
  }
  if (typing && document.activeElement !== timeline) return;
  if ($("help").open) return;
  const node = selected >= 0 ? model.nodes[selected] : null;
  const onNode = (what) => {
    if (!node) { toast("Select a process first: click it, or press its number"); return; }
    act(what, { node: node.id });
    closeMenus();
  };
  switch (e.key) {
    case " ": if (e.target.closest?.(".node")) return; e.preventDefault(); togglePlay(); break;
    case "ArrowRight": case ".": if (document.activeElement === timeline) return; e.preventDefault(); step(); break;
    case "ArrowLeft": case ",": if (document.activeElement === timeline) return; e.preventDefault(); back(); break;
    case "Home": e.preventDefault(); seek(0); break;
    case "End": e.preventDefault(); seek(model.horizon); break;
    case "+": case "=": speedBy(1); break;
    case "-": case "_": speedBy(-1); break;
    case "R": if (e.shiftKey) restart(); break;
    case "r": if (spec.family === "mutex") onNode("request"); break;
    case "l": if (spec.family === "mutex") onNode("release"); break;
    case "e": if (spec.family === "election") onNode("elect"); break;
    case "c": onNode("crash"); break;
    case "u": onNode("recover"); break;
    case "?": $("help").showModal(); break;
    default:
      if (/^[0-9]$/.test(e.key)) {
        const i = Number(e.key);
        if (i < model.nodes.length) { select(i); view.nodeEls[i]?.g.focus({ preventScroll: true }); }
      }
  }
});

$("help-open").addEventListener("click", () => $("help").showModal());

// ---- run setup ----

const form = $("setup-form");
const fe = form.elements;

function fillSetup() {
  const nw = model.network;
  fe.nodes.value = model.ids.length;
  fe.seed.value = model.seed;
  fe.dmin.value = nw.delay[0];
  fe.dmax.value = nw.delay[1];
  fe.loss.value = nw.loss;
  fe.cs.value = model.cs;
  fe.fifo.checked = nw.fifo;
  fe.hold.checked = nw.hold;
  $("setup-error").textContent = "";
}

form.addEventListener("submit", (e) => {
  e.preventDefault();
  const sc = structuredClone(model.scenario || { version: 1, algorithm: spec.slug });
  const nodes = Number(fe.nodes.value);
  if (nodes !== model.ids.length) delete sc.ids;
  sc.nodes = nodes;
  sc.seed = Number(fe.seed.value);
  sc.cs = Number(fe.cs.value);
  sc.network = {
    delay: [Number(fe.dmin.value), Number(fe.dmax.value)],
    fifo: fe.fifo.checked, loss: Number(fe.loss.value), hold: fe.hold.checked,
  };
  $("setup-error").textContent = "";
  const r = send({ type: "reset", scenario: sc });
  if (r) pending.set(r, "setup");
});

connect();
