// The metrics panel: the run measured against the course notes' formulas. The server
// computes it by replay (GET /api/sessions/{id}/metrics?step=k); the panel asks again
// whenever the run changes: at once after a step, a seek or an intervention, at most
// twice a second while the run plays. A grant that overtook a causally earlier request
// is named, and a click seeks the run to it.

import { byId, htmlEl } from "./dom.js";
import { round2 as num, shortFormula, figureText, rangeText, notesText } from "./text.js";

const PLAYING_GAP = 500; // ms between two requests while the run plays

// Short row labels; the full name is the row's tooltip.
const SHORT = {
  "messages-per-entry": "messages per entry",
  "messages-to-enter": "to enter (alone)",
  "messages-on-exit": "sent on leaving",
  "client-delay": "client delay",
  "exit-delay": "exit delay",
  "sync-delay": "sync. delay",
  "election-messages": "messages per election",
  "election-time": "election time",
};

function seekButton(seek, label, step, title) {
  const b = htmlEl("button", { class: "linkish", type: "button", "data-step": step, title: title || `Show step ${step}` }, label);
  b.addEventListener("click", () => seek(step));
  return b;
}

// createMetrics starts the panel, when the page has one: page.root is the page's
// main element (its data-api is the session's API), page.seek(step) moves the run.
// It returns what follows the run's frames, or null.
export function createMetrics(page) {
  const panel = byId("metrics-panel");
  if (!panel) return null;
  const app = page.root;
  const seek = page.seek;
  const details = panel.querySelector("details");
  const body = panel.querySelector("#metrics tbody");
  const note = panel.querySelector("#metrics-note");
  const ordering = panel.querySelector("#ordering");
  const elections = panel.querySelector("#elections");
  let resets = 0; // a reset starts a new run at the same step numbers
  let wantKey = ""; // the run as the page shows it: step, interventions, resets
  let wantStep = 0;
  let shownKey = "";
  let busy = false;
  let timer = 0;
  let last = 0; // when the last request went out

  function frameTaken(frame, model) {
    if (frame.type === "hello") resets++;
    if (!["snapshot", "events", "state"].includes(frame.type)) return;
    const key = `${model.step}/${model.interventions}/${resets}`;
    if (key === wantKey) return;
    wantKey = key;
    wantStep = model.step;
    schedule(model.playing);
  }
  details?.addEventListener("toggle", () => { if (details.open) schedule(false); });

  function schedule(playing) {
    if (details && !details.open) return; // nobody looks: no work for the server
    clearTimeout(timer);
    const wait = playing ? Math.max(0, last + PLAYING_GAP - performance.now()) : 0;
    timer = setTimeout(fetchNow, wait);
  }

  async function fetchNow() {
    if (busy || wantKey === shownKey) return;
    busy = true;
    last = performance.now();
    const key = wantKey;
    try {
      const res = await fetch(`${app.dataset.api}/metrics?step=${wantStep}`, { cache: "no-store" });
      if (!res.ok) throw new Error(await res.text());
      const m = await res.json();
      shownKey = key;
      render(m);
      panel.dataset.step = String(m.step);
    } catch (err) {
      shownKey = key; // do not retry the same step in a loop
      note.textContent = "metrics unavailable";
      note.title = String(err.message || err);
    } finally {
      busy = false;
      // The run moved on while this one was computed: catch up, within the pace.
      if (wantKey !== shownKey) schedule(true);
    }
  }

  function measured(m) {
    if (m.mean === null || m.mean === undefined) {
      const s = htmlEl("span", { class: "na" }, "n/a yet");
      s.title = m.note || "nothing to measure yet";
      return s;
    }
    const frag = document.createDocumentFragment();
    const main = m.unit === "time" && m.meanT !== undefined
      ? `${num(m.mean)} = ${num(m.meanT)} T`
      : num(m.mean);
    frag.append(htmlEl("strong", { class: "value" }, main));
    if (m.max !== undefined && m.samples > 1 && m.max !== m.mean) {
      const max = m.unit === "time" && m.maxT !== undefined ? `${num(m.max)} = ${num(m.maxT)} T` : num(m.max);
      frag.append(htmlEl("span", { class: "muted" }, ` (max ${max})`));
    }
    frag.append(htmlEl("span", { class: "samples" }, ` · ${m.samples} measured`));
    return frag;
  }

  // soFar is messages per entry while requests are still being served: their messages
  // are counted before their entries, so a mean would read high against the notes.
  function soFar(m) {
    const waiting = m.requests - m.entries;
    const s = htmlEl("span", { class: "so-far" },
      htmlEl("strong", { class: "value" }, `${m.messages} messages so far`), `, ${m.entries} entr${m.entries === 1 ? "y" : "ies"}`);
    s.title = `${waiting} request${waiting === 1 ? " is" : "s are"} still being served: their messages count before their entries, so the mean per entry shows once every request has entered`;
    return s;
  }

  function none(title) {
    const s = htmlEl("span", { class: "na" }, "—");
    s.title = title;
    return s;
  }

  // notesCell lists the notes' formulas, as the notes write them, each naming its notes.
  function notesCell(list, unit) {
    const ul = htmlEl("ul", { class: "theory-list" });
    for (const t of list) {
      for (const f of t.notes || []) {
        const li = htmlEl("li", {}, figureText(f.formula, f.value, f.time, unit), " ",
          htmlEl("span", { class: "muted note-ref" }, `(${notesText(f.in)})`));
        li.title = `${t.name}: ${f.formula} (${notesText(f.in)})`;
        ul.append(li);
      }
    }
    return ul.children.length ? ul : none("the notes give no figure for this");
  }

  // derivedCell lists the project's own figures for its implementation.
  function derivedCell(list, unit) {
    const ul = htmlEl("ul", { class: "theory-list" });
    for (const t of list) {
      if (!t.formula) continue;
      const formula = shortFormula(t.formula);
      const li = htmlEl("li", {}, t.range ? rangeText(formula, t.range, unit) : figureText(formula, t.value, t.time, unit));
      if (t.range) li.classList.add("range");
      // An algorithm written from scratch declares its own figures (its costs).
      const own = byId("own-tag") && !byId("own-tag").hidden;
      li.title = `${t.name}: ${t.formula} (${own ? "declared by your algorithm" : "derived for this implementation"}; not in the notes)`;
      ul.append(li);
    }
    return ul.children.length ? ul : none("no figure derived for this");
  }

  function render(m) {
    const rows = [];
    for (const x of m.metrics) {
      const tr = htmlEl("tr");
      tr.dataset.key = x.key;
      const th = htmlEl("th", {}, SHORT[x.key] || x.name);
      th.title = x.name;
      th.scope = "row";
      const td1 = htmlEl("td", { class: "measured" });
      td1.append(x.key === "messages-per-entry" && m.requests > m.entries && m.entries > 0 ? soFar(m) : measured(x));
      const td2 = htmlEl("td", { class: "theory notes" });
      td2.append(notesCell(x.theory, x.unit));
      const td3 = htmlEl("td", { class: "theory derived" });
      td3.append(derivedCell(x.theory, x.unit));
      // Which n the formulas are evaluated at, when it is not every process: a ring
      // election's formulas count the live ring, the crashed processes bypassed.
      if (x.theoryOf && x.theoryOf.includes("live") && x.theory.length) {
        for (const td of [td2, td3]) {
          td.append(htmlEl("span", { class: "muted theory-n" }, ` for ${x.theoryOf}`));
        }
      }
      tr.append(th, td1, td2, td3);
      rows.push(tr);
    }
    body.replaceChildren(...rows);
    const parts = [`N = ${m.n}`];
    if (m.meanDelay > 0) parts.push(`T = ${num(m.meanDelay)}`);
    parts.push(m.family === "mutex" ? `${m.entries} entr${m.entries === 1 ? "y" : "ies"}` : `${m.messages} messages`);
    if (m.background) parts.push(`${m.background} heartbeats not counted`);
    note.textContent = parts.join(" · ");
    note.title = "T: the notes' message time, here the network's mean delay; delays are shown in time units, then in T (2 T = twice the mean delay)";
    if (ordering) renderOrdering(m.ordering);
    if (elections) renderElections(m.elections || []);
  }

  // The definition each verdict judges, said on the panel: the bakery has its own (002).
  const DEFINITIONS = {
    "happened-before": {
      what: "requests granted in happened-before order (002, 003)",
      none: "no granted request has one that happened before it",
      kept: (n) => `came after every request that happened before ${n === 1 ? "it" : "them"}`,
      before: "happened before",
    },
    bakery: {
      what: "002's bakery property: a process that entered the bakery before another entered the doorway enters the CS first",
      none: "no granted request had another process enter the bakery before it entered the doorway",
      kept: (n) => `came after every process that entered the bakery before ${n === 1 ? "it" : "they"} entered the doorway`,
      before: "entered the bakery (ticket taken) before the doorway of",
    },
  };

  function renderOrdering(o) {
    ordering.dataset.verdict = o ? o.verdict : "";
    if (!o) { ordering.replaceChildren(); return; }
    const def = DEFINITIONS[o.definition] || DEFINITIONS["happened-before"];
    const head = htmlEl("strong", {}, "Ordering: ");
    const which = htmlEl("span", { class: "muted ordering-definition" }, ` Judged by ${def.what}.`);
    ordering.dataset.definition = o.definition || "happened-before";
    switch (o.verdict) {
      case "nothing":
        ordering.replaceChildren(head, `nothing to check yet: ${def.none}.`, which);
        return;
      case "kept":
        ordering.replaceChildren(head, htmlEl("span", { class: "ok" }, "kept"),
          `: ${o.checked} grant${o.checked === 1 ? "" : "s"} ${def.kept(o.checked)}.`, which);
        return;
    }
    const f = o.first;
    const more = o.violations > 1 ? ` (${o.violations} such grants in all)` : "";
    ordering.replaceChildren(head, htmlEl("span", { class: "bad" }, "broken"),
      `: P${f.later.node} entered the CS although P${f.earlier.node}'s request (`,
      seekButton(seek, `step ${f.earlier.step}`, f.earlier.step, `Show P${f.earlier.node}'s request`),
      `) ${def.before} P${f.later.node}'s (`,
      seekButton(seek, `step ${f.later.step}`, f.later.step, `Show P${f.later.node}'s request`),
      `) and was still waiting${more}. `,
      seekButton(seek, `Show the grant (step ${f.grant.step})`, f.grant.step, `Seek to P${f.later.node} entering the CS`),
      which);
  }

  function renderElections(list) {
    const items = list.slice(-3).map((el, k) => {
      const li = htmlEl("li");
      const n = list.length - Math.min(3, list.length) + k + 1;
      li.append(`Election ${n}: called by P${el.start.node} at `, seekButton(seek, `step ${el.start.step}`, el.start.step), `, ${el.messages} messages`);
      if (el.settled) {
        li.append(`; everyone knows P${el.leader} at `, seekButton(seek, `step ${el.settled.step}`, el.settled.step), ` (${el.time} time units)`);
      } else {
        li.append("; not settled yet");
      }
      return li;
    });
    elections.replaceChildren(...items);
  }

  return { frame: frameTaken };
}
