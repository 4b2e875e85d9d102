// Explore: asks the server to check every interleaving of this page's scenario
// (POST /api/sessions/{id}/explore, docs/protocol.md) and shows its progress, then the
// verdict: the properties hold (with the number of states and the depth), or a
// counterexample to open step by step. Cancel (or closing the dialog) stops the
// search on the server, which frees its slot for the next one.

import { byId as part, htmlEl } from "./dom.js";

const words = {
  "mutual-exclusion": "mutual exclusion",
  deadlock: "deadlock freedom",
  leader: "agreement on one leader",
  pending: "bounded entry",
};

const num = (n) => Number(n).toLocaleString("en");

// setState records the dialog's state for styling and tests: running, ok, violation,
// bounded, cancelled, error.
function setState(dialog, state) {
  dialog.dataset.state = state;
}

function showProgress(text) {
  part("explore-progress").textContent = text;
}

function reset(dialog) {
  setState(dialog, "running");
  delete dialog.dataset.states;
  delete dialog.dataset.depth;
  delete dialog.dataset.maxStates;
  part("explore-verdict").textContent = "Exploring every order of events…";
  part("explore-workload").textContent = "";
  part("explore-resized").textContent = "";
  part("explore-resized").hidden = true;
  delete dialog.dataset.nodes;
  part("explore-algorithm").hidden = true;
  showProgress("starting");
  part("explore-details").replaceChildren();
  part("explore-open-cx").hidden = true;
  part("explore-cancel").textContent = "Cancel";
}

function showResult(dialog, r) {
  dialog.dataset.states = String(r.states);
  dialog.dataset.depth = String(r.depth);
  const details = part("explore-details");
  details.replaceChildren();
  const facts = htmlEl("p", { class: "explore-facts" }, `${num(r.states)} states, ${num(r.transitions)} transitions, depth ${num(r.depth)}, ${duration(r.seconds)}${r.timed ? " (time kept: the algorithm sets timers)" : ""}.`);
  // Whose rules were searched: the algorithm's title, and for one written from scratch
  // its own name, marked as the student's.
  const searched = part("explore-algorithm");
  if (searched) {
    searched.textContent = r.title ? `Searched: ${r.title}${r.name ? ` (${r.name}), your algorithm: not one of the notes'` : ""}.` : "";
    searched.hidden = !r.title;
  }
  if (r.result === "ok") {
    setState(dialog, "ok");
    const checked = (r.checked || []).map((p) => words[p] || p).join(", ");
    part("explore-verdict").textContent = `Every property holds${r.nodes ? ` with ${r.nodes} processes` : ""}: ${checked}.`;
    const p = htmlEl("p", {}, `Checked in all ${num(r.states)} reachable states, down to depth ${num(r.depth)}.`);
    if (r.entryBound) p.textContent += ` Every request is served within ${num(r.entryBound)} steps.`;
    details.append(p, facts);
  } else if (r.result === "violation") {
    setState(dialog, "violation");
    part("explore-verdict").textContent = `${cap(words[r.property] || r.property)} is broken: ${r.detail}.`;
    const cx = r.counterexample;
    details.append(htmlEl("p", {}, `A shortest run that breaks it takes ${r.depth} steps:`));
    const ol = htmlEl("ol", { class: "explore-path" });
    ol.id = "explore-path";
    for (const step of cx.path) ol.append(htmlEl("li", {}, step));
    details.append(ol, facts);
    const open = part("explore-open-cx");
    if (cx.link) {
      open.href = cx.link;
      open.hidden = false;
    }
  } else {
    setState(dialog, "bounded");
    // The budget from the start line: the search counts a state or so past it.
    const maxStates = num(dialog.dataset.maxStates || r.states);
    const limit = { "max-states": `${maxStates} states`, "max-memory": "memory", timeout: "time" }[r.bound];
    part("explore-verdict").textContent = limit
      ? `Not proved: the search hit the server's ${limit} limit before it had seen every state.`
      : "Not proved: the search stopped before the end.";
    const why = { "max-states": `it reached the limit of ${maxStates} states`, "max-memory": "it reached its memory limit", timeout: "it ran out of time" }[r.bound] || "it was stopped";
    details.append(htmlEl("p", {}, `No property broke in what it saw, but ${why}, so nothing is proved. Fewer processes or fewer requests make the search smaller; the command line (playground explore) has no such limits.`), facts);
  }
  part("explore-cancel").textContent = "Close";
}

function mib(bytes) {
  return `${Math.round((bytes || 0) / (1 << 20))} MiB of memory`;
}

function duration(s) {
  return s < 1 ? `${Math.max(1, Math.round(s * 1000))} ms` : `${s.toFixed(1)} s`;
}

function cap(s) { return s.charAt(0).toUpperCase() + s.slice(1); }

function fail(dialog, msg) {
  setState(dialog, "error");
  part("explore-verdict").textContent = "The search could not run.";
  part("explore-details").replaceChildren(htmlEl("p", {}, msg));
  showProgress("");
  part("explore-cancel").textContent = "Close";
}

// addedWorkload says what the search added to a scenario without a workload of its own
// (the server's "workload"), in the algorithm's terms.
export function addedWorkload(family, workload) {
  if (!workload) return "";
  return family === "election"
    ? `No election is started in this scenario, so: ${workload}.`
    : `No requests in this scenario, so: ${workload}.`;
}

