// The SVG view: processes around a circle (ring algorithms in ring order, with the
// ring's direction), and every message in flight on its way from sender to receiver,
// placed in proportion to its virtual delay.

import { leaders, holdsToken, standingViolation } from "./model.js";
import { svgEl, htmlEl } from "./dom.js";
import { r2, labelChars, ellipse, labelAt, stageScale, LINE, curve, progress, pointOn, messageLabels, messageClasses, pillSize, onCanvas as paintedOnCanvas } from "./layout.js";
import { describeInflight } from "./text.js";
import { Decor, drawMarks } from "./decor.js";
import { MessageLayer } from "./msglayer.js";
import { queueRanks, parkOffset } from "./netmodel.js";

const TRAILS_MAX = 24; // beyond this many messages in flight, their paths are clutter

export class View {
  constructor(svg, spec) {
    this.svg = svg;
    this.spec = spec;
    this.edges = svg.querySelector("#edges");
    this.trails = svg.querySelector("#trails");
    this.nodesG = svg.querySelector("#nodes");
    this.msgsG = svg.querySelector("#msgs");
    this.nodeEls = [];
    this.msgEls = new Map(); // id -> {g, trail, geo, f, held}
    this.trailsShown = true;
    this.vt = 0; // the virtual time the messages were last placed at
    this.layer = new MessageLayer(svg, (key) => this.pillLook(...key.split("\n"))); // the moving pills when the view is crowded
    this.initExport();
    this.initLayerPointer();
    this.msgClass = messageClasses(spec);
    this.short = messageLabels(spec);
    this.selected = -1;
    this.stateChars = labelChars(spec);
    this.initGroup();
    this.decor = new Decor(this, spec); // the algorithm's decorations, a violation
  }

  // ---- the algorithm's groups (Stage.Group: a variable holding a list of ids) ----

  // initGroup prepares, when the algorithm declares a group, the lines from a process
  // to its group's members (under the processes) and the note naming them; the group
  // shown is that of the process under the pointer or focus, else the selected one.
  initGroup() {
    this.hovered = -1;
    if (!this.spec.group) return;
    this.groupG = svgEl("g", { id: "group-lines" });
    this.svg.insertBefore(this.groupG, this.nodesG);
    this.groupNote = htmlEl("div", { class: "group-note", id: "group-note", "aria-live": "polite", hidden: true });
    this.svg.parentElement.appendChild(this.groupNote);
    const hover = (e, on) => {
      const g = e.target.closest?.(".node");
      if (!g || (!on && e.relatedTarget?.closest?.(".node") === g)) return; // moved within it
      const i = on ? Number(g.dataset.index) : -1;
      if (i === this.hovered) return;
      this.hovered = i;
      if (this.model) this.showGroup(this.model);
    };
    this.nodesG.addEventListener("pointerover", (e) => hover(e, true));
    this.nodesG.addEventListener("pointerout", (e) => hover(e, false));
    this.nodesG.addEventListener("focusin", (e) => hover(e, true));
    this.nodesG.addEventListener("focusout", (e) => hover(e, false));
  }

  // showGroup outlines the group of the process in focus (hovered, else selected):
  // the owner, each member, a line from the owner to each, and a note listing them.
  showGroup(model) {
    if (!this.groupG) return;
    const i = this.hovered >= 0 ? this.hovered : this.selected;
    const owner = model.nodes[i];
    const members = owner && Array.isArray(owner.state?.[this.spec.group]) ? owner.state[this.spec.group] : null;
    const inGroup = new Set(members || []);
    this.groupG.replaceChildren();
    model.nodes.forEach((n, k) => {
      const e = this.nodeEls[k];
      if (!e) return;
      e.g.classList.toggle("group-owner", members !== null && k === i);
      e.g.classList.toggle("in-group", inGroup.has(n.id));
      if (members && k !== i && inGroup.has(n.id)) {
        const a = this.pos[i], b = this.pos[k];
        svgEl("line", { class: "group-line", x1: r2(a.x), y1: r2(a.y), x2: r2(b.x), y2: r2(b.y) }, this.groupG);
      }
    });
    this.svg.dataset.group = members ? String(owner.id) : "";
    this.groupNote.hidden = !members;
    if (members) {
      const label = this.spec.groupLabel || this.spec.group;
      const about = this.spec.groupAbout ? owner.state?.[this.spec.groupAbout] : "";
      this.groupNote.textContent = `${label} of P${owner.id} (K=${members.length}): ${members.map((id) => `P${id}`).join(" ")}` +
        (typeof about === "string" && about ? `. Sets: ${about}` : "");
    }
  }

