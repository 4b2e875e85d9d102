// The stage's decorations: what the algorithm declares of itself (sim.Stage: a role
// mark, tree edges, a pointer arrow; web/pages clientSpec) drawn from the processes'
// variables at every step, the token and leader marks, and a standing violation (the
// processes it is about, a deadlock's wait-for cycle). No per-algorithm code: every
// name comes from the spec.

import { svgEl } from "./dom.js";
import { r2, curve, clearance } from "./layout.js";

// MARK_MIN is the smallest size (px) of a token or leader mark, whatever the process's
// radius: big enough to read from the back of a hall.
export const MARK_MIN = 30;

// markSize is the width of a token or leader mark for processes of radius r.
export function markSize(r) {
  return Math.max(MARK_MIN, r * 1.1);
}

// starPath is a five-pointed star of width about w centred on (0, 0).
export function starPath(w) {
  const R = w / 2 / Math.cos(Math.PI / 10), r = R * 0.45;
  const pts = [];
  for (let k = 0; k < 10; k++) {
    const a = -Math.PI / 2 + (k * Math.PI) / 5, d = k % 2 ? r : R;
    pts.push(`${r2(d * Math.cos(a))} ${r2(d * Math.sin(a))}`);
  }
  return `M${pts.join(" L")} Z`;
}

// diamondPath is a diamond of width w centred on (0, 0), a little taller than wide.
export function diamondPath(w) {
  const x = w / 2, y = w * 0.6;
  return `M0 ${r2(-y)} L${r2(x)} 0 L0 ${r2(y)} L${r2(-x)} 0 Z`;
}

// badgeAt is where (relative to its process at p, of radius r) a badge of bw x h goes:
// just clear of the circle, on the side facing the centre when that is clear of the
// other processes' circles (others: [{x, y, r}] in stage coordinates), else the
// nearest direction that is, turning away from the outer side where the labels are.
export function badgeAt(p, r, bw, h, others, gap) {
  const inward = p.x || p.y ? Math.atan2(-p.y, -p.x) : Math.PI / 2;
  const clear = (cx, cy) => others.every((o) => {
    const nx = Math.max(cx - bw / 2, Math.min(o.x, cx + bw / 2)), ny = Math.max(cy - h / 2, Math.min(o.y, cy + h / 2));
    return Math.hypot(nx - o.x, ny - o.y) >= o.r + gap;
  });
  let first = null;
  for (const turn of [0, 0.5, -0.5, 1, -1, 1.5, -1.5]) {
    const a = inward + turn;
    const d = clearance(Math.cos(a), Math.sin(a), bw / 2, h / 2, r + gap);
    const spot = { x: Math.cos(a) * d, y: Math.sin(a) * d };
    first ||= spot;
    if (clear(p.x + spot.x, p.y + spot.y)) return spot;
  }
  return first;
}

// drawMarks draws a process's leader and token marks (shown by CSS when the process
// has the class leader or token) on the outline of its circle of radius r, and its
// role badge (Stage.Mark), all on the side facing the centre of the stage (p is where
// the process sits): the state labels are on the outer side.
export function drawMarks(g, r, p, roleLabel, k = 1, others = []) {
  const w = markSize(r);
  const inward = p.x || p.y ? Math.atan2(-p.y, -p.x) : Math.PI / 2;
  const at = (a, d) => `translate(${r2(Math.cos(a) * d)} ${r2(Math.sin(a) * d)})`;
  svgEl("path", { class: "mark leader", d: starPath(w), transform: at(inward - 0.75, r * 0.95) }, g);
  svgEl("path", { class: "mark token", d: diamondPath(w), transform: at(inward + 0.75, r * 0.95) }, g);
  if (!roleLabel) return;
  const h = 20 * k, bw = (roleLabel.length * 7.6 + 14) * k;
  const { x, y } = badgeAt(p, r, bw, h, others, 6 * k);
  const badge = svgEl("g", { class: "role", transform: `translate(${r2(x)} ${r2(y)})` }, g);
  svgEl("rect", { x: r2(-bw / 2), y: -h / 2, width: r2(bw), height: h, rx: h / 2 }, badge);
  svgEl("text", {}, badge).textContent = roleLabel;
}

// Decor draws what changes with the state: the tree's edges, the pointers, the role
// marks and a standing violation. Its layers sit under the processes.
export class Decor {
  constructor(view, spec) {
    this.view = view;
    this.spec = spec;
    this.g = svgEl("g", { id: "decor" });
    view.svg.insertBefore(this.g, view.trails);
    this.waitG = svgEl("g", { id: "wait-for" });
    view.svg.insertBefore(this.waitG, view.nodesG);
    this.key = "";
    this.waitKey = "";
  }

