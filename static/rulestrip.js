// The rule strip of the projector layout (docs/lecture.md, "The projector view"): the
// rule each acting process just fired, in large type, beside the stage. It is fed from
// what the pseudocode panel lights (model.lit, the rules of the latest batch) and
// copies each rule's lines from that panel, so the two never disagree. It is never a
// scrolled list: when the rules do not fit, their type gets smaller, down to a floor.

import { htmlEl } from "./dom.js";

// actingRules groups lit rules ([{node, rule}], in firing order) by process, in the
// order the processes first fired: [{node, rules: [label…]}], each label once.
export function actingRules(lit) {
  const byNode = new Map();
  for (const { node, rule } of lit) {
    if (!byNode.has(node)) byNode.set(node, []);
    const rules = byNode.get(node);
    if (!rules.includes(rule)) rules.push(rule);
  }
  return [...byNode].map(([node, rules]) => ({ node, rules }));
}

// fitSize is the largest type size, from max down to min by step, for which
// fits(size) holds (min when none does); sizes are tried largest first.
export function fitSize(max, min, step, fits) {
  for (let s = max; s > min; s -= step) if (fits(s)) return s;
  return min;
}

// createRuleStrip makes the strip and returns {el, show(model), fit()}. code is the
// pseudocode panel's scroller (its .rule[data-rule] elements hold each rule's lines).
export function createRuleStrip(code) {
  const el = htmlEl("section", { class: "panel rulestrip", id: "rulestrip", "aria-label": "The rules just fired" });
  let key = null;
  function show(model) {
    const acting = actingRules(model.lit);
    const k = JSON.stringify(acting);
    if (k === key) return false;
    key = k;
    const cards = acting.map(({ node, rules }) => {
      const i = model.index.get(node) ?? 0;
      const list = htmlEl("div", { class: "rs-rules" });
      const card = htmlEl("div", { class: "rs-proc" }, htmlEl("span", { class: `rs-who p${i % 8}`, text: `P${node}` }), list);
      card.dataset.node = node;
      for (const label of rules) {
        const src = code.querySelector(`.rule[data-rule="${CSS.escape(label)}"]`);
        const lines = src ? [...src.querySelectorAll(".ln")].map((l) => htmlEl("code", { class: "rs-ln", text: l.textContent })) : [];
        const r = htmlEl("div", { class: "rs-rule" }, htmlEl("span", { class: "rs-label", text: label }), htmlEl("div", { class: "rs-lines" }, ...lines));
        r.dataset.rule = label;
        list.append(r);
      }
      return card;
    });
    if (!cards.length) cards.push(htmlEl("p", { class: "rs-none muted", text: "No rule has fired yet: step the run." }));
    el.replaceChildren(htmlEl("h2", { text: "Just fired" }), ...cards);
    return true;
  }
  // fit gives the strip the height left above limit (a y in the viewport, e.g. the top
  // of a question over the column) and the largest type that fits in it.
  // No limit (Infinity: a narrow page, which scrolls) keeps the largest type.
  function fit(limit) {
    const top = el.getBoundingClientRect().top;
    el.style.maxHeight = Number.isFinite(limit) ? `${Math.max(120, Math.floor(limit - top - 8))}px` : "";
    const base = Number.parseFloat(getComputedStyle(document.documentElement).getPropertyValue("--font-scale")) || 1;
    // 22 px on a laptop, larger on a tall screen (30 px at 1080 px), times the scale
    const size = fitSize(Math.round(Math.max(22, window.innerHeight / 36) * base), 12, 1, (s) => {
      el.style.setProperty("--rs-size", `${s}px`);
      return el.scrollHeight <= el.clientHeight + 1;
    });
    el.style.setProperty("--rs-size", `${size}px`);
    el.dataset.size = String(size);
  }
  return { el, show, fit };
}
