// The rule strip of the projector layout (docs/lecture.md, "The projector view"): the
// rule each acting process just fired, in large type, beside the stage. It is fed from
// what the pseudocode panel lights (model.lit, the rules of the latest batch) and
// copies each rule's lines from that panel, so the two never disagree. It is never a
// scrolled list: processes that fired the same rules share one line ("P0–P7"), and
// when the rules still do not fit, their type gets smaller, down to a floor.

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

// mergeActing puts together the processes that fired the very same rules
// (actingRules' groups): [{nodes: [id…], rules: [label…]}], in the order the first of
// each group fired. Eight processes answering alike take one line, not eight.
export function mergeActing(acting) {
  const byRules = new Map();
  for (const { node, rules } of acting) {
    const key = rules.join("\n");
    if (!byRules.has(key)) byRules.set(key, { nodes: [], rules });
    byRules.get(key).nodes.push(node);
  }
  return [...byRules.values()];
}

// namesOf writes process ids as names, runs of consecutive ids as ranges: [0, 1, 2, 3,
// 5] -> "P0–P3, P5" (two in a row stay two names: "P0, P1").
export function namesOf(ids) {
  const sorted = [...ids].sort((a, b) => a - b);
  const out = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++;
    if (j - i >= 2) out.push(`P${sorted[i]}–P${sorted[j]}`);
    else for (let k = i; k <= j; k++) out.push(`P${sorted[k]}`);
    i = j + 1;
  }
  return out.join(", ");
}

// FLOOR is the smallest type the strip takes: read from the back of a hall.
export const FLOOR = 22;

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
  // show draws the rules of the latest step, or, with a process selected (its
  // position), the rules that process fired last: what the pseudocode panel lights
  // for it, kept in view on a projector, where that panel is below the fold.
  function show(model, selected = -1) {
    const chosen = selected >= 0 ? model.nodes[selected] : null;
    const acting = chosen ? [{ nodes: [chosen.id], rules: chosen.rules || [] }].filter((a) => a.rules.length) : mergeActing(actingRules(model.lit));
    const k = JSON.stringify([chosen?.id, acting]);
    if (k === key) return false;
    key = k;
    const cards = acting.map(({ nodes, rules }) => {
      const i = nodes.length === 1 ? model.index.get(nodes[0]) ?? 0 : -1;
      const list = htmlEl("div", { class: "rs-rules" });
      const card = htmlEl("div", { class: "rs-proc" }, htmlEl("span", { class: i >= 0 ? `rs-who p${i % 8}` : "rs-who rs-many", text: namesOf(nodes) }), list);
      card.dataset.nodes = nodes.join(" ");
      for (const label of rules) {
        const src = code.querySelector(`.rule[data-rule="${CSS.escape(label)}"]`);
        const lines = src ? [...src.querySelectorAll(".ln")].map((l) => htmlEl("code", { class: "rs-ln", text: l.textContent })) : [];
        const r = htmlEl("div", { class: "rs-rule" }, htmlEl("span", { class: "rs-label", text: label }), htmlEl("div", { class: "rs-lines" }, ...lines));
        r.dataset.rule = label;
        list.append(r);
      }
      return card;
    });
    if (!cards.length) cards.push(htmlEl("p", { class: "rs-none muted", text: chosen ? `P${chosen.id} has fired no rule yet.` : "No rule has fired yet: step the run." }));
    el.dataset.selected = chosen ? String(chosen.id) : "";
    el.replaceChildren(htmlEl("h2", { text: chosen ? `P${chosen.id}, selected: its latest rules` : "Just fired" }), ...cards);
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
    const size = fitSize(Math.max(FLOOR, Math.round(Math.max(22, window.innerHeight / 36) * base)), FLOOR, 1, (s) => {
      el.style.setProperty("--rs-size", `${s}px`);
      return el.scrollHeight <= el.clientHeight + 1;
    });
    el.style.setProperty("--rs-size", `${size}px`);
    el.dataset.size = String(size);
  }
  return { el, show, fit };
}
