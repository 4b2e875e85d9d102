// The header's actions on a narrow screen: one "more" button opens them as a menu
// (app.css shows them in the header itself on a wide one). The menu closes on Esc, on
// a click elsewhere, and when one of its links or buttons is used.

import { byId } from "./dom.js";

export function wireTopMenu() {
  const menu = byId("more-menu"), btn = byId("more-btn");
  if (!menu || !btn) return;
  const set = (open) => {
    menu.dataset.open = String(open);
    btn.setAttribute("aria-expanded", String(open));
  };
  btn.addEventListener("click", (e) => {
    e.stopPropagation();
    set(menu.dataset.open !== "true");
  });
  document.addEventListener("click", (e) => {
    if (menu.dataset.open !== "true") return;
    const inside = menu.contains(e.target);
    // A summary opens a sub-menu (Scenarios, Export): the menu stays.
    if (!inside || (e.target.closest("a, button") && !e.target.closest("summary"))) set(false);
  });
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && menu.dataset.open === "true") set(false);
  });
}