  // build starts again after the view redrew the processes.
  build() {
    this.g.replaceChildren();
    this.waitG.replaceChildren();
    this.key = "";
    this.waitKey = "";
    const defs = svgEl("defs", {}, this.g);
    for (const [id, cls] of [["pointer-head", "pointer-head"], ["wait-head", "wait-head"]]) {
      const m = svgEl("marker", { id, viewBox: "0 0 10 10", refX: "7", refY: "5", markerWidth: "4.5", markerHeight: "4.5", orient: "auto-start-reverse", markerUnits: "strokeWidth" }, defs);
      svgEl("path", { d: "M0 0 L10 5 L0 10 z", class: cls }, m);
    }
    this.edgesG = svgEl("g", { class: "tree" }, this.g);
    this.pointersG = svgEl("g", { class: "pointers" }, this.g);
  }

  // update draws the decorations of the model's state, and the violation (null: none).
  update(model, violation) {
    const { spec, view } = this;
    const idOf = (n, v) => (v && n.state && Number.isInteger(n.state[v]) ? n.state[v] : -1);
    const edges = [], pointers = [], marked = new Set();
    model.nodes.forEach((n, i) => {
      const up = model.index.get(idOf(n, spec.edges));
      if (up !== undefined && up !== i) edges.push([i, up]);
      const to = model.index.get(idOf(n, spec.pointer));
      if (to !== undefined && to !== i) pointers.push([i, to]);
      if (spec.mark && idOf(n, spec.mark) >= 0) marked.add(idOf(n, spec.mark));
    });
    model.nodes.forEach((n, i) => view.nodeEls[i]?.g.classList.toggle("role-marked", marked.has(n.id)));
    const key = JSON.stringify([edges, pointers]);
    if (key !== this.key) {
      this.key = key;
      this.edgesG.replaceChildren();
      this.pointersG.replaceChildren();
      for (const [a, b] of edges) this.line(this.edgesG, "tree-edge", a, b, 0, 0, model);
      for (const [a, b] of pointers) {
        const l = this.line(this.pointersG, "pointer", a, b, 3, 5, model);
        l.setAttribute("marker-end", "url(#pointer-head)");
      }
    }
    this.violation(model, violation);
  }

  // line draws a straight line from process a to process b, clear of their circles by
  // gapA and gapB, naming both ends by id.
  line(parent, cls, a, b, gapA, gapB, model) {
    const { pos, r } = this.view;
    const p = pos[a], q = pos[b];
    const len = Math.hypot(q.x - p.x, q.y - p.y) || 1;
    const ux = (q.x - p.x) / len, uy = (q.y - p.y) / len;
    return svgEl("line", {
      class: cls, "data-from": model.nodes[a].id, "data-to": model.nodes[b].id,
      x1: r2(p.x + ux * (r + gapA)), y1: r2(p.y + uy * (r + gapA)),
      x2: r2(q.x - ux * (r + gapB)), y2: r2(q.y - uy * (r + gapB)),
    }, parent);
  }

  // violation marks the processes a standing violation is about and draws a
  // deadlock's wait-for cycle: an arrow from each process to the one it waits for.
  violation(model, ev) {
    const { view } = this;
    const about = new Set(ev?.nodes || []);
    model.nodes.forEach((n, i) => view.nodeEls[i]?.g.classList.toggle("violating", about.has(n.id)));
    const property = ev ? ev.property : "";
    if (view.svg.dataset.violation !== property) view.svg.dataset.violation = property;
    const cycle = ev?.cycle || [];
    const key = cycle.join(",");
    if (key === this.waitKey) return;
    this.waitKey = key;
    this.waitG.replaceChildren();
    for (let k = 0; k + 1 < cycle.length; k++) {
      const a = model.index.get(cycle[k]), b = model.index.get(cycle[k + 1]);
      if (a === undefined || b === undefined) continue;
      const geo = curve(view.pos[a], view.pos[b], view.r, 8);
      const path = svgEl("path", { class: "wait-edge", d: geo.d, "marker-end": "url(#wait-head)", "data-from": cycle[k], "data-to": cycle[k + 1] }, this.waitG);
      svgEl("title", {}, path).textContent = `P${cycle[k]} waits for P${cycle[k + 1]}`;
    }
  }
}
