// The character-key shortcuts (a letter, a digit, a punctuation mark or a symbol),
// which a student can turn off or remap (WCAG 2.1.4; docs/accessibility.md). The
// settings live in the browser (localStorage "shortcuts") and hold on every page.
// Keys that are not characters (Space, arrows, Home, End, Page Up/Down, Enter,
// Escape) are not settings: they never fire while a text field has focus.

// SHORTCUTS are the remappable actions: keys, the characters that fire it by default
// (each one does); where, the pages that have it ("play": a run's page, "mutex" and
// "election" its family, "presenter" and "follower" a lecture's).
export const SHORTCUTS = [
  { id: "step", keys: ".", what: "step one event", where: "play" },
  { id: "back", keys: ",", what: "step back", where: "play" },
  { id: "faster", keys: "+=", what: "faster", where: "play" },
  { id: "slower", keys: "-_", what: "slower", where: "play" },
  { id: "restart", keys: "R", what: "restart the run", where: "play" },
  { id: "request", keys: "r", what: "the selected process requests the CS", where: "mutex" },
  { id: "release", keys: "l", what: "the selected process leaves the CS", where: "mutex" },
  { id: "elect", keys: "e", what: "the selected process starts an election", where: "election" },
  { id: "crash", keys: "c", what: "crash the selected process", where: "play" },
  { id: "recover", keys: "u", what: "recover the selected process", where: "play" },
  { id: "help", keys: "?", what: "these shortcuts", where: "play" },
  { id: "theme", keys: "tT", what: "light or dark theme", where: "all" },
  { id: "questions", keys: "q", what: "list the questions", where: "presenter" },
  { id: "reveal", keys: "v", what: "reveal the answer", where: "presenter" },
  { id: "bigcode", keys: "j", what: "show the join code large", where: "presenter" },
  { id: "fork", keys: "f", what: "fork the run into a tab of your own", where: "follower" },
];

const STORE = "shortcuts";

// defaults: every shortcut on, with its own keys; digits pick a process (or answer).
export function defaults() {
  return { on: true, digits: true, keys: Object.fromEntries(SHORTCUTS.map((s) => [s.id, s.keys])) };
}

// parseSettings reads stored settings (a JSON string, or null), keeping the defaults
// for whatever is missing or not valid.
export function parseSettings(raw) {
  const s = defaults();
  let v;
  try { v = JSON.parse(raw || "null"); } catch { v = null; }
  if (!v || typeof v !== "object") return s;
  if (typeof v.on === "boolean") s.on = v.on;
  if (typeof v.digits === "boolean") s.digits = v.digits;
  if (v.keys && typeof v.keys === "object") {
    for (const id of Object.keys(s.keys)) {
      const k = v.keys[id];
      if (typeof k === "string" && !checkKeys(s, id, k)) s.keys[id] = k;
    }
  }
  return s;
}

// checkKeys says what is wrong with giving action id the keys (each character is
// one), "" when nothing: no spaces, no digits (they pick processes), no character
// another action has.
export function checkKeys(s, id, keys) {
  for (const ch of keys) {
    if (/\s/.test(ch)) return "No spaces: type the characters themselves";
    if (/[0-9]/.test(ch)) return "Digits pick a process: choose another character";
    const other = Object.entries(s.keys).find(([o, ks]) => o !== id && ks.includes(ch));
    if (other) return `"${ch}" is already the key of ${SHORTCUTS.find((x) => x.id === other[0]).what}`;
  }
  return "";
}

// keyAction is the action the character key fires, or null (shortcuts off, or none).
export function keyAction(s, key) {
  if (!s.on || [...key].length !== 1) return null;
  for (const [id, ks] of Object.entries(s.keys)) if (ks.includes(key)) return id;
  return null;
}

// digitsOn says whether a digit key picks a process (or answers a question).
export function digitsOn(s) {
  return s.on && s.digits;
}

// The page's settings, read once and kept current when another tab changes them.
let cached = null;
function storage() {
  try { return globalThis.localStorage || null; } catch { return null; }
}

export function settings() {
  if (!cached) cached = parseSettings(storage()?.getItem(STORE));
  return cached;
}

export function saveSettings(s) {
  cached = s;
  try { storage()?.setItem(STORE, JSON.stringify(s)); } catch { /* private mode: this page only */ }
  for (const f of listeners) f(s);
}

const listeners = [];
// onSettings calls f with the settings whenever they change.
export function onSettings(f) {
  listeners.push(f);
}

if (typeof window !== "undefined") {
  window.addEventListener("storage", (e) => {
    if (e.key !== STORE) return;
    cached = null;
    for (const f of listeners) f(settings());
  });
}

// keyName is how the help shows a key.
export function keyName(ch) {
  return ch === " " ? "Space" : ch.toUpperCase() === ch && ch.toLowerCase() !== ch ? `Shift+${ch}` : ch.toUpperCase();
}
