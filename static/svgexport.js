// SVG files for slides: a drawing in the page, flattened so that it looks the same
// without the page's CSS (every style resolved to presentation attributes, in the light
// theme), and saved as a download.

import { SVG_NS, htmlEl, svgEl } from "./dom.js";

const STYLE_PROPS = ["fill", "fill-opacity", "stroke", "stroke-width", "stroke-opacity", "stroke-dasharray",
  "stroke-linecap", "stroke-linejoin", "opacity", "font-family", "font-size", "font-weight", "font-style",
  "text-anchor", "dominant-baseline", "letter-spacing"];
const COLOR_PROPS = new Set(["fill", "stroke"]);
const KEEP_AS_IS = new Set(["defs", "marker", "title", "desc", "symbol", "clipPath", "linearGradient", "radialGradient", "style"]);

// colour turns a computed colour into #rrggbb and an opacity.
export function colour(v) {
  const num = (s) => s.trim().endsWith("%") ? parseFloat(s) / 100 : parseFloat(s);
  let m = v.match(/^rgba?\(([^)]+)\)$/);
  let rgb, a = 1;
  if (m) {
    const parts = m[1].split(/[\s,/]+/).filter(Boolean);
    rgb = parts.slice(0, 3).map(Number);
    if (parts[3] !== undefined) a = num(parts[3]);
  } else if ((m = v.match(/^color\(srgb ([^)]+)\)$/))) {
    const parts = m[1].split(/[\s/]+/).filter(Boolean);
    rgb = parts.slice(0, 3).map((s) => Math.round(num(s) * 255));
    if (parts[3] !== undefined) a = num(parts[3]);
  } else {
    return { hex: v, a: 1 };
  }
  const hex = "#" + rgb.map((c) => Math.max(0, Math.min(255, Math.round(c))).toString(16).padStart(2, "0")).join("");
  return { hex, a };
}

// flatten copies an SVG in the page with every style it has resolved to presentation
// attributes, in the light theme, so that the file looks the same without the page's
// CSS: what slides and other tools need.
export function flatten(src, width, height) {
  const root = document.documentElement;
  const had = root.getAttribute("data-theme");
  root.setAttribute("data-theme", "light");
  try {
    const out = src.cloneNode(true);
    const a = [src, ...src.querySelectorAll("*")];
    const b = [out, ...out.querySelectorAll("*")];
    const gone = [];
    for (let i = 0; i < a.length; i++) {
      const s = a[i], o = b[i];
      o.removeAttribute("style");
      o.removeAttribute("tabindex");
      if (KEEP_AS_IS.has(s.localName) || s.closest("defs")) continue;
      const cs = getComputedStyle(s);
      if (cs.display === "none" || cs.visibility === "hidden") { gone.push(o); continue; }
      const vals = {};
      for (const p of STYLE_PROPS) vals[p] = cs.getPropertyValue(p).trim();
      for (const p of COLOR_PROPS) {
        if (!vals[p] || vals[p] === "none") continue;
        const c = colour(vals[p]);
        vals[p] = c.hex;
        if (c.a < 1) {
          const o0 = parseFloat(vals[`${p}-opacity`]);
          vals[`${p}-opacity`] = String(Math.round((Number.isFinite(o0) ? o0 : 1) * c.a * 1000) / 1000);
        }
      }
      for (const p of STYLE_PROPS) {
        const v = vals[p];
        if (!v || v === "normal" || (p === "stroke-dasharray" && v === "none")) continue;
        o.setAttribute(p, v);
      }
    }
    for (const o of gone) o.remove();
    out.setAttribute("xmlns", SVG_NS);
    out.setAttribute("width", String(Math.round(width)));
    out.setAttribute("height", String(Math.round(height)));
    const vb = (out.getAttribute("viewBox") || `0 0 ${width} ${height}`).split(/[\s,]+/).map(Number);
    const bg = svgEl("rect", { x: String(vb[0]), y: String(vb[1]), width: String(vb[2]), height: String(vb[3]), fill: "#ffffff" });
    out.insertBefore(bg, out.firstChild);
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + new XMLSerializer().serializeToString(out) + "\n";
  } finally {
    if (had === null) root.removeAttribute("data-theme");
    else root.setAttribute("data-theme", had);
  }
}

// download saves an SVG document as a file.
export function download(name, text) {
  const blob = new Blob([text], { type: "image/svg+xml" });
  const url = URL.createObjectURL(blob);
  htmlEl("a", { href: url, download: name }).click();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}