  // layout fits the processes to the view's box (layout.js); one view unit is one
  // CSS pixel.
  layout(n) {
    this.fitToWrap();
    const box = this.svg.getBoundingClientRect();
    this.k = this.scaleNow();
    document.documentElement.style.setProperty("--stage-k", String(this.k));
    const lay = ellipse(box.width, box.height, n, this.stateChars, this.k);
    this.layer.fit(box, this.svg.parentElement.getBoundingClientRect(), lay.W, lay.H);
    this.lay = lay;
    this.W = lay.W; this.H = lay.H;
    this.svg.setAttribute("viewBox", `${-lay.W / 2} ${-lay.H / 2} ${lay.W} ${lay.H}`);
    this.r = lay.r;
    this.pos = lay.pos;
  }

  // scaleNow is the stage's scale for the window as it is (layout.js, stageScale).
  scaleNow() {
    const fs = parseFloat(getComputedStyle(document.documentElement).getPropertyValue("--font-scale")) || 1;
    return stageScale(document.body.classList.contains("projector"), window.innerWidth, window.innerHeight, fs);
  }

  // fitToWrap sizes the SVG to its box in pixels (--view-w, --view-h on the box), and
  // says whether the SVG is no longer the size it was drawn at. A length, not 100%: an
  // SVG sized in percent is laid out whole, with every text in it, each time its box
  // is (docs/benchmarks.md, "Heavy traffic at 4x").
  fitToWrap() {
    const wrap = this.svg.parentElement;
    const w = `${wrap.clientWidth}px`, h = `${wrap.clientHeight}px`;
    if (wrap.style.getPropertyValue("--view-w") !== w) wrap.style.setProperty("--view-w", w);
    if (wrap.style.getPropertyValue("--view-h") !== h) wrap.style.setProperty("--view-h", h);
    const b = this.svg.getBoundingClientRect();
    return Math.round(b.width) !== this.W || Math.round(b.height) !== this.H || this.scaleNow() !== this.k;
  }

  // build redraws the processes (the set of processes changed, or the view's size).
  build(model) {
    const n = model.nodes.length;
    this.layout(n);
    this.edges.replaceChildren();
    this.nodesG.replaceChildren();
    this.clearMessages();
    this.nodeEls = [];
    this.hovered = -1;
    const st = this.svg.style;
    const k = this.k;
    st.setProperty("--fs", `${r2(Math.max(11, this.r * 0.62))}px`);
    st.setProperty("--ms", `${r2(Math.max(11, this.r * 0.5))}px`);
    st.setProperty("--ls", `${r2(this.lay.fontPx)}px`);
    st.setProperty("--ls2", `${r2((this.lay.small ? 10.5 : 12) * k)}px`);
    st.setProperty("--mf", `${r2((n > 12 ? 10 : 11.5) * k)}px`);
    st.setProperty("--rf", `${r2(12.5 * k)}px`);
    this.pill = r2((n > 12 ? 16 : 19) * k);
    this.decor.build();
    if (this.spec.ring) this.drawRing(n, model);
    else if (n <= 10 && !this.spec.edges) this.drawMesh(n); // a declared topology replaces the mesh
    for (let i = 0; i < n; i++) {
      const p = this.pos[i];
      const id = model.nodes[i].id;
      const g = svgEl("g", {
        class: `node p${i % 8}`, "data-id": id, "data-index": i, tabindex: "0", role: "button",
        transform: `translate(${r2(p.x)} ${r2(p.y)})`,
      }, this.nodesG);
      svgEl("circle", { class: "sel-ring", r: r2(this.r + 9) }, g);
      svgEl("circle", { class: "cs-ring", r: r2(this.r + 5) }, g);
      svgEl("circle", { class: "alarm-ring", r: r2(this.r + 12) }, g); // a violation is about it
      svgEl("circle", { class: "body", r: r2(this.r) }, g);
      const name = svgEl("text", { class: "name" }, g);
      name.textContent = `P${id}`;
      const d = this.r * 0.8;
      const mark = (cls, txt, dx, dy) => {
        const t = svgEl("text", { class: `mark ${cls}`, x: r2(dx), y: r2(dy) }, g);
        t.textContent = txt;
      };
      mark("crash", "✕", d, -d);
      const others = this.pos.filter((_, j) => j !== i).map((o) => ({ x: o.x, y: o.y, r: this.r }));
      drawMarks(g, this.r, p, this.spec.markLabel, k, others);
      const cs = svgEl("text", { class: "cs-tag", x: r2(-d - 2), y: r2(d) }, g);
      cs.textContent = "CS";
      const title = svgEl("title", {}, g);
      const { x: lx, y: ly, anchor, top } = labelAt(this.lay, p);
      const label = svgEl("g", { class: "label", transform: `translate(${r2(lx)} ${r2(ly)})` }, this.nodesG);
      // Both lines in the state's font size: the clock's smaller font must not pull
      // its line up into the state's.
      const fpx = this.lay.fontPx;
      const stEl = svgEl("text", { class: "state", "text-anchor": anchor, y: r2(top * fpx) }, label);
      const ck = svgEl("text", { class: "clock", "text-anchor": anchor, y: r2((top + LINE) * fpx) }, label);
      if (!this.lay.labels) label.setAttribute("display", "none");
      if (this.lay.small) ck.setAttribute("display", "none");
      this.nodeEls.push({ g, title, label, st: stEl, ck });
    }
  }

