// Captions of a curated scenario, paced for reading (VisuAlgo's e-lectures are the
// model). Each caption explains the trace event with its seq; it shows at the step
// whose batch holds that event, and only there: a step later the run has moved on and
// the caption goes to the history, from which the reader can go back to it. While the
// run plays at a reading pace (below FAST_SPEED), it holds at every step that has a
// caption until the reader continues (the Continue button, → or PageDown; a
// presenter's clicker sends PageDown). Before the
// first caption the guide shows the scenario's explanation, beside the stage and never
// over it. At a hold the guide may offer a predict-the-next-step question as a
// self-check (the lecture's questions, GET .../selfcheck), answered after the step.

import { byId, htmlEl, noModifier, typing } from "./dom.js";
import { FAST_SPEED } from "./clock.js";

// captionAt is the index of the caption to show once the run has reached seq (-1:
// none yet); captions are sorted by seq.
export function captionAt(captions, seq) {
  let k = -1;
  for (let i = 0; i < captions.length && captions[i].seq <= seq; i++) k = i;
  return k;
}

// captionsOfStep lists the indexes of the captions whose event is in step (steps maps
// a caption's seq to the step of its batch, when known).
export function captionsOfStep(captions, steps, step) {
  const out = [];
  captions.forEach((c, i) => { if (steps.get(c.seq) === step) out.push(i); });
  return out;
}

// render shows the captions of the step on screen, or the explanation before the
// first one, or a quiet line between them.
function render(st, f) {
  const k = captionAt(st.captions, f.seq);
  const here = k < 0 ? [] : captionsOfStep(st.captions, st.steps, f.step);
  // A caption whose step is not known yet (a snapshot, until the timeline says)
  // shows as before: the latest reached.
  if (k >= 0 && !here.length && !st.steps.has(st.captions[k].seq)) here.push(k);
  const key = `${here.join(",")}|${k}|${st.held}|${f.step}`;
  st.reached = k;
  if (key === st.key) return; // unchanged: do not announce it again
  st.key = key;
  const box = st.box;
  // The box is a live region: its words change only when what it says changes.
  const say = (text) => { if (box.textContent !== text) box.textContent = text; };
  if (here.length) {
    say(here.map((i) => st.captions[i].text).join(" "));
    box.dataset.seq = String(st.captions[here[here.length - 1]].seq);
    box.dataset.current = "true";
  } else {
    delete box.dataset.seq;
    box.dataset.current = "false";
    say(k < 0 ? st.about || "" : "No caption at this step: the earlier ones are under History.");
  }
  box.hidden = !box.textContent;
  st.guide.hidden = !st.captions.length;
  st.guide.dataset.held = String(st.held);
  st.guide.dataset.step = String(f.step);
  st.cont.hidden = !st.held;
  // The history: every caption reached, newest last; each opens its step.
  st.count.textContent = `History (${Math.max(0, k + 1)} of ${st.captions.length})`;
  st.list.replaceChildren(...st.captions.slice(0, k + 1).map((c, i) => {
    const s = st.steps.get(c.seq);
    const b = htmlEl("button", { type: "button", class: "caption-back", text: c.text });
    if (s === undefined) b.disabled = true;
    else b.addEventListener("click", () => { st.held = false; st.page.seek(s); });
    const li = htmlEl("li", {}, htmlEl("span", { class: "caption-step", text: s === undefined ? "" : `step ${s}` }), b);
    if (here.includes(i)) li.setAttribute("aria-current", "step");
    return li;
  }));
  st.history.hidden = k < 0;
}

// learn records the step of every caption event a frame's batches carry.
function learn(st, f) {
  for (const b of f.batches || []) {
    for (const ev of b.events) if (st.bySeq.has(ev.seq)) st.steps.set(ev.seq, b.step);
  }
}

// fetchSteps asks the server's timeline for the steps of the captions reached but not
// yet placed (after a snapshot: a reload, a seek).
async function fetchSteps(st, f) {
  const api = st.page.root.dataset.api;
  if (st.fetching || !api) return;
  const missing = st.captions.some((c) => c.seq <= f.seq && !st.steps.has(c.seq));
  if (!missing) return;
  st.fetching = true;
  try {
    const res = await fetch(`${api}/timeline`, { cache: "no-store" });
    if (!res.ok) return;
    const tl = await res.json();
    learn(st, tl);
    st.key = "";
    render(st, st.last);
  } catch {
    // The captions keep showing as reached; the next snapshot asks again.
  } finally {
    st.fetching = false;
  }
}

// hold stops a playing run at the first step of frame f that has a caption not held
// at yet: a seek there pauses the run and shows that step.
function hold(st, f) {
  // A reader's pace: a run played fast (as to skip ahead) does not hold.
  if (st.held || !f.playing || f.speed >= FAST_SPEED || !st.guided()) return;
  for (const b of f.batches || []) {
    const ks = b.events.filter((ev) => st.bySeq.has(ev.seq)).map((ev) => st.bySeq.get(ev.seq));
    const fresh = ks.filter((k) => k > st.heldUpTo);
    if (!fresh.length) continue;
    st.heldUpTo = Math.max(...ks);
    st.held = true;
    st.page.seek(b.step);
    offerCheck(st, b.step);
    return;
  }
}

