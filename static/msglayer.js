// The canvas layer of the processes view: when more messages are in flight than the
// view moves as SVG elements (layout.js, CROWD), their pills are painted here, one
// image over the SVG, instead of hundreds of elements the browser lays out and paints
// again every frame. Each message keeps its SVG element (hidden, #msgs.on-canvas; its
// shapes drawn when the SVG shows it again or is exported), so what the page says
// about each message (its id, type, held) is the same either way; each pill here is
// drawn from the computed style of an SVG pill, so app.css stays the one place that
// says how a pill looks.

import { htmlEl } from "./dom.js";
import { fitBox, pillAt } from "./layout.js";

export class MessageLayer {
  // lookOf(key) says how the pill of a key looks: {w, h, rx, label, and the computed
  // styles of its shape and text} (view.js, pillLook).
  constructor(svg, lookOf) {
    this.svg = svg;
    this.lookOf = lookOf;
    this.canvas = htmlEl("canvas", { class: "msg-layer", "aria-hidden": "true" });
    this.canvas.hidden = true;
    svg.after(this.canvas);
    this.ctx = this.canvas.getContext("2d");
    this.sprites = new Map(); // class|label|held -> a pill drawn once, copied each frame
    this.placed = []; // what the last frame drew: {id, x, y, w, h} in view units
    this.on = false;
    this.fitted = null;
    // A theme is other colours: draw the pills again from their new styles.
    const forget = () => this.forget();
    new MutationObserver(forget).observe(document.documentElement, { attributes: true });
    matchMedia("(prefers-color-scheme: dark)").addEventListener("change", forget);
  }

  // fit lays the canvas over the SVG's box (box: the SVG's client rect, wrap: its
  // parent's) for a viewBox of W x H units centred on 0.
  fit(box, wrap, W, H) {
    const dpr = window.devicePixelRatio || 1;
    const c = this.canvas;
    c.style.left = `${box.left - wrap.left - (this.svg.parentElement?.clientLeft || 0)}px`;
    c.style.top = `${box.top - wrap.top - (this.svg.parentElement?.clientTop || 0)}px`;
    c.style.width = `${box.width}px`;
    c.style.height = `${box.height}px`;
    c.width = Math.max(1, Math.round(box.width * dpr));
    c.height = Math.max(1, Math.round(box.height * dpr));
    const f = fitBox(box.width, box.height, W, H);
    this.fitted = { ...f, dpr, W, H };
    this.forget(); // drawn at the old scale
    this.placed = [];
  }

  // forget lets go of the sprites (their bitmaps at once: they are not small).
  forget() {
    for (const sp of this.sprites.values()) sp.img.close();
    this.sprites.clear();
  }

  // show turns the layer on or off; off, it is blank.
  show(on) {
    if (on === this.on) return;
    this.on = on;
    this.canvas.hidden = !on;
    if (!on) this.clear();
  }

  clear() {
    this.ctx.setTransform(1, 0, 0, 1, 0, 0);
    this.ctx.clearRect(0, 0, this.canvas.width, this.canvas.height);
    this.placed = [];
  }

  // draw paints each pill at its place. pills: {id, x, y, dy (its offset in a queue
  // of held messages), look (the key lookOf takes)} in drawing order, in view units.
  // The list and its objects are the caller's to reuse: draw keeps only numbers.
  // Each sprite lands on whole device pixels: a copy that needs no filtering is the
  // cheap one for the browser's software rasterizer (docs/benchmarks.md).
  draw(pills, n = pills.length) {
    const fit = this.fitted;
    if (!fit) return;
    const ctx = this.ctx;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, this.canvas.width, this.canvas.height);
    const k = fit.dpr * fit.s;
    const ox = fit.dpr * fit.ox, oy = fit.dpr * fit.oy;
    const placed = this.placed;
    placed.length = n;
    for (let i = 0; i < n; i++) {
      const p = pills[i];
      const sp = this.sprite(p.look, k);
      const y = p.y + p.dy;
      ctx.drawImage(sp.img, Math.round(ox + (p.x - sp.cx) * k), Math.round(oy + (y - sp.cy) * k));
      const q = placed[i] || (placed[i] = { id: 0, x: 0, y: 0, w: 0, h: 0 });
      q.id = p.id; q.x = p.x; q.y = y; q.w = sp.w; q.h = sp.h;
    }
  }

  // sprite is the pill of a look drawn once at scale k (device pixels per view unit),
  // as an ImageBitmap: copying a canvas would snapshot it at every copy.
  sprite(key, k) {
    let sp = this.sprites.get(key);
    if (sp) return sp;
    const look = this.lookOf(key);
    const { w, h } = look;
    const lw = parseFloat(look.strokeWidth) || 0;
    const pad = lw + 1;
    const img = new OffscreenCanvas(Math.ceil((w + 2 * pad) * k), Math.ceil((h + 2 * pad) * k));
    const c = img.getContext("2d");
    c.scale(k, k);
    c.beginPath();
    c.roundRect(pad, pad, w, h, look.rx);
    if (look.fill !== "none") {
      c.globalAlpha = opacity(look.fillOpacity);
      c.fillStyle = look.fill;
      c.fill();
    }
    if (lw && look.stroke !== "none") {
      c.globalAlpha = opacity(look.strokeOpacity);
      const dash = look.strokeDasharray === "none" ? [] : look.strokeDasharray.split(/[\s,]+/).map(parseFloat).filter((x) => x >= 0);
      c.setLineDash(dash);
      c.lineWidth = lw;
      c.strokeStyle = look.stroke;
      c.stroke();
    }
    c.globalAlpha = 1;
    c.font = look.font;
    if (look.letterSpacing !== "normal") c.letterSpacing = look.letterSpacing;
    c.textAlign = "center";
    c.textBaseline = "middle";
    c.fillStyle = look.color;
    c.fillText(look.label, pad + w / 2, pad + h / 2);
    sp = { img: img.transferToImageBitmap(), w, h, cx: w / 2 + pad, cy: h / 2 + pad };
    this.sprites.set(key, sp);
    return sp;
  }

  // at is the id of the pill drawn at the point (client pixels), or -1; rect is the
  // SVG's client rect.
  at(clientX, clientY, rect) {
    const fit = this.fitted;
    if (!this.on || !fit) return -1;
    const f = fitBox(rect.width, rect.height, fit.W, fit.H);
    return pillAt(this.placed, (clientX - rect.left - f.ox) / f.s, (clientY - rect.top - f.oy) / f.s);
  }

  // box is the client rect of the pill of id as last drawn (null: not drawn).
  box(id, rect) {
    const fit = this.fitted;
    const p = this.placed.find((q) => q.id === id);
    if (!p || !fit) return null;
    const f = fitBox(rect.width, rect.height, fit.W, fit.H);
    return new DOMRect(rect.left + f.ox + (p.x - p.w / 2) * f.s, rect.top + f.oy + (p.y - p.h / 2) * f.s, p.w * f.s, p.h * f.s);
  }
}

// opacity reads a computed opacity ("" or a number) as a number.
function opacity(v) {
  const x = parseFloat(v);
  return Number.isFinite(x) ? x : 1;
}
