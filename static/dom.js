// The page's DOM helpers, in one place: every module builds its HTML and SVG through
// these. HTML and SVG elements live in different namespaces, hence two helpers with
// two names: htmlEl composes (children in, element out), svgEl draws (attributes in,
// appended to its parent), which is how the drawing code reads.

export const SVG_NS = "http://www.w3.org/2000/svg";

// htmlEl makes an HTML element. attrs: "class" sets the class, "text" the text;
// any other key is an attribute (true: present and empty; false, null, undefined:
// absent). children: elements or strings (an empty string adds nothing).
export function htmlEl(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") {
      if (v) e.className = v;
    } else if (k === "text") {
      if (v !== undefined && v !== null) e.textContent = v;
    } else if (v !== undefined && v !== null && v !== false) {
      e.setAttribute(k, v === true ? "" : v);
    }
  }
  for (const c of children) if (c !== "" && c !== null && c !== undefined) e.append(c);
  return e;
}

// svgEl makes an SVG element with its attributes and, when parent is given, appends it.
export function svgEl(tag, attrs, parent) {
  const e = document.createElementNS(SVG_NS, tag);
  if (attrs) for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

// byId is document.getElementById.
export function byId(id) {
  return document.getElementById(id);
}

// typing: the keyboard is in a form field, where letters are text, not shortcuts.
export function typing() {
  const tag = document.activeElement?.tagName;
  return tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA";
}

// noModifier: a key pressed without Ctrl, Meta or Alt (the browser's own shortcuts).
export function noModifier(e) {
  return !(e.ctrlKey || e.metaKey || e.altKey);
}