// offerCheck asks the server for a predict-the-next-step question at the held step
// and offers the first as a self-check; its answer shows once the run reaches the step
// that shows it. An answer that came while the run played stays for this hold, so the
// reader sees it before the next question takes its place.
async function offerCheck(st, step) {
  const api = st.page.root.dataset.api;
  if (!api || !api.startsWith("/api/sessions/")) return;
  if (st.check && step >= st.check.q.reveal && !st.check.shownHeld) {
    st.check.shownHeld = true;
    st.guide.dataset.checked = String(step);
    return;
  }
  try {
    const res = await fetch(`${api}/selfcheck?step=${step}`, { cache: "no-store" });
    if (!res.ok) return;
    const qs = await res.json();
    // One question at a time: an open one keeps its place until its answer shows.
    const open = st.check && st.last.step < st.check.q.reveal;
    if (!qs.length || open || !st.held || st.last.step !== step) return;
    st.check = { q: qs[0], chosen: -1 };
    renderCheck(st, st.last);
  } catch {
    // No self-check this time: the caption and Continue are the guide.
  } finally {
    st.guide.dataset.checked = String(step); // asked (a page's tests wait on it)
  }
}

// renderCheck shows the self-check: its choices before the answer's step, the answer
// (and the reader's, in words) from it on; nothing before the step it was asked at.
function renderCheck(st, f) {
  const el = st.checkEl;
  const c = st.check;
  if (!c || f.step < c.q.step) { el.hidden = true; el.replaceChildren(); if (c && f.step < c.q.step) st.check = null; return; }
  const revealed = f.step >= c.q.reveal;
  const key = `${c.q.step}|${c.chosen}|${revealed}`;
  if (el.dataset.key === key) return;
  el.dataset.key = key;
  el.dataset.state = revealed ? "revealed" : "open";
  const head = htmlEl("p", { class: "selfcheck-q" }, htmlEl("strong", { text: "Predict: " }), c.q.text);
  const choices = htmlEl("div", { class: "selfcheck-choices", role: "group", "aria-label": "Your prediction" });
  c.q.choices.forEach((text, i) => {
    const b = htmlEl("button", { type: "button", class: "btn btn-quiet selfcheck-choice", "aria-pressed": String(c.chosen === i), text });
    if (revealed) b.disabled = true;
    else b.addEventListener("click", () => { c.chosen = i; renderCheck(st, st.last); });
    if (revealed && i === c.q.answer) b.classList.add("right");
    choices.append(b);
  });
  const parts = [head, choices];
  if (revealed) {
    const right = c.q.choices[c.q.answer];
    let said = "You did not answer.";
    if (c.chosen >= 0) said = c.chosen === c.q.answer ? `Your answer, ${c.q.choices[c.chosen]}, is right.` : `Your answer was ${c.q.choices[c.chosen]}.`;
    parts.push(htmlEl("p", { class: "selfcheck-answer", id: "selfcheck-answer", text: `Answer: ${right}. ${said}` }));
  } else {
    parts.push(htmlEl("p", { class: "selfcheck-note muted", text: "Choose, then Continue: the answer shows when the run gets there." }));
  }
  el.replaceChildren(...parts);
  el.hidden = false;
}

// resume lets the held run play on.
function resume(st) {
  if (!st.held) return;
  st.held = false;
  st.page.send({ type: "play" });
  st.key = "";
  render(st, st.last);
}

// createCaptions follows the run's frames with the page's caption box, when it has one.
export function createCaptions(page) {
  const box = byId("caption");
  if (!box) return null;
  const guide = htmlEl("div", { class: "guide", id: "guide", hidden: true });
  box.before(guide);
  const cont = htmlEl("button", { type: "button", class: "btn caption-continue", id: "caption-continue",
    title: "The run waits for you to read the caption: go on (→ or PageDown)", hidden: true }, "Continue ▸");
  const count = htmlEl("summary", { class: "caption-count" });
  const list = htmlEl("ol", { class: "caption-list", id: "caption-list" });
  const history = htmlEl("details", { class: "caption-history", id: "caption-history", hidden: true }, count, list);
  const row = htmlEl("div", { class: "guide-row" }, cont, history);
  const checkEl = htmlEl("div", { class: "selfcheck", id: "selfcheck", hidden: true });
  guide.append(box, checkEl, row);
  const st = {
    page, box, guide, cont, count, list, history, checkEl, check: null,
    captions: [], bySeq: new Map(), steps: new Map(), about: "",
    key: "", reached: -1, held: false, heldUpTo: -1, fetching: false, last: { seq: -1, step: 0 },
    // guided: a curated scenario's run, driven from this page.
    guided: () => !!page.model.name && !document.body.classList.contains("lecture-follower"),
  };
  cont.addEventListener("click", () => resume(st));
  // → and PageDown continue a held run (before the page's own keys take them).
  window.addEventListener("keydown", (e) => {
    if (!st.held || !noModifier(e) || typing()) return;
    if (e.key !== "ArrowRight" && e.key !== "PageDown") return;
    e.preventDefault(); e.stopPropagation();
    resume(st);
  }, true);
  return {
    frame(f) {
      if (f.type === "hello") {
        const given = f.scenario && Array.isArray(f.scenario.captions) ? f.scenario.captions : [];
        st.captions = given.slice().sort((a, b) => a.seq - b.seq);
        st.bySeq = new Map(st.captions.map((c, i) => [c.seq, i]));
        st.steps = new Map();
        st.about = f.scenario?.about || "";
        st.key = ""; st.held = false; st.heldUpTo = -1; st.check = null;
      }
      if (f.type === "events") {
        learn(st, f);
        hold(st, f);
      }
      if (typeof f.seq !== "number") return;
      // Back before a caption: the run holds there again when it next plays past it.
      st.heldUpTo = Math.min(st.heldUpTo, captionAt(st.captions, f.seq));
      // A run played by other means (Play, space) is no longer held.
      if (st.held && f.type === "state" && f.playing) st.held = false;
      st.last = f;
      render(st, f);
      renderCheck(st, f);
      if (f.type === "snapshot") fetchSteps(st, f);
    },
  };
}
