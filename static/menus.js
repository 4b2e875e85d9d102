// The process and message menus over the view: a click (or Enter) on a process opens
// its menu of interventions (request, release, elect, crash, recover, tell another
// process), a click on a message its menu (deliver, drop).

import { byId as $, htmlEl } from "./dom.js";
import { select, act } from "./stage.js";

// allowed says whether an intervention of the process menu applies to process n.
export function allowed(a, n) {
  switch (a) {
    case "request": return n.alive && !n.cs;
    case "release": return n.alive && n.cs;
    case "elect": case "crash": return n.alive;
    case "recover": return !n.alive;
    default: return true;
  }
}

// createMenus wires the menus of the stage st (stage.js); it returns their state,
// which every function here takes.
export function createMenus(st) {
  const mn = {
    st,
    menu: $("menu"),
    msgMenu: $("msg-menu"),
    tellOpen: $("menu-tell-open"), // Tell: an application message (APP) from the menu's
    tellGroup: $("menu-tell"), // process to another one, so a student can order two requests
    msg: 0, // the message whose menu is open
  };
  wire(mn);
  return mn;
}

function placeMenu(m, target) {
  const wrap = $("svg-wrap").getBoundingClientRect();
  const box = target.getBoundingClientRect();
  m.hidden = false;
  const w = m.offsetWidth, hgt = m.offsetHeight;
  let x = box.right - wrap.left + 8;
  if (x + w > wrap.width) x = box.left - wrap.left - w - 8;
  let y = box.top - wrap.top;
  y = Math.max(4, Math.min(y, wrap.height - hgt - 4));
  m.style.left = `${Math.max(4, x)}px`;
  m.style.top = `${y}px`;
}

// openMenu opens the menu of process position i.
export function openMenu(mn, i) {
  const { st, menu } = mn;
  const n = st.model.nodes[i];
  if (!n) return;
  select(st, i);
  mn.msgMenu.hidden = true;
  $("menu-title").replaceChildren(htmlEl("span", { class: `dot p${i % 8}` }), `P${n.id}`);
  for (const b of menu.querySelectorAll("button")) b.disabled = !allowed(b.dataset.act, n);
  fillTell(mn, n);
  placeMenu(menu, st.view.nodeEls[i].g);
  menu.querySelector("button:not(:disabled)")?.focus({ preventScroll: true });
}

// closeMenus closes the menus. When the focus was in one, it goes back to what the
// menu was opened on: the process, or the message (its receiver once it is gone).
export function closeMenus(mn) {
  const active = document.activeElement;
  const inMenu = mn.menu.contains(active) ? "menu" : mn.msgMenu.contains(active) ? "msg" : "";
  mn.menu.hidden = true;
  mn.msgMenu.hidden = true;
  if (inMenu === "menu") focusNode(mn, mn.st.selected);
  if (inMenu === "msg") {
    mn.st.view.msgEls.get(mn.msg)?.g?.focus({ preventScroll: true });
    if (mn.msgMenu.contains(document.activeElement) || document.activeElement === document.body) {
      focusNode(mn, mn.st.model.index.get(mn.msgTo));
    }
  }
}

// menuOpen says whether a menu is open.
export function menuOpen(mn) {
  return !mn.menu.hidden || !mn.msgMenu.hidden;
}

function focusNode(mn, i) {
  const g = i >= 0 ? mn.st.view.nodeEls[i]?.g : null;
  if (g) g.focus({ preventScroll: true });
  else document.getElementById("stage")?.focus({ preventScroll: true });
}

// menuKeys moves the focus in an open menu as the ARIA menu pattern says: arrows to
// the next or previous item (round), Home and End to the first and last, Escape
// closes it and gives the focus back (closeMenus).
function menuKeys(mn, m, e) {
  const items = [...m.querySelectorAll('[role="menuitem"]')].filter((b) => !b.disabled && !b.closest("[hidden]"));
  const k = items.indexOf(document.activeElement);
  let to = null;
  switch (e.key) {
    case "ArrowDown": to = items[(k + 1) % items.length]; break;
    case "ArrowUp": to = items[(k - 1 + items.length) % items.length]; break;
    case "Home": to = items[0]; break;
    case "End": to = items[items.length - 1]; break;
    case "Escape": closeMenus(mn); break;
    default: return;
  }
  e.preventDefault();
  e.stopPropagation();
  to?.focus({ preventScroll: true });
}