  // drawRing draws the ring's direction: an arrow from each process to the next in
  // ring order, the last to the first, each naming its ends by id.
  drawRing(n, model) {
    const defs = svgEl("defs", {}, this.edges);
    const marker = svgEl("marker", { id: "arrow", viewBox: "0 0 10 10", refX: "8", refY: "5", markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse" }, defs);
    svgEl("path", { d: "M0 0 L10 5 L0 10 z", class: "edge-arrow" }, marker);
    for (let i = 0; i < n; i++) {
      const a = this.pos[i], b = this.pos[(i + 1) % n];
      const da = Math.atan2(b.y - a.y, b.x - a.x);
      const off = this.r + 6;
      svgEl("line", {
        class: "edge ring", "marker-end": "url(#arrow)", "data-from": model.nodes[i].id, "data-to": model.nodes[(i + 1) % n].id,
        x1: r2(a.x + Math.cos(da) * off), y1: r2(a.y + Math.sin(da) * off),
        x2: r2(b.x - Math.cos(da) * (off + 4)), y2: r2(b.y - Math.sin(da) * (off + 4)),
      }, this.edges);
    }
  }

  drawMesh(n) {
    for (let i = 0; i < n; i++) {
      for (let j = i + 1; j < n; j++) {
        const a = this.pos[i], b = this.pos[j];
        svgEl("line", { class: "edge", x1: r2(a.x), y1: r2(a.y), x2: r2(b.x), y2: r2(b.y) }, this.edges);
      }
    }
  }

  // update redraws the processes' state.
  update(model) {
    this.model = model;
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
      let sub = clockVar && n.alive ? `clock ${n.state[clockVar]}` : "";
      if (n.alive && n.leader >= 0 && this.spec.family === "election") sub = `leader P${n.leader}`;
      const bits = [`P${n.id}`, st];
      if (n.cs) bits.push("in the critical section");
      if (lead.has(n.id)) bits.push("leader");
      if (holdsToken(n)) bits.push("holds the token");
      // Only what changed is written: a text written again is laid out again.
      const said = bits.filter(Boolean);
      const key = `${st}\n${sub}\n${said.join(", ")}`;
      if (key === e.key) return;
      e.key = key;
      e.st.textContent = st;
      e.ck.textContent = sub;
      e.g.setAttribute("aria-label", said.join(", "));
      e.title.textContent = said.join(" · ");
    });
    this.showGroup(model);
    this.decor.update(model, standingViolation(model));
  }

  clearMessages() {
    this.trails.replaceChildren();
    this.msgsG.replaceChildren();
    this.msgEls = new Map();
    this.layer.clear();
  }

