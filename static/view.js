// The SVG view: processes around a circle (ring algorithms in ring order, with the
// ring's direction), and every message in flight on its way from sender to receiver,
// placed in proportion to its virtual delay.

import { leaders, holdsToken } from "./model.js";

const NS = "http://www.w3.org/2000/svg";
const TRAILS_MAX = 24; // beyond this many messages in flight, their paths are clutter

function el(name, attrs, parent) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

const r2 = (x) => Math.round(x * 100) / 100;

export class View {
  constructor(svg, spec) {
    this.svg = svg;
    this.spec = spec;
    this.edges = svg.querySelector("#edges");
    this.trails = svg.querySelector("#trails");
    this.nodesG = svg.querySelector("#nodes");
    this.msgsG = svg.querySelector("#msgs");
    this.nodeEls = [];
    this.msgEls = new Map(); // id -> {g, trail, geo}
    this.msgClass = new Map(spec.messages.map((m, i) => [m.name, "m" + (i % 7)]));
    this.short = shortNames(spec.messages.map((m) => m.name));
    this.selected = -1;
    // Labels need room for the longest state the algorithm names (in the doc of its
    // "state" variable), so the layout never depends on the run's current state.
    const doc = spec.vars.find((v) => v.name === "state")?.doc || "";
    this.stateChars = Math.max(8, ...(doc.match(/[A-Z][A-Z0-9_-]{2,}/g) || []).map((w) => w.length));
  }

  // layout places n processes on an ellipse that fills the view; one view unit is one
  // CSS pixel, so text keeps a legible size whatever the window.
  layout(n) {
    const box = this.svg.getBoundingClientRect();
    const W = Math.max(240, Math.round(box.width)), H = Math.max(200, Math.round(box.height));
    this.W = W; this.H = H;
    this.svg.setAttribute("viewBox", `${-W / 2} ${-H / 2} ${W} ${H}`);
    this.n = n;
    this.labels = n <= 24;
    // On a narrow view the labels go under their process, not beside it, in one line.
    this.below = W < 560;
    this.small = n > 12 || this.below;
    this.fontPx = this.small ? 11.5 : 13.5;
    const labelW = this.labels ? this.stateChars * this.fontPx * 0.66 + 8 : 0;
    const labelH = this.labels ? (this.small ? 18 : 36) : 0;
    // a first guess of the radius of a process, refined once the ellipse is known
    let r = 30;
    let rx = 0, ry = 0;
    for (let k = 0; k < 2; k++) {
      const side = this.below ? Math.max(r, labelW / 2 + 4) : r + labelW;
      rx = Math.max(40, W / 2 - side - 8);
      ry = Math.max(40, H / 2 - r - labelH - 10);
      const perim = Math.PI * (3 * (rx + ry) - Math.sqrt((3 * rx + ry) * (rx + 3 * ry)));
      r = Math.max(10, Math.min(34, (perim / n) * 0.3));
    }
    this.r = r;
    this.rx = rx; this.ry = ry;
    this.pos = [];
    for (let i = 0; i < n; i++) {
      const a = -Math.PI / 2 + (2 * Math.PI * i) / n;
      this.pos.push({ x: rx * Math.cos(a), y: ry * Math.sin(a), a });
    }
  }

  // build redraws the processes (the set of processes changed, or the view's size).
  build(model) {
    const n = model.nodes.length;
    this.layout(n);
    this.edges.replaceChildren();
    this.nodesG.replaceChildren();
    this.clearMessages();
    this.nodeEls = [];
    const st = this.svg.style;
    st.setProperty("--fs", `${r2(Math.max(11, this.r * 0.62))}px`);
    st.setProperty("--ms", `${r2(Math.max(11, this.r * 0.5))}px`);
    st.setProperty("--ls", `${this.fontPx}px`);
    st.setProperty("--ls2", this.small ? "10.5px" : "12px");
    st.setProperty("--mf", n > 12 ? "10px" : "11.5px");
    this.pill = n > 12 ? 16 : 19;
    if (this.spec.ring) this.drawRing(n);
    else if (n <= 10) this.drawMesh(n);
    for (let i = 0; i < n; i++) {
      const p = this.pos[i];
      const id = model.nodes[i].id;
      const g = el("g", {
        class: `node p${i % 8}`, "data-id": id, "data-index": i, tabindex: "0", role: "button",
        transform: `translate(${r2(p.x)} ${r2(p.y)})`,
      }, this.nodesG);
      el("circle", { class: "sel-ring", r: r2(this.r + 9) }, g);
      el("circle", { class: "cs-ring", r: r2(this.r + 5) }, g);
      el("circle", { class: "body", r: r2(this.r) }, g);
      const name = el("text", { class: "name" }, g);
      name.textContent = `P${id}`;
      const k = this.r * 0.8;
      const mark = (cls, txt, dx, dy) => {
        const t = el("text", { class: `mark ${cls}`, x: r2(dx), y: r2(dy) }, g);
        t.textContent = txt;
      };
      mark("crash", "✕", k, -k);
      mark("leader", "★", -k, -k);
      mark("token", "◆", k, k);
      const cs = el("text", { class: "cs-tag", x: r2(-k - 2), y: r2(k) }, g);
      cs.textContent = "CS";
      const title = el("title", {}, g);
      // the label (state, clock) sits outside the ellipse, away from its centre
      const gap = this.r + 8;
      const c = Math.cos(p.a), sn = Math.sin(p.a);
      const lines = this.small ? 1 : 2;
      let lx = p.x + c * gap, ly = p.y + sn * gap;
      let anchor = Math.abs(c) < 0.35 ? "middle" : c > 0 ? "start" : "end";
      let top = sn < -0.35 ? -(lines - 0.5) * 1.2 : sn > 0.35 ? 0.6 : -(lines - 1) * 0.6;
      if (this.below) {
        lx = p.x; ly = p.y + this.r + 6; anchor = "middle"; top = 0.6;
      }
      const label = el("g", { class: "label", transform: `translate(${r2(lx)} ${r2(ly)})` }, this.nodesG);
      const stEl = el("text", { class: "state", "text-anchor": anchor, y: `${r2(top)}em` }, label);
      const ck = el("text", { class: "clock", "text-anchor": anchor, y: `${r2(top + 1.25)}em` }, label);
      if (!this.labels) label.setAttribute("display", "none");
      if (this.small) ck.setAttribute("display", "none");
      this.nodeEls.push({ g, title, label, st: stEl, ck });
    }
  }

