// The playground's keyboard shortcuts (the help dialog lists them): space plays or
// pauses (also with a process selected or focused: Enter opens its menu), arrows step, Home and End seek, + and - change the speed, a digit selects a
// process and letters act on it. The theme's T lives in theme.js.

import { byId as $, noModifier, typing } from "./dom.js";
import { select, act, toast, togglePlay, step, back, seek, speedBy, restart } from "./stage.js";
import { closeMenus } from "./menus.js";

// wireKeys listens to the page's keys for the stage st and its menus mn.
export function wireKeys(st, mn) {
  const timeline = st.timeline;
  document.addEventListener("keydown", (e) => {
    if (!noModifier(e)) return;
    if (e.key === "Escape") {
      closeMenus(mn);
      select(st, -1);
      if (document.activeElement?.closest?.(".node")) document.activeElement.blur();
      return;
    }
    if (typing() && document.activeElement !== timeline) return;
    if ($("help").open) return;
    const { model, spec } = st;
    const node = st.selected >= 0 ? model.nodes[st.selected] : null;
    const onNode = (what) => {
      if (!node) { toast(st, "Select a process first: click it, or press its number"); return; }
      act(st, what, { node: node.id });
      closeMenus(mn);
    };
    switch (e.key) {
      case " ": e.preventDefault(); togglePlay(st); break;
      case "ArrowRight": case ".": if (document.activeElement === timeline) return; e.preventDefault(); step(st); break;
      case "ArrowLeft": case ",": if (document.activeElement === timeline) return; e.preventDefault(); back(st); break;
      case "Home": e.preventDefault(); seek(st, 0); break;
      case "End": e.preventDefault(); seek(st, model.horizon); break;
      case "+": case "=": speedBy(st, 1); break;
      case "-": case "_": speedBy(st, -1); break;
      case "R": if (e.shiftKey) restart(st); break;
      case "r": if (spec.family === "mutex") onNode("request"); break;
      case "l": if (spec.family === "mutex") onNode("release"); break;
      case "e": if (spec.family === "election") onNode("elect"); break;
      case "c": onNode("crash"); break;
      case "u": onNode("recover"); break;
      case "?": $("help").showModal(); break;
      default:
        if (/^[0-9]$/.test(e.key)) {
          const i = Number(e.key);
          if (i < model.nodes.length) { select(st, i); st.view.nodeEls[i]?.g.focus({ preventScroll: true }); }
        }
    }
  });

  $("help-open").addEventListener("click", () => $("help").showModal());
}