  // syncMessages adds and removes message elements to match the model, in id order.
  // While a run plays with its pills on the canvas layer (layout.js, onCanvas), a new
  // message's hidden
  // elements wait (m.g null): at 4x a burst brings hundreds a frame, most of them gone
  // again before anyone could look, and making and removing them cost the page its
  // frames (docs/benchmarks.md, "Heavy traffic at 4x"). Paused, leaving the canvas, for
  // an export or a menu, every message has its element again (materialize).
  syncMessages(model, ids) {
    const trails = model.inflight.size <= TRAILS_MAX;
    const flip = trails !== this.trailsShown; // only then does every trail change
    this.trailsShown = trails;
    const onCanvas = paintedOnCanvas(model.inflight.size, model.playing, model.speed);
    // Held messages on the canvas fan out in their channel's queue, as network.js fans
    // out their SVG pills.
    this.ranks = onCanvas ? queueRanks(model.inflight) : null;
    for (const [id, m] of this.msgEls) {
      if (flip && m.trail) {
        if (trails) m.trail.removeAttribute("display");
        else m.trail.setAttribute("display", "none");
      }
      if (!model.inflight.has(id)) {
        // A message focused as it arrives (or is dropped) hands the focus to its
        // receiver: never to the page's body.
        if (m.g && m.g.contains(document.activeElement)) {
          const to = model.index.get(m.f.msg.to);
          this.nodeEls[to]?.g.focus({ preventScroll: true });
        }
        m.g?.remove();
        m.trail?.remove();
        this.msgEls.delete(id);
      }
    }
    const added = [];
    for (const [id, f] of model.inflight) {
      const m = this.msgEls.get(id);
      if (!m) {
        added.push(id);
        continue;
      }
      m.f = f; // a retimed message (hold switched on or off) moves with its new timing
      if (m.held !== f.at < 0) {
        m.held = f.at < 0;
        m.g?.classList.toggle("held", m.held);
      }
    }
    // In id order: the canvas layer draws them in this order, the newest over the rest.
    for (const id of added.sort((a, b) => a - b)) {
      const f = model.inflight.get(id);
      const from = ids.get(f.msg.from), to = ids.get(f.msg.to);
      if (from === undefined || to === undefined) continue;
      const geo = curve(this.pos[from], this.pos[to], this.r, this.pill);
      // An application message (a tell) is not the algorithm's: a neutral, hollow pill.
      const cls = f.msg.type === "APP" ? "app" : this.msgClass.get(f.msg.type) || "m6";
      const label = this.short.get(f.msg.type) || f.msg.type.slice(0, 3);
      this.msgEls.set(id, { id, g: null, trail: null, geo, f, held: f.at < 0, cls, label, bare: true, look: `${cls}\n${label}`, lookHeld: `${cls} held\n${label}` });
    }
    const leaving = this.layer.on && !onCanvas;
    if (onCanvas !== this.layer.on) {
      this.msgsG.classList.toggle("on-canvas", onCanvas);
      this.layer.show(onCanvas);
    }
    // A few messages show their trails: theirs are made at once.
    if (!(onCanvas && model.playing) || trails) this.materialize();
    if (leaving) for (const m of this.msgEls.values()) this.fillPill(m);
  }

  // materialize makes the elements of the messages that have none (syncMessages), and
  // keeps the elements in id order: after a seek, or once a crowded run pauses, older
  // messages appear next to newer ones already drawn, and the same step must always
  // give the same markup.
  materialize() {
    let maxKept = -Infinity, minAdded = Infinity;
    for (const [id, m] of this.msgEls) {
      if (m.g) maxKept = Math.max(maxKept, id);
      else minAdded = Math.min(minAdded, id);
    }
    if (minAdded === Infinity) return;
    const sorted = [...this.msgEls.keys()].sort((a, b) => a - b);
    for (const id of sorted) this.makeEls(this.msgEls.get(id));
    if (minAdded < maxKept) {
      for (const id of sorted) {
        const m = this.msgEls.get(id);
        this.trails.appendChild(m.trail);
        this.msgsG.appendChild(m.g);
      }
    }
  }

  // makeEls makes a message's trail and (hidden while on the canvas layer) element,
  // unless it has them. On the canvas layer the pill's shapes wait until the SVG shows
  // it (fewer messages, an export): a burst is hundreds of messages.
  makeEls(m) {
    if (m.g) return;
    const f = m.f;
    m.trail = svgEl("path", { class: `trail ${m.cls}`, d: m.geo.d }, this.trails);
    if (!this.trailsShown) m.trail.setAttribute("display", "none");
    // Each pill is a button named in words (Enter opens its menu: menus.js).
    m.g = svgEl("g", {
      class: `msg ${m.cls}${f.at < 0 ? " held" : ""}`, "data-id": m.id, "data-type": f.msg.type,
      tabindex: "0", role: "button", "aria-label": `${pillName(m.label, f.msg.type)} from P${f.msg.from} to P${f.msg.to}, message ${m.id}`,
    }, this.msgsG);
    m.held = f.at < 0;
    if (!this.layer.on) this.fillPill(m);
  }

  // fillPill draws the shapes of a message's SVG pill (once): the pill, its label and
  // its title.
  fillPill(m) {
    if (!m.bare) return;
    m.bare = false;
    const { w, h } = pillSize(m.label, this.pill);
    svgEl("rect", { x: r2(-w / 2), y: r2(-h / 2), width: r2(w), height: r2(h), rx: r2(h / 2) }, m.g);
    const t = svgEl("text", {}, m.g);
    t.textContent = m.label;
    svgEl("title", {}, m.g).textContent = describeInflight(m.f);
  }