  drawRing(n) {
    const defs = el("defs", {}, this.edges);
    const marker = el("marker", { id: "arrow", viewBox: "0 0 10 10", refX: "8", refY: "5", markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse" }, defs);
    el("path", { d: "M0 0 L10 5 L0 10 z", class: "edge-arrow" }, marker);
    for (let i = 0; i < n; i++) {
      const a = this.pos[i], b = this.pos[(i + 1) % n];
      const da = Math.atan2(b.y - a.y, b.x - a.x);
      const off = this.r + 6;
      el("line", {
        class: "edge ring", "marker-end": "url(#arrow)",
        x1: r2(a.x + Math.cos(da) * off), y1: r2(a.y + Math.sin(da) * off),
        x2: r2(b.x - Math.cos(da) * (off + 4)), y2: r2(b.y - Math.sin(da) * (off + 4)),
      }, this.edges);
    }
  }

  drawMesh(n) {
    for (let i = 0; i < n; i++) {
      for (let j = i + 1; j < n; j++) {
        const a = this.pos[i], b = this.pos[j];
        el("line", { class: "edge", x1: r2(a.x), y1: r2(a.y), x2: r2(b.x), y2: r2(b.y) }, this.edges);
      }
    }
  }

  // update redraws the processes' state.
  update(model) {
    const lead = leaders(model);
    const stateVar = this.spec.vars.find((v) => v.name === "state") ? "state" : null;
    const clockVar = this.spec.vars.find((v) => v.name === "clock") ? "clock" : null;
    model.nodes.forEach((n, i) => {
      const e = this.nodeEls[i];
      if (!e) return;
      const cls = e.g.classList;
      cls.toggle("in-cs", n.cs);
      cls.toggle("crashed", !n.alive);
      cls.toggle("leader", lead.has(n.id) && n.alive);
      cls.toggle("token", holdsToken(n));
      cls.toggle("selected", i === this.selected);
      e.label.classList.toggle("crashed", !n.alive);
      const st = !n.alive ? "crashed" : stateVar ? String(n.state[stateVar] ?? "") : "";
      e.st.textContent = st;
      let sub = clockVar && n.alive ? `clock ${n.state[clockVar]}` : "";
      if (n.alive && n.leader >= 0 && this.spec.family === "election") sub = `leader P${n.leader}`;
      e.ck.textContent = sub;
      const bits = [`P${n.id}`, st];
      if (n.cs) bits.push("in the critical section");
      if (lead.has(n.id)) bits.push("leader");
      e.g.setAttribute("aria-label", bits.filter(Boolean).join(", "));
      e.title.textContent = bits.filter(Boolean).join(" · ");
    });
  }

  clearMessages() {
    this.trails.replaceChildren();
    this.msgsG.replaceChildren();
    this.msgEls = new Map();
  }

  // syncMessages adds and removes message elements to match the model, in id order.
  syncMessages(model, ids) {
    const trails = model.inflight.size <= TRAILS_MAX;
    for (const [id, m] of this.msgEls) {
      if (trails) m.trail.removeAttribute("display");
      else m.trail.setAttribute("display", "none");
      if (!model.inflight.has(id)) {
        m.g.remove();
        m.trail.remove();
        this.msgEls.delete(id);
      }
    }
    const sorted = [...model.inflight.keys()].sort((a, b) => a - b);
    let maxKept = -Infinity, minAdded = Infinity;
    for (const id of sorted) {
      if (this.msgEls.has(id)) {
        const m = this.msgEls.get(id);
        const f = model.inflight.get(id);
        m.f = f; // a retimed message (hold switched on or off) moves with its new timing
        m.g.classList.toggle("held", f.at < 0);
        maxKept = Math.max(maxKept, id);
        continue;
      }
      minAdded = Math.min(minAdded, id);
      const f = model.inflight.get(id);
      const from = ids.get(f.msg.from), to = ids.get(f.msg.to);
      if (from === undefined || to === undefined) continue;
      const geo = this.curve(from, to);
      // An application message (a tell) is not the algorithm's: a neutral, hollow pill.
      const cls = f.msg.type === "APP" ? "app" : this.msgClass.get(f.msg.type) || "m6";
      const trail = el("path", { class: `trail ${cls}`, d: geo.d }, this.trails);
      if (model.inflight.size > TRAILS_MAX) trail.setAttribute("display", "none");
      const g = el("g", { class: `msg ${cls}${f.at < 0 ? " held" : ""}`, "data-id": id, "data-type": f.msg.type, tabindex: "-1" }, this.msgsG);
      const label = this.short.get(f.msg.type) || f.msg.type.slice(0, 3);
      const h = this.pill, w = label.length * h * 0.52 + h * 0.8;
      el("rect", { x: r2(-w / 2), y: r2(-h / 2), width: r2(w), height: r2(h), rx: r2(h / 2) }, g);
      const t = el("text", {}, g);
      t.textContent = label;
      el("title", {}, g).textContent = describe(f);
      this.msgEls.set(id, { g, trail, geo, f });
    }
    // After a seek, older messages can appear next to newer ones already drawn: put the
    // elements back in id order, so the same step always gives the same markup.
    if (minAdded < maxKept) {
      for (const id of sorted) {
        const m = this.msgEls.get(id);
        if (!m) continue;
        this.trails.appendChild(m.trail);
        this.msgsG.appendChild(m.g);
      }
    }
  }

  // curve is a gentle arc from sender to receiver; the two directions of a channel
  // bend to opposite sides so they never overlap.
  curve(i, j) {
    const a = this.pos[i], b = this.pos[j];
    const dx = b.x - a.x, dy = b.y - a.y;
    const len = Math.hypot(dx, dy) || 1;
    const ux = dx / len, uy = dy / len;
    // start and end clear of the circles, so a message just sent or about to arrive
    // does not hide its process
    const off = Math.min(this.r + this.pill * 0.9, len * 0.3);
    const p0 = { x: a.x + ux * off, y: a.y + uy * off };
    const p2 = { x: b.x - ux * off, y: b.y - uy * off };
    const bend = len * 0.12;
    const c = { x: (a.x + b.x) / 2 - uy * bend, y: (a.y + b.y) / 2 + ux * bend };
    return { p0, c, p2, d: `M${r2(p0.x)} ${r2(p0.y)} Q${r2(c.x)} ${r2(c.y)} ${r2(p2.x)} ${r2(p2.y)}` };
  }

  // place moves every message to where it is at virtual time vt.
  place(vt) {
    for (const m of this.msgEls.values()) {
      const { sent, at } = m.f;
      let p;
      if (at < 0) p = 0.5;
      else if (at <= sent) p = 1;
      else p = Math.min(1, Math.max(0, (vt - sent) / (at - sent)));
      const { p0, c, p2 } = m.geo;
      const q = 1 - p;
      const x = q * q * p0.x + 2 * q * p * c.x + p * p * p2.x;
      const y = q * q * p0.y + 2 * q * p * c.y + p * p * p2.y;
      m.g.setAttribute("transform", `translate(${r2(x)} ${r2(y)})`);
    }
  }

  select(i) { this.selected = i; }
}

export function describe(f) {
  const m = f.msg;
  const extra = Object.entries(m).filter(([k]) => !["id", "type", "from", "to"].includes(k));
  const payload = extra.map(([k, v]) => `${k}=${Array.isArray(v) ? `[${v.join(", ")}]` : v}`).join(", ");
  const when = f.at < 0 ? "held: you choose when it arrives" : `sent at t=${f.sent}, arrives at t=${f.at}`;
  return `${m.type} #${m.id}: P${m.from} → P${m.to}${payload ? `, ${payload}` : ""} (${when})`;
}

export function payloadText(msg) {
  const extra = Object.entries(msg).filter(([k]) => !["id", "type", "from", "to"].includes(k));
  if (!extra.length) return "";
  return "(" + extra.map(([k, v]) => `${k}=${Array.isArray(v) ? `[${v.join(",")}]` : v}`).join(", ") + ")";
}

// shortNames gives every message type a label of at most 5 letters, unique within the
// algorithm: REPLY and TOKEN stay whole, REQUEST becomes REQ, COORDINATOR COORD.
function shortNames(names) {
  const out = new Map();
  for (const n of names) {
    if (n.length <= 5) { out.set(n, n); continue; }
    let k = 3;
    const clash = (s) => names.some((o) => o !== n && (o.length <= 5 ? o : o.slice(0, k)) === s);
    while (k < 5 && clash(n.slice(0, k))) k++;
    out.set(n, n.slice(0, k));
  }
  return out;
}
