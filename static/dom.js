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

// perFrame returns a function that runs fn at the next animation frame, once however
// often it is called before then: a burst of events asks for one redraw.
export function perFrame(fn) {
  let queued = false;
  return () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      fn();
    });
  };
}

// byId is document.getElementById.
export function byId(id) {
  return document.getElementById(id);
}

// The input types that take no typed text: a shortcut key means the shortcut there.
const NOT_TEXT = new Set(["button", "checkbox", "color", "file", "hidden", "image", "radio", "range", "reset", "submit"]);

// typing: the keyboard is in a text field (a text input, a textarea, contenteditable),
// where every character is text, not a shortcut. A select, a checkbox, a slider or a
// button is not one: character shortcuts work there (see controlKey).
export function typing(el = document.activeElement) {
  if (!el) return false;
  if (el.tagName === "TEXTAREA" || el.isContentEditable) return true;
  return el.tagName === "INPUT" && !NOT_TEXT.has((el.getAttribute("type") || "text").toLowerCase());
}

// controlKey: the focused control does something of its own with this key (Space
// and Enter activate a button or toggle a checkbox; arrows, Home, End and the page
// keys move a slider, a select or a radio group), so the page's shortcut gives way.
export function controlKey(key, el = document.activeElement) {
  if (!el || el === document.body) return false;
  const activates = key === " " || key === "Enter";
  const moves = /^(Arrow(Up|Down|Left|Right)|Home|End|PageUp|PageDown)$/.test(key);
  if (!activates && !moves) return false;
  const tag = el.tagName;
  if (tag === "SELECT") return true;
  if (tag === "INPUT") {
    const type = (el.getAttribute("type") || "text").toLowerCase();
    if (type === "range" || type === "radio") return true;
    return activates;
  }
  if (tag === "BUTTON" || tag === "SUMMARY" || (tag === "A" && el.hasAttribute("href"))) return activates;
  // A process on the stage is a button whose Space still plays or pauses (keys.js).
  if (el.classList?.contains("node")) return false;
  const role = el.getAttribute("role");
  if (role === "menuitem" || role === "button" || role === "menuitemradio" || role === "menuitemcheckbox") return activates;
  return false;
}

// noModifier: a key pressed without Ctrl, Meta or Alt (the browser's own shortcuts).
export function noModifier(e) {
  return !(e.ctrlKey || e.metaKey || e.altKey);
}
