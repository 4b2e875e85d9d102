// Share and export: "Copy link" asks the server for the link of this run at the step
// shown (docs/links.md) and puts it on the clipboard; where the clipboard cannot be
// used (a page not served over https, a refused permission) the link shows in a field,
// selected, to copy by hand. The Export menu's links are plain downloads.

import { byId, htmlEl } from "./dom.js";

// The announcement: role=status so screen readers read it without moving focus.
function shareBox(st) {
  if (st.box) return st.box;
  const field = htmlEl("input", { id: "share-url", type: "text", readonly: true, "aria-label": "Link to this run" });
  field.addEventListener("focus", () => field.select());
  const close = htmlEl("button", { type: "button", class: "share-close", "aria-label": "Close" }, "×");
  close.addEventListener("click", () => hide(st));
  const box = htmlEl("div", { class: "share-toast", id: "share-toast", role: "status", "aria-live": "polite", hidden: true },
    htmlEl("span", { class: "share-msg" }), field, close);
  box.addEventListener("keydown", (e) => { if (e.key === "Escape") hide(st); });
  document.body.append(box);
  st.box = box;
  return box;
}

function hide(st) {
  clearTimeout(st.hideTimer);
  if (st.box) st.box.hidden = true;
}

// show announces text with value in the field; manual: the copy is up to the user,
// so the field is selected and stays until closed.
function show(st, text, value, manual) {
  const b = shareBox(st);
  b.querySelector(".share-msg").textContent = text;
  const field = b.querySelector("#share-url");
  field.value = value;
  field.hidden = value === "";
  b.dataset.state = manual ? "manual" : "copied";
  b.hidden = false;
  clearTimeout(st.hideTimer);
  if (manual && value) {
    field.focus();
    field.select();
  } else {
    st.hideTimer = setTimeout(() => hide(st), 8000);
  }
}

async function fetchLink(session) {
  const r = await fetch(`/api/sessions/${encodeURIComponent(session)}/link`, { cache: "no-store" });
  let body = {};
  try { body = await r.json(); } catch { /* an error page */ }
  if (!r.ok) throw new Error(body.error || `the server answered ${r.status}`);
  return body;
}

async function copy(st, text, what) {
  let copied = false;
  if (navigator.clipboard && window.isSecureContext) {
    try {
      await navigator.clipboard.writeText(text);
      copied = true;
    } catch { /* denied: fall back to the field */ }
  }
  if (copied) show(st, `${what} copied to the clipboard.`, text, false);
  else show(st, `Copy this ${what.toLowerCase()} (Ctrl+C or ⌘C):`, text, true);
}

async function copyLink(st) {
  try {
    const l = await fetchLink(st.session);
    await copy(st, location.origin + l.path, "Link");
    st.box.dataset.length = String(l.length);
    st.box.dataset.step = String(l.step);
  } catch (err) {
    show(st, `No link for this run: ${err.message}`, "", false);
  }
}

async function copyEmbed(st) {
  try {
    const l = await fetchLink(st.session);
    const src = location.origin + l.embed;
    await copy(st, `<iframe src="${src}" width="800" height="560" title="Distributed playground" allowfullscreen></iframe>`, "Embed code");
  } catch (err) {
    show(st, `No embed code for this run: ${err.message}`, "", false);
  }
  const menu = byId("export-menu");
  if (menu) menu.open = false;
}

// createShare wires the Copy link button and the Export menu's embed code, when the
// page has them; page.root's data-session names the run.
export function createShare(page) {
  const st = { session: page.root.dataset.session || "", box: null, hideTimer: 0 };
  if (!st.session) return;
  byId("copy-link")?.addEventListener("click", () => copyLink(st));
  byId("export-embed")?.addEventListener("click", () => copyEmbed(st));
}
