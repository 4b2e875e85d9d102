// The playground's keyboard shortcuts (the help dialog lists them): space plays or
// pauses (also with a process selected or focused: Enter opens its menu), arrows step,
// Home and End seek, and character keys (shortcuts.js: they can be turned off or
// remapped) step, change the speed, pick a process by its digit and act on it. The
// theme's T lives in theme.js. No shortcut fires while a text field has focus, and a
// focused control keeps the keys it uses itself (dom.js, controlKey).

import { byId as $, noModifier, typing, controlKey } from "./dom.js";
import { select, act, toast, togglePlay, step, back, seek, speedBy, restart } from "./stage.js";
import { closeMenus, menuOpen } from "./menus.js";
import { settings, keyAction, digitsOn } from "./shortcuts.js";
import { wireShortcutSettings } from "./shortcutsettings.js";

// wireKeys listens to the page's keys for the stage st and its menus mn.
export function wireKeys(st, mn) {
  document.addEventListener("keydown", (e) => {
    if (!noModifier(e)) return;
    if (e.key === "Escape") {
      // A menu closes first (its focus goes back to its process); then the selection.
      if (menuOpen(mn)) { closeMenus(mn); return; }
      select(st, -1);
      if (document.activeElement?.closest?.(".node, .msg")) $("stage").focus({ preventScroll: true });
      return;
    }
    if (typing() || $("help").open || controlKey(e.key)) return;
    const { model, spec } = st;
    const node = st.selected >= 0 ? model.nodes[st.selected] : null;
    const onNode = (what) => {
      if (!node) { toast(st, "Select a process first: click it, or press its number"); return; }
      act(st, what, { node: node.id });
      closeMenus(mn);
    };
    switch (e.key) {
      case " ": e.preventDefault(); togglePlay(st); return;
      case "ArrowRight": e.preventDefault(); step(st); return;
      case "ArrowLeft": e.preventDefault(); back(st); return;
      case "Home": e.preventDefault(); seek(st, 0); return;
      case "End": e.preventDefault(); seek(st, model.horizon); return;
    }
    const s = settings();
    if (/^[0-9]$/.test(e.key)) {
      if (!digitsOn(s)) return;
      e.preventDefault(); // not the type-ahead of a focused select
      const i = Number(e.key);
      if (i < model.nodes.length) { select(st, i); st.view.nodeEls[i]?.g.focus({ preventScroll: true }); }
      return;
    }
    const id = keyAction(s, e.key);
    const does = {
      step: () => step(st),
      back: () => back(st),
      faster: () => speedBy(st, 1),
      slower: () => speedBy(st, -1),
      restart: () => restart(st),
      request: () => spec.family === "mutex" && onNode("request"),
      release: () => spec.family === "mutex" && onNode("release"),
      elect: () => spec.family === "election" && onNode("elect"),
      crash: () => onNode("crash"),
      recover: () => onNode("recover"),
      help: () => $("help").showModal(),
    }[id];
    if (!does) return;
    e.preventDefault();
    does();
  });

  // The skip links focus their target without writing it into the address (which a
  // copied link would carry).
  for (const a of document.querySelectorAll('a.skip[href^="#"]')) {
    a.addEventListener("click", (e) => {
      const to = $(a.getAttribute("href").slice(1));
      if (!to) return;
      e.preventDefault();
      to.focus();
      to.scrollIntoView({ block: "nearest" });
    });
  }

  $("help-open").addEventListener("click", () => $("help").showModal());
  wireShortcutSettings($("help"), spec0(st));
}

// spec0: the page's places for the settings form (shortcuts.js, where).
function spec0(st) {
  const where = new Set(["all", "play", st.spec.family]);
  if (document.body.classList.contains("lecture-presenter")) where.add("presenter");
  if (document.body.classList.contains("lecture-follower")) where.add("follower");
  return where;
}