  // pillLook is how a pill of colour class cls (with " held" when held) and label
  // looks, as app.css says: the computed styles of a pill made for the purpose, in the
  // hidden #msgs, and removed at once.
  pillLook(cls, label) {
    const g = svgEl("g", { class: `msg ${cls}` }, this.msgsG);
    const { w, h } = pillSize(label, this.pill);
    const rect = svgEl("rect", { width: r2(w), height: r2(h), rx: r2(h / 2) }, g);
    const text = svgEl("text", {}, g);
    text.textContent = label;
    const rs = getComputedStyle(rect), ts = getComputedStyle(text);
    const look = {
      w, h, rx: h / 2, label,
      fill: rs.fill, fillOpacity: rs.fillOpacity, stroke: rs.stroke, strokeOpacity: rs.strokeOpacity,
      strokeWidth: rs.strokeWidth, strokeDasharray: rs.strokeDasharray,
      font: `${ts.fontStyle} ${ts.fontWeight} ${ts.fontSize} ${ts.fontFamily}`, letterSpacing: ts.letterSpacing, color: ts.fill,
    };
    g.remove();
    return look;
  }

  // place moves every message to where it is at virtual time vt: its SVG pill, or,
  // when the view is crowded, its pill on the canvas layer.
  place(vt) {
    this.vt = vt;
    if (this.layer.on) {
      // One list of pills, kept from frame to frame: a crowded view places about a
      // thousand pills a frame, and new objects for each were garbage for each frame.
      const pills = this.pills || (this.pills = []);
      let n = 0;
      for (const [id, m] of this.msgEls) {
        const { x, y } = pointOn(m.geo, progress(m.f.sent, m.f.at, vt));
        const p = pills[n] || (pills[n] = { id: 0, x: 0, y: 0, dy: 0, look: "" });
        n++;
        p.id = id; p.x = x; p.y = y;
        p.look = m.f.at < 0 ? m.lookHeld : m.look;
        p.dy = parkOffset(this.ranks?.get(id) || 0, this.pill);
      }
      this.layer.draw(pills, n);
      return;
    }
    this.placeSVG(vt);
  }

  placeSVG(vt) {
    for (const m of this.msgEls.values()) {
      if (!m.g) continue;
      const { x, y } = pointOn(m.geo, progress(m.f.sent, m.f.at, vt));
      m.g.setAttribute("transform", `translate(${r2(x)} ${r2(y)})`);
    }
  }

  // initExport shows the SVG pills, where the messages are, while the view is
  // exported (svgexport.js reads the SVG; spacetime.js says when), then hands them
  // back to the canvas layer.
  initExport() {
    this.svg.addEventListener("pg:exporting", () => {
      if (!this.layer.on) return;
      this.materialize();
      for (const m of this.msgEls.values()) this.fillPill(m);
      this.placeSVG(this.vt);
      this.msgsG.classList.remove("on-canvas");
    });
    this.svg.addEventListener("pg:exported", () => {
      if (this.layer.on) this.msgsG.classList.add("on-canvas");
    });
  }

  // initLayerPointer gives the canvas layer's pills what an SVG pill has: a tooltip
  // (its title) and a pointer cursor.
  initLayerPointer() {
    const wrap = this.svg.parentElement;
    let shown = -1;
    this.svg.addEventListener("pointermove", (e) => {
      const id = this.layer.on ? this.layer.at(e.clientX, e.clientY, this.svg.getBoundingClientRect()) : -1;
      if (id === shown) return;
      shown = id;
      const m = this.msgEls.get(id);
      if (m) wrap.title = describeInflight(m.f);
      else wrap.removeAttribute("title");
      this.svg.classList.toggle("over-pill", !!m);
    });
  }

  // messageAt is the message drawn on the canvas layer at a point of the page (client
  // pixels), as its menu needs it (data-id, a client rect), or null.
  messageAt(clientX, clientY) {
    const rect = this.svg.getBoundingClientRect();
    const id = this.layer.at(clientX, clientY, rect);
    const m = this.msgEls.get(id);
    if (!m) return null;
    this.materialize();
    return { dataset: m.g.dataset, getBoundingClientRect: () => this.layer.box(id, rect) };
  }

  select(i) { this.selected = i; }
}

// pillName names a message's pill: its type, after the short label the pill shows
// (a name contains the visible text: WCAG 2.5.3).
function pillName(label, type) {
  return label === type ? type : `${label} ${type}`;
}
