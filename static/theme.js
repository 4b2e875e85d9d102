// Theme: follows the system unless the user picked one, which is remembered. Loaded on
// every page as its own entry module; the playground's other shortcuts live in keys.js.

import { byId, noModifier, typing } from "./dom.js";
import { settings, keyAction } from "./shortcuts.js";

const root = document.documentElement;
const saved = localStorage.getItem("theme");
if (saved === "light" || saved === "dark") root.dataset.theme = saved;

function current() {
  if (root.dataset.theme) return root.dataset.theme;
  return matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

export function toggleTheme() {
  const next = current() === "dark" ? "light" : "dark";
  root.dataset.theme = next;
  localStorage.setItem("theme", next);
}

function wire() {
  byId("theme-toggle")?.addEventListener("click", toggleTheme);
  document.addEventListener("keydown", (e) => {
    if (!noModifier(e) || typing() || keyAction(settings(), e.key) !== "theme") return;
    toggleTheme();
  });
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", wire);
else wire();