// followPlay closes the menus when the run starts playing: a menu opened on a paused
// run would otherwise sit over the moving view, offering actions on a state that is
// gone. A menu opened while the run plays stays until used or dismissed.
export function followPlay(mn, playing) {
  if (playing && !mn.playing) closeMenus(mn);
  mn.playing = playing;
}

function fillTell(mn, n) {
  const { tellOpen, tellGroup } = mn;
  tellOpen.disabled = !n.alive;
  tellOpen.setAttribute("aria-expanded", "false");
  tellGroup.hidden = true;
  tellGroup.replaceChildren(...mn.st.model.nodes.filter((o) => o.id !== n.id).map((o) =>
    htmlEl("button", { type: "button", role: "menuitem", "data-to": String(o.id) }, `Tell P${o.id}`)));
}

// openMessageMenu opens the menu of the message drawn as g; false when it is gone.
function openMessageMenu(mn, g) {
  const id = Number(g.dataset.id);
  const f = mn.st.model.inflight.get(id);
  if (!f) return false;
  mn.msg = id;
  mn.msgTo = f.msg.to;
  mn.menu.hidden = true;
  $("msg-menu-title").textContent = `${f.msg.type} #${id}: P${f.msg.from} → P${f.msg.to}`;
  mn.msgMenu.querySelector('[data-act="deliver"]').disabled = f.at >= 0;
  placeMenu(mn.msgMenu, g);
  mn.msgMenu.querySelector("button:not(:disabled)")?.focus({ preventScroll: true });
  return true;
}

function wire(mn) {
  const { st, menu, msgMenu, tellOpen, tellGroup } = mn;
  menu.addEventListener("click", (e) => {
    const b = e.target.closest("button[data-act]");
    if (!b || st.selected < 0) return;
    act(st, b.dataset.act, { node: st.model.nodes[st.selected].id });
    closeMenus(mn);
  });

  menu.addEventListener("click", (e) => {
    if (e.target.closest("#menu-tell-open")) {
      const open = tellGroup.hidden;
      tellGroup.hidden = !open;
      tellOpen.setAttribute("aria-expanded", String(open));
      if (st.selected >= 0) placeMenu(menu, st.view.nodeEls[st.selected].g);
      if (open) tellGroup.querySelector("button")?.focus({ preventScroll: true });
      return;
    }
    const b = e.target.closest("button[data-to]");
    if (!b || st.selected < 0) return;
    act(st, "tell", { node: st.model.nodes[st.selected].id, to: Number(b.dataset.to) });
    closeMenus(mn);
  });

  msgMenu.addEventListener("click", (e) => {
    const b = e.target.closest("button[data-act]");
    if (!b) return;
    act(st, b.dataset.act, { msg: mn.msg });
    closeMenus(mn);
  });

  const view = $("view");
  view.addEventListener("click", (e) => {
    const node = e.target.closest(".node");
    if (node) { openMenu(mn, Number(node.dataset.index)); e.stopPropagation(); return; }
    const msg = e.target.closest(".msg") || st.view.messageAt(e.clientX, e.clientY);
    if (msg) {
      if (openMessageMenu(mn, msg)) e.stopPropagation();
      return;
    }
    closeMenus(mn);
    select(st, -1);
  });

  document.addEventListener("click", (e) => {
    if (!menu.contains(e.target) && !msgMenu.contains(e.target) && !e.target.closest("#view")) closeMenus(mn);
  });

  menu.addEventListener("keydown", (e) => menuKeys(mn, menu, e));
  msgMenu.addEventListener("keydown", (e) => menuKeys(mn, msgMenu, e));

  // Enter opens a focused process's or message's menu. Space does not on a process:
  // after a digit picks a process (and focuses it), Space still plays and pauses
  // (keys.js).
  view.addEventListener("keydown", (e) => {
    if (e.key !== "Enter") return;
    const node = e.target.closest?.(".node");
    const msg = e.target.closest?.(".msg");
    if (node) {
      e.preventDefault();
      e.stopPropagation();
      openMenu(mn, Number(node.dataset.index));
    } else if (msg) {
      e.preventDefault();
      e.stopPropagation();
      openMessageMenu(mn, msg);
    }
  });
  view.addEventListener("focusin", (e) => {
    const node = e.target.closest?.(".node");
    if (node) select(st, Number(node.dataset.index));
  });
}
