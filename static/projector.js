// The projector layout of lecture mode (docs/lecture.md, "The projector view"), for the
// presenter and for followers: the stage takes the left of the screen at full height;
// the side column starts with the rule strip (rulestrip.js), then the controls and the
// narration; captions sit in the side column and a question floats over its foot, so
// neither takes height from the stage. A font-scale control (kept in localStorage)
// sets --font-scale on the page. Tallies of an open question stay off the projector:
// the presenter's "Peek" opens the same presenter page as a desk window (#desk), where
// they show.

import { byId, htmlEl, perFrame } from "./dom.js";
import { createRuleStrip } from "./rulestrip.js";

const SCALE_KEY = "fontScale";
export const SCALES = [0.8, 0.9, 1, 1.15, 1.3, 1.5, 1.75];

// nextScale is the scale d steps (+1 or -1) from s in SCALES, kept within them.
export function nextScale(s, d) {
  let i = SCALES.findIndex((x) => x >= s - 1e-9);
  if (i < 0) i = SCALES.length - 1;
  return SCALES[Math.max(0, Math.min(SCALES.length - 1, i + d))];
}

function storedScale() {
  const s = Number(localStorage.getItem(SCALE_KEY));
  return SCALES.includes(s) ? s : 1;
}

// createProjector arranges the page of a lecture (mode: "presenter" or "follower") and
// returns what follows the run's frames.
export function createProjector(page, mode) {
  const body = document.body;
  const desk = mode === "presenter" && location.hash === "#desk";
  body.classList.add("projector");
  body.classList.toggle("lecture-desk", desk);

  // The side column: the rule strip first, then the controls and the narration.
  const side = page.root.querySelector(".col-right");
  const strip = createRuleStrip(byId("code-scroll"));
  side.prepend(strip.el);
  const guide = byId("guide") || byId("caption");
  if (guide) side.prepend(guide);
  strip.el.after(...[".controls", ".log-panel"].map((s) => page.root.querySelector(s)).filter(Boolean));

  // Refit once per animation frame at most: the rule strip takes the height above the
  // question floating over the column.
  const refit = perFrame(() => {
    const q = byId("lecture-q");
    if (!matchMedia("(min-width: 901px)").matches) { strip.fit(Infinity); return; }
    let limit = q && !q.hidden ? q.getBoundingClientRect().top : window.innerHeight;
    // The presenter's localhost warning floats over the foot of the column too, above
    // the question: the strip keeps clear of both.
    const warn = byId("lecture-join-warn");
    if (warn && !warn.hidden) {
      warn.style.setProperty("--warn-bottom", `${Math.round(window.innerHeight - limit + 8)}px`);
      limit = warn.getBoundingClientRect().top;
    }
    strip.fit(limit);
  });

  // The font scale, in the lecture bar.
  let scale = storedScale();
  const readout = htmlEl("output", { class: "fs-readout", id: "font-scale-value" });
  const apply = () => {
    document.documentElement.style.setProperty("--font-scale", String(scale));
    readout.textContent = `${Math.round(scale * 100)}%`;
    refit();
    document.dispatchEvent(new Event("pg:stagescale")); // the stage's texts follow it
  };
  const by = (d) => () => {
    scale = nextScale(scale, d);
    localStorage.setItem(SCALE_KEY, String(scale));
    apply();
  };
  const smaller = htmlEl("button", { type: "button", class: "btn btn-quiet fs-btn", id: "font-smaller", title: "Smaller type", "aria-label": "A− smaller type", text: "A−" });
  const larger = htmlEl("button", { type: "button", class: "btn btn-quiet fs-btn", id: "font-larger", title: "Larger type", "aria-label": "A+ larger type", text: "A+" });
  smaller.addEventListener("click", by(-1));
  larger.addEventListener("click", by(1));
  const bar = byId("lecture-bar");
  const group = htmlEl("span", { class: "fs-group", role: "group", "aria-label": "Type size" }, smaller, readout, larger);
  if (mode === "presenter" && !desk) {
    const peek = htmlEl("button", { type: "button", class: "btn btn-quiet", id: "lecture-peek",
      title: "Open the live tally in a window of its own, for your screen: the projector shows it only once revealed", text: "Peek" });
    peek.addEventListener("click", () => window.open(`${location.pathname}${location.search}#desk`, "lecture-desk", "popup,width=620,height=760"));
    bar?.append(peek);
  }
  bar?.append(group);
  if (desk) bar?.prepend(htmlEl("strong", { class: "lecture-desk-tag", text: "Your screen: live tally" }));

  new ResizeObserver(refit).observe(document.documentElement);
  // The question comes and goes, and grows with its tally: refit when it does.
  const q = byId("lecture-q");
  if (q) new ResizeObserver(refit).observe(q);
  const warn = byId("lecture-join-warn");
  if (warn) new ResizeObserver(refit).observe(warn);
  apply();

  // The selected process (stage.js says which): the strip shows its rules.
  let selected = -1;
  document.addEventListener("pg:select", (e) => {
    selected = e.detail;
    if (strip.show(page.model, selected)) refit();
  });
  return {
    frame(f, model) {
      if (f.type === "hello") selected = -1;
      if (strip.show(model, selected)) refit();
    },
  };
}
