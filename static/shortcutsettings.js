// The shortcut settings in the keyboard help dialog: character-key shortcuts on or
// off, digits on or off, and each action's keys (shortcuts.js keeps them).

import { htmlEl } from "./dom.js";
import { SHORTCUTS, settings, saveSettings, checkKeys, defaults, keyName, onSettings } from "./shortcuts.js";

// wireShortcutSettings adds the settings to dialog (the help) for the shortcuts of the
// page's places (a Set of shortcuts.js's where).
export function wireShortcutSettings(dialog, where) {
  if (!dialog) return;
  const list = SHORTCUTS.filter((s) => where.has(s.where));
  const on = htmlEl("input", { type: "checkbox", id: "sc-on" });
  const digits = htmlEl("input", { type: "checkbox", id: "sc-digits" });
  const note = htmlEl("p", { class: "sc-note", id: "sc-note", role: "status" });
  const inputs = new Map();
  const rows = list.map((s) => {
    const input = htmlEl("input", {
      type: "text", id: `sc-key-${s.id}`, class: "sc-key", size: "4", maxlength: "4",
      autocomplete: "off", spellcheck: "false", "aria-describedby": "sc-note",
    });
    inputs.set(s.id, input);
    input.addEventListener("change", () => {
      const cur = settings();
      const keys = input.value.trim();
      const problem = checkKeys(cur, s.id, keys);
      if (problem) {
        input.setAttribute("aria-invalid", "true");
        note.textContent = problem;
        return;
      }
      input.removeAttribute("aria-invalid");
      saveSettings({ ...cur, keys: { ...cur.keys, [s.id]: keys } });
      note.textContent = keys ? `${s.what}: ${[...keys].map(keyName).join(" or ")}` : `${s.what}: no key`;
    });
    return htmlEl("tr", {}, htmlEl("td", {}, htmlEl("label", { for: input.id, text: s.what })), htmlEl("td", {}, input));
  });
  on.addEventListener("change", () => saveSettings({ ...settings(), on: on.checked }));
  digits.addEventListener("change", () => saveSettings({ ...settings(), digits: digits.checked }));
  const reset = htmlEl("button", { type: "button", class: "btn btn-quiet", id: "sc-reset", text: "Default keys" });
  reset.addEventListener("click", () => { saveSettings(defaults()); note.textContent = "Every shortcut is back to its default key"; });

  const box = htmlEl("section", { class: "sc-settings", id: "sc-settings", "aria-labelledby": "sc-h" },
    htmlEl("h3", { id: "sc-h", text: "Character-key shortcuts" }),
    htmlEl("p", { class: "muted", text: "Letters, digits and signs act without a modifier key. Turn them off, or give each the character you want (one or more: each works; empty: none). Your browser remembers it." }),
    htmlEl("label", { class: "check" }, on, " Use character-key shortcuts"),
    htmlEl("label", { class: "check" }, digits, " Digits pick a process (or answer a question)"),
    htmlEl("table", { class: "sc-table" }, htmlEl("tbody", {}, ...rows)),
    htmlEl("div", { class: "form-actions" }, reset), note);
  const close = dialog.querySelector("form[method=dialog]");
  dialog.insertBefore(box, close);

  function show(s) {
    on.checked = s.on;
    digits.checked = s.digits;
    digits.disabled = !s.on;
    for (const [id, input] of inputs) {
      if (document.activeElement !== input) input.value = s.keys[id];
      input.disabled = !s.on;
      input.removeAttribute("aria-invalid");
    }
    // The help's list says the keys as they are now.
    for (const kbd of dialog.querySelectorAll("kbd[data-shortcut]")) {
      const keys = s.on ? s.keys[kbd.dataset.shortcut] : "";
      kbd.textContent = keys ? [...keys].map(keyName).join(" ") : "off";
    }
    for (const kbd of dialog.querySelectorAll("kbd[data-digits]")) kbd.textContent = s.on && s.digits ? kbd.dataset.digits : "off";
  }
  show(settings());
  onSettings(show);
}
