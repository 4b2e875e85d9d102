// Be the network: the Network panel and its marks on the view. The user holds every
// message and picks which one arrives next (or drops it), splits the processes into
// groups (drag a process in the view, or choose its group in the panel), and changes
// FIFO, delay and loss live. Every choice is an `act` command, so the session records
// it as an intervention and a share link carries it (docs/protocol.md).

import { byId as $, htmlEl, perFrame, svgEl } from "./dom.js";
import { messageClasses } from "./layout.js";
import { payloadText } from "./text.js";
import { LETTERS, sameList as same, groupLetters, describeGroups, partitionOf, dropGroup, heldQueue, queueRanks, parkOffset } from "./netmodel.js";

const DRAG_PX = 8; // a press that moves less than this is a click (the process menu)

// createNetwork starts the panel, when the page has one. page.spec is the algorithm,
// page.model the run, page.send(frame) sends a command. It returns what follows the
// run's frames, or null.
export function createNetwork(page) {
  const panel = $("net-panel");
  if (!panel) return null;
  const command = page.send;
  const spec = page.spec;
  const svg = $("view");
  const wrap = $("svg-wrap");
  const body = $("net-body");
  const toggle = $("net-toggle");
  const holdBox = $("net-hold");
  const summary = $("net-summary");
  const list = $("net-held");
  const count = $("net-held-count");
  const hint = $("net-hint");
  const form = $("net-form");
  const fe = form.elements;
  const groupBody = $("net-groups");
  const groupHead = $("net-group-head");
  const partBtn = $("net-part");
  const healBtn = $("net-heal");
  const partNote = $("net-part-note");
  const msgClass = messageClasses(spec);

  let model = null;
  let net = null; // {delay:[min,max], fifo, loss, hold}: the network in force at this step
  let applied = []; // group letter per process position, as the run has it
  let draft = null; // the user's groups not applied yet (null: none)
  let formDirty = false;
  let heldKey = "";
  let anyHeld = false; // messages wait for the user (renderHeld)
  let formKey = ""; // the network the form shows
  let rowsKey = "";

  // ---- marks on the view: groups behind the processes, a ghost while dragging ----
  const under = svgEl("g", { id: "net-layer", "aria-hidden": "true" });
  svg.insertBefore(under, svg.firstChild);
  const over = svgEl("g", { id: "net-top", "aria-hidden": "true" }, svg);
  // The badge sits in the stage's bar, beside the run's status, never over the view.
  const badge = htmlEl("div", { class: "net-badge" });
  badge.hidden = true;
  const stageBar = document.querySelector(".stage-bar");
  if (stageBar) stageBar.insertBefore(badge, $("status"));
  else wrap.appendChild(badge);
  const barText = htmlEl("span", { class: "net-draft-text" });
  const barApply = htmlEl("button", { class: "btn", type: "button", id: "net-draft-apply" }, "Apply partition");
  const barCancel = htmlEl("button", { class: "btn btn-quiet", type: "button", id: "net-draft-cancel" }, "Cancel");
  const bar = htmlEl("div", { class: "net-draftbar", hidden: true }, barText, barApply, barCancel);
  wrap.appendChild(bar);

  function open(on) {
    panel.dataset.open = String(on);
    toggle.setAttribute("aria-expanded", String(on));
    body.hidden = !on;
  }
  toggle.addEventListener("click", () => open(body.hidden));

  // ---- the run's frames ----
  function frameTaken(f) {
    model = page.model;
    switch (f.type) {
      case "hello":
        net = f.network;
        draft = null;
        formDirty = false;
        formKey = "";
        break;
      case "snapshot":
        if (f.network) net = f.network;
        break;
      case "events":
        for (const b of f.batches) {
          if (b.network) net = b.network;
          if (b.retime) retime(b.retime);
        }
        break;
    }
    // A fast run brings several frames per display frame: the panel follows the
    // latest, once, with the marks (docs/benchmarks.md, "Heavy traffic at 4x").
    renderWanted = true;
    schedule();
  }
  let renderWanted = false;
  // schedule draws the marks at the next frame, and the panel first if it is wanted.
  const schedule = perFrame(() => {
    if (renderWanted) {
      renderWanted = false;
      render(); // asks for the next frame's draw: draw now as well
    }
    draw();
  });

  // retime sets the arrival of messages already in flight when hold mode switched
  // (the model only learns arrivals from send events).
  function retime(times) {
    for (const [id, at] of Object.entries(times)) {
      const f = model.inflight.get(Number(id));
      if (!f) continue;
      f.at = at;
      svg.querySelector(`#msgs .msg[data-id="${id}"]`)?.classList.toggle("held", at < 0);
    }
  }

  function render() {
    if (!model || !net) return;
    applied = groupLetters(model.nodes.map((n) => n.group ?? 0));
    if (draft && (draft.length !== applied.length || same(draft, applied))) draft = null;
    panel.dataset.hold = String(net.hold);
    panel.dataset.groups = applied.map((g) => LETTERS[g]).join(",");
    holdBox.checked = net.hold;
    const bits = [net.delay[0] === net.delay[1] ? `delay ${net.delay[0]}` : `delay ${net.delay[0]}–${net.delay[1]}`,
      net.fifo ? "FIFO" : "not FIFO", `loss ${Math.round(net.loss * 100)}%`];
    if (Math.max(...applied) > 0) bits.push(`${Math.max(...applied) + 1} groups`);
    setText(summary, bits.join(" · "));
    if (!formDirty && formKey !== JSON.stringify(net)) {
      formKey = JSON.stringify(net);
      fe.fifo.checked = net.fifo;
      fe.dmin.value = net.delay[0];
      fe.dmax.value = net.delay[1];
      fe.loss.value = net.loss;
    }
    renderHeld();
    renderGroups();
    schedule();
  }

  // ---- held messages ----

  function renderHeld() {
    const held = heldQueue(model.inflight, net.fifo);
    anyHeld = held.length > 0;
    setText(count, String(held.length));
    if (net.hold) setText(hint, held.length ? "Pick the message that arrives next: each delivery is one step." : "Nothing is held: act on a process, and its messages wait here.");
    else setText(hint, held.length ? "Hold mode is off: these still wait for you." : "Switch “Be the network” on to hold every message until you deliver it.");
    const key = JSON.stringify(held.map((f) => [f.msg.id, f.behind])) + net.fifo;
    if (key === heldKey) return;
    heldKey = key;
    // Keep the keyboard where it was: on the same row, or the last one.
    const focused = list.contains(document.activeElement) ? document.activeElement : null;
    const focusRow = focused ? [...list.children].indexOf(focused.closest("li")) : -1;
    const focusAct = focused?.dataset.act;
    const rows = held.map((f) => {
      const m = f.msg;
      const li = htmlEl("li", { "data-msg": m.id },
        htmlEl("span", { class: `chip ${msgClass.get(m.type) || "m6"}` }),
        htmlEl("span", { class: "what" }, htmlEl("span", { class: "net-id" }, `#${m.id}`), ` P${m.from} → P${m.to} `,
          htmlEl("b", {}, m.type), payloadText(m) ? ` ${payloadText(m)}` : ""));
      const label = `${m.type} #${m.id} from P${m.from} to P${m.to}`;
      const button = (act, cls, text) => htmlEl("button", { class: cls, type: "button", "data-act": act, "data-msg": m.id, "aria-label": `${text} ${label}` }, text);
      const go = button("deliver", "net-btn", "Deliver");
      if (f.behind) {
        go.disabled = true;
        go.title = `FIFO: waits behind #${f.behind} on this channel`;
        li.append(htmlEl("span", { class: "net-wait" }, `after #${f.behind}`));
      }
      li.append(go, button("drop", "net-btn quiet", "Drop"));
      return li;
    });
    list.replaceChildren(...rows);
    if (focusRow >= 0 && rows.length) {
      const li = rows[Math.min(focusRow, rows.length - 1)];
      const b = li.querySelector(`button[data-act="${focusAct}"]:not(:disabled)`) || li.querySelector("button:not(:disabled)");
      b?.focus({ preventScroll: true });
    }
  }

  list.addEventListener("click", (e) => {
    const b = e.target.closest("button[data-act]");
    if (!b || b.disabled) return;
    command({ type: "act", do: b.dataset.act, msg: Number(b.dataset.msg) });
  });

  holdBox.addEventListener("change", () => {
    command({ type: "act", do: "network", hold: holdBox.checked });
    if (holdBox.checked) open(true);
    holdBox.checked = net ? net.hold : false; // the server's answer sets it
  });

  // ---- FIFO, delay and loss ----

  form.addEventListener("input", () => { formDirty = true; });
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    if (!net) return;
    const frame = { type: "act", do: "network" };
    const lo = Number(fe.dmin.value), hi = Number(fe.dmax.value), loss = Number(fe.loss.value);
    if (lo !== net.delay[0] || hi !== net.delay[1]) frame.delay = [lo, hi];
    if (fe.fifo.checked !== net.fifo) frame.fifo = fe.fifo.checked;
    if (loss !== net.loss) frame.loss = loss;
    formDirty = false;
    formKey = "";
    if (Object.keys(frame).length === 2) {
      $("net-form-note").textContent = "Nothing to change.";
      return;
    }
    $("net-form-note").textContent = "";
    command(frame);
  });

  // ---- partition: the group editor ----

  function columns() {
    const g = draft || applied;
    return Math.max(3, ...g.map((x) => x + 1));
  }

  function renderGroups() {
    const groups = draft || applied;
    const cols = columns();
    const key = model.nodes.map((n) => n.id).join(",") + "/" + cols;
    if (key !== rowsKey) {
      rowsKey = key;
      const head = [htmlEl("th", { scope: "col" }, "process")];
      for (let c = 0; c < cols; c++) head.push(htmlEl("th", { scope: "col" }, LETTERS[c]));
      groupHead.replaceChildren(...head);
      groupBody.replaceChildren(...model.nodes.map((n, i) => {
        const tr = htmlEl("tr", { class: `p${i % 8}` }, htmlEl("th", { scope: "row" }, htmlEl("span", { class: "dot" }), ` P${n.id}`));
        for (let c = 0; c < cols; c++) {
          tr.append(htmlEl("td", {}, htmlEl("input", { type: "radio", name: `net-g-${i}`, value: String(c), "aria-label": `P${n.id} in group ${LETTERS[c]}` })));
        }
        return tr;
      }));
    }
    groups.forEach((g, i) => {
      const r = groupBody.querySelector(`input[name="net-g-${i}"][value="${g}"]`);
      if (r && !r.checked) r.checked = true;
    });
    const parted = Math.max(...applied) > 0;
    partBtn.disabled = !draft;
    healBtn.disabled = !parted;
    setText(partNote, draft ? "Not applied yet." : parted ? "" : "All connected.");
    bar.hidden = !draft;
    if (draft) barText.textContent = describeGroups(draft, model.nodes.map((n) => n.id));
  }

  function setDraft(i, g) {
    const d = (draft || applied).slice();
    d[i] = g;
    draft = same(d, applied) ? null : d;
    render();
  }

  groupBody.addEventListener("change", (e) => {
    const r = e.target;
    if (r.type !== "radio") return;
    setDraft(Number(r.name.slice("net-g-".length)), Number(r.value));
  });

  function applyDraft() {
    if (!draft) return;
    const groups = partitionOf(draft, model.nodes.map((n) => n.id));
    command(groups.length > 1 ? { type: "act", do: "partition", groups } : { type: "act", do: "heal" });
    draft = null;
    render();
  }

  partBtn.addEventListener("click", applyDraft);
  barApply.addEventListener("click", applyDraft);
  barCancel.addEventListener("click", () => { draft = null; render(); });
  healBtn.addEventListener("click", () => {
    draft = null;
    command({ type: "act", do: "heal" });
  });

  // ---- partition: dragging a process in the view ----

  let drag = null;
  let swallowClick = false;

  function nodePos(i) {
    const g = svg.querySelector(`#nodes .node[data-index="${i}"]`);
    if (!g) return null;
    const m = /translate\(([-\d.]+)[ ,]+([-\d.]+)\)/.exec(g.getAttribute("transform") || "");
    const r = Number(g.querySelector(".body")?.getAttribute("r") || 20);
    return m ? { x: Number(m[1]), y: Number(m[2]), r } : null;
  }

  function toSvg(e) {
    const ctm = svg.getScreenCTM();
    if (!ctm) return { x: 0, y: 0 };
    const p = new DOMPoint(e.clientX, e.clientY).matrixTransform(ctm.inverse());
    return { x: p.x, y: p.y };
  }

  function nodeAt(e) {
    const el = document.elementFromPoint(e.clientX, e.clientY);
    const n = el?.closest?.("#view .node");
    return n ? Number(n.dataset.index) : -1;
  }

  svg.addEventListener("pointerdown", (e) => {
    if (e.button !== 0 || !model) return;
    const n = e.target.closest?.(".node");
    if (!n) return;
    drag = { i: Number(n.dataset.index), x0: e.clientX, y0: e.clientY, id: e.pointerId, on: false, ghost: null, over: -1 };
  });

  svg.addEventListener("pointermove", (e) => {
    if (!drag || e.pointerId !== drag.id) return;
    if (!drag.on) {
      if (Math.hypot(e.clientX - drag.x0, e.clientY - drag.y0) < DRAG_PX) return;
      drag.on = true;
      svg.setPointerCapture(e.pointerId);
      const p = nodePos(drag.i);
      const g = svgEl("g", { class: `net-ghost p${drag.i % 8}` }, over);
      svgEl("circle", { r: p ? p.r : 20 }, g);
      svgEl("text", {}, g).textContent = `P${model.nodes[drag.i].id}`;
      drag.ghost = g;
      panel.dataset.dragging = "true";
      svg.classList.add("dragging");
    }
    const p = toSvg(e);
    drag.ghost.setAttribute("transform", `translate(${p.x.toFixed(1)} ${p.y.toFixed(1)})`);
    const t = nodeAt(e);
    drag.over = t;
    schedule();
  });

  function endDrag(e, drop) {
    if (!drag || e.pointerId !== drag.id) return;
    const d = drag;
    drag = null;
    if (!d.on) return;
    d.ghost.remove();
    delete panel.dataset.dragging;
    svg.classList.remove("dragging");
    if (svg.hasPointerCapture(e.pointerId)) svg.releasePointerCapture(e.pointerId);
    // The click that follows a drag is not a click on a process.
    swallowClick = true;
    setTimeout(() => { swallowClick = false; }, 0);
    if (drop) dropOn(d.i, nodeAt(e));
    else schedule();
  }

  // dropOn puts process i in target's group, or in a group of its own on empty ground.
  function dropOn(i, target) {
    const g = dropGroup(draft || applied, i, target);
    if (g < 0) schedule();
    else setDraft(i, g);
  }

  svg.addEventListener("pointerup", (e) => endDrag(e, true));
  svg.addEventListener("pointercancel", (e) => endDrag(e, false));
  document.addEventListener("click", (e) => {
    if (swallowClick) {
      e.stopPropagation();
      e.preventDefault();
    }
  }, true);

  // ---- drawing the marks ----

  // The view rebuilds its processes and messages on its own (resize, new messages).
  // Messages coming and going matter only while some are held (their queue's fan);
  // a fast run adds and removes them every frame.
  new MutationObserver((records) => {
    const onlyMessages = records.every((r) => r.target.id === "msgs" || r.target.id === "trails");
    if (onlyMessages && !anyHeld && !parked.size) return;
    schedule();
  }).observe(svg, { childList: true, subtree: true });

  let drawnKey = "";
  function draw() {
    if (!model || !net) return;
    const groups = draft || applied;
    const parted = Math.max(...groups) > 0;
    const pos = model.nodes.map((_, i) => nodePos(i));
    const key = JSON.stringify([groups, applied, pos, drag?.over ?? -1, !!draft]);
    if (key !== drawnKey) {
      drawnKey = key;
      under.replaceChildren();
      if (parted || drag) {
        groups.forEach((g, i) => {
          const p = pos[i];
          if (!p) return;
          const pending = draft && draft[i] !== applied[i];
          const cls = `net-halo g${g % 8}${pending ? " pending" : ""}${drag && drag.over === i ? " target" : ""}`;
          svgEl("circle", { class: cls, cx: p.x.toFixed(1), cy: p.y.toFixed(1), r: (p.r + 13).toFixed(1) }, under);
          if (parted) {
            // The letter goes on the halo, on the side facing the centre, away from labels.
            const d = Math.hypot(p.x, p.y) || 1;
            const tx = p.x - (p.x / d) * (p.r + 13), ty = p.y - (p.y / d) * (p.r + 13);
            svgEl("circle", { class: `net-tag-bg g${g % 8}`, cx: tx.toFixed(1), cy: ty.toFixed(1), r: "9" }, under);
            const t = svgEl("text", { class: `net-tag g${g % 8}`, x: tx.toFixed(1), y: ty.toFixed(1) }, under);
            t.textContent = LETTERS[g];
          }
        });
      }
    }
    parkHeld();
    const held = [...model.inflight.values()].filter((f) => f.at < 0).length;
    badge.hidden = !net.hold;
    setText(badge, held ? `You are the network · ${held} held` : "You are the network");
    badge.title = held ? "Pick the message that arrives next: in the Network panel, or click it in the view" : "Every message will wait for you to deliver it";
  }

  // parkHeld fans out the held messages of a channel, which all wait halfway, so each
  // can be seen and clicked. Only held pills (and those it moved before) are touched.
  let parked = new Set(); // ids whose pill carries an offset
  function parkHeld() {
    const rank = queueRanks(model.inflight); // id -> place in its channel's queue
    if (!rank.size && !parked.size) return;
    for (const id of new Set([...rank.keys(), ...parked])) {
      const g = svg.querySelector(`#msgs .msg[data-id="${id}"]`);
      if (!g) continue;
      const k = rank.get(id) || 0;
      const dy = parkOffset(k, Number(g.querySelector("rect")?.getAttribute("height")) || 18);
      const want = dy ? `translate(0 ${dy})` : null;
      for (const c of g.querySelectorAll("rect, text")) {
        if (want) {
          if (c.getAttribute("transform") !== want) c.setAttribute("transform", want);
        } else if (c.hasAttribute("transform")) c.removeAttribute("transform");
      }
    }
    parked = new Set(rank.keys());
  }

  return { frame: frameTaken };
}

// setText writes a text only when it changed: a text written again is laid out again.
function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}
