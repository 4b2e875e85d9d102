// Share and export: "Copy link" asks the server for the link of this run at the step
// shown (docs/links.md) and puts it on the clipboard; where the clipboard cannot be
// used (a page not served over https, a refused permission) the link shows in a field,
// selected, to copy by hand. The Export menu's links are plain downloads.

const app = document.getElementById("main");
const session = app ? app.dataset.session : "";
const copyBtn = document.getElementById("copy-link");
const embedBtn = document.getElementById("export-embed");

let box = null;
let hideTimer = 0;

// The announcement: role=status so screen readers read it without moving focus.
function shareBox() {
  if (box) return box;
  box = document.createElement("div");
  box.className = "share-toast";
  box.id = "share-toast";
  box.setAttribute("role", "status");
  box.setAttribute("aria-live", "polite");
  box.hidden = true;
  const msg = document.createElement("span");
  msg.className = "share-msg";
  const field = document.createElement("input");
  field.id = "share-url";
  field.type = "text";
  field.readOnly = true;
  field.setAttribute("aria-label", "Link to this run");
  field.addEventListener("focus", () => field.select());
  const close = document.createElement("button");
  close.type = "button";
  close.className = "share-close";
  close.textContent = "×";
  close.setAttribute("aria-label", "Close");
  close.addEventListener("click", hide);
  box.append(msg, field, close);
  box.addEventListener("keydown", (e) => { if (e.key === "Escape") hide(); });
  document.body.append(box);
  return box;
}

function hide() {
  clearTimeout(hideTimer);
  if (box) box.hidden = true;
}

// show announces text with value in the field; manual: the copy is up to the user,
// so the field is selected and stays until closed.
function show(text, value, manual) {
  const b = shareBox();
  b.querySelector(".share-msg").textContent = text;
  const field = b.querySelector("#share-url");
  field.value = value;
  field.hidden = value === "";
  b.dataset.state = manual ? "manual" : "copied";
  b.hidden = false;
  clearTimeout(hideTimer);
  if (manual && value) {
    field.focus();
    field.select();
  } else {
    hideTimer = setTimeout(hide, 8000);
  }
}

async function fetchLink() {
  const r = await fetch(`/api/sessions/${encodeURIComponent(session)}/link`, { cache: "no-store" });
  let body = {};
  try { body = await r.json(); } catch { /* an error page */ }
  if (!r.ok) throw new Error(body.error || `the server answered ${r.status}`);
  return body;
}

async function copy(text, what) {
  let copied = false;
  if (navigator.clipboard && window.isSecureContext) {
    try {
      await navigator.clipboard.writeText(text);
      copied = true;
    } catch { /* denied: fall back to the field */ }
  }
  if (copied) show(`${what} copied to the clipboard.`, text, false);
  else show(`Copy this ${what.toLowerCase()} (Ctrl+C or ⌘C):`, text, true);
}

async function copyLink() {
  try {
    const l = await fetchLink();
    await copy(location.origin + l.path, "Link");
    box.dataset.length = String(l.length);
    box.dataset.step = String(l.step);
  } catch (err) {
    show(`No link for this run: ${err.message}`, "", false);
  }
}

async function copyEmbed() {
  try {
    const l = await fetchLink();
    const src = location.origin + l.embed;
    await copy(`<iframe src="${src}" width="800" height="560" title="Distributed playground" allowfullscreen></iframe>`, "Embed code");
  } catch (err) {
    show(`No embed code for this run: ${err.message}`, "", false);
  }
  const menu = document.getElementById("export-menu");
  if (menu) menu.open = false;
}

if (copyBtn && session) copyBtn.addEventListener("click", copyLink);
if (embedBtn && session) embedBtn.addEventListener("click", copyEmbed);