function handle(dialog, line, family) {
  switch (line.type) {
    case "queued": // the server's explorer slots are taken: a fair queue, 1 is next
      showProgress(line.position === 1 ? "waiting for a free explorer slot: you are next" : `waiting for a free explorer slot: number ${line.position} in the queue`);
      break;
    case "resized": // the setup asked for is past the server's limits: a smaller one is checked
      dialog.dataset.nodes = String(line.nodes);
      part("explore-resized").textContent = `Checked with ${line.nodes} processes instead of ${line.asked}: ${line.why}.`;
      part("explore-resized").hidden = false;
      break;
    case "start":
      dialog.dataset.maxStates = String(line.maxStates);
      part("explore-workload").textContent = addedWorkload(family, line.workload);
      showProgress(`${line.nodes} processes; limits: ${num(line.maxStates)} states, ${mib(line.maxMemory)}, ${line.timeout} s`);
      break;
    case "progress":
      showProgress(`${num(line.states)} states, depth ${line.depth}, ${num(Math.round(line.statesPerSecond))} states/s`);
      break;
    case "result":
      showProgress("");
      showResult(dialog, line.result);
      if (line.challenge) { // the run is a challenge (scenarios.Challenge): the editor shows the verdict
        part("explore-details").prepend(htmlEl("p", { class: "explore-challenge", "data-met": line.challenge.met ? "yes" : "no" },
          `${line.challenge.met ? "Goal met" : "Goal not met"}: ${line.challenge.why}`));
        document.dispatchEvent(new CustomEvent("pg:challenge", { detail: line.challenge }));
      }
      break;
    case "error":
      fail(dialog, line.line ? `line ${line.line} of the rules: ${line.error}` : line.error);
      break;
  }
}

// search runs one search and shows it in the dialog; st.controller aborts it.
async function search(st) {
  const dialog = st.dialog;
  reset(dialog);
  dialog.showModal();
  const mine = new AbortController();
  st.controller = mine;
  try {
    const res = await fetch(`/api/sessions/${encodeURIComponent(st.session)}/explore`, { method: "POST", signal: mine.signal });
    if (!res.ok) {
      let msg = `the server answered ${res.status}`;
      try { msg = (await res.json()).error || msg; } catch { /* not JSON */ }
      fail(dialog, msg);
      return;
    }
    // JSON lines, as they come.
    const reader = res.body.getReader();
    const dec = new TextDecoder();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += dec.decode(value, { stream: true });
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const text = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (text) handle(dialog, JSON.parse(text), st.family);
      }
    }
    if (dialog.dataset.state === "running") fail(dialog, "the connection ended before the result");
  } catch (e) {
    if (mine.signal.aborted) return; // closed on purpose
    fail(dialog, String(e.message || e));
  } finally {
    if (st.controller === mine) st.controller = null;
  }
}

function stop(st) {
  if (st.controller) st.controller.abort(); // the server stops the search with the request
  st.controller = null;
}

// cancel stops a running search and says so in the dialog, which stays open; once the
// search has ended the same button closes the dialog.
function cancel(st) {
  if (st.dialog.dataset.state !== "running") {
    st.dialog.close();
    return;
  }
  stop(st);
  setState(st.dialog, "cancelled");
  part("explore-verdict").textContent = "Cancelled: the search was stopped before the end, so nothing is proved.";
  part("explore-cancel").textContent = "Close";
}

// The action is for small configurations only: say why when it is off, in the tooltip
// and in words beside the button (a greyed-out button alone does not say it).
function update(st, model) {
  const { button, why, maxNodes } = st;
  const n = model.ids.length;
  if (n === 0) return;
  const ok = n <= maxNodes;
  button.disabled = !ok;
  button.title = ok
    ? "Check every order of events of this setup for broken properties"
    : `Explore checks every order of events, whose number grows exponentially: at most ${maxNodes} processes here (this run has ${n}; Run setup changes it)`;
  button.dataset.reason = ok ? "" : "too many processes";
  // Two short lines, so that the header keeps its width.
  why.replaceChildren(...(ok ? [] : [`at most ${maxNodes}`, htmlEl("br"), "processes"]));
  why.hidden = ok;
}

// createExplore wires the Explore button and dialog, when the page has them;
// page.root's data-session names the run. It returns what follows the run's frames.
export function createExplore(page) {
  const st = { session: page.root.dataset.session || "", button: part("explore-open"), dialog: part("explore-dialog"), controller: null,
    family: page.root.dataset.family || "" };
  if (!st.button || !st.dialog || !st.session) return null;
  st.maxNodes = Number(st.button.dataset.maxNodes) || 0; // the server's bound (web/explore.go ExploreNodes)
  // A page that offers no search at all (a lecture's) shows no button, rather than
  // one saying "at most 0 processes".
  if (!st.maxNodes) { st.button.hidden = true; return null; }
  st.why = htmlEl("span", { class: "explore-why", id: "explore-why", hidden: true });
  st.button.after(st.why);
  st.button.setAttribute("aria-describedby", "explore-why");
  st.button.addEventListener("click", () => search(st));
  part("explore-cancel").addEventListener("click", () => cancel(st));
  st.dialog.addEventListener("close", () => stop(st));
  // Keys typed in the dialog are not the page's shortcuts.
  st.dialog.addEventListener("keydown", (e) => { if (e.key !== "Escape" && e.key !== "Tab") e.stopPropagation(); });
  return { frame: (f, model) => update(st, model) };
}
