// editor.js: "Edit rules". The pseudocode panel turns into the Starlark source of the
// run's algorithm (the run's own source, else the algorithm's template), highlighted
// with line numbers (starhl.js). Run restarts the run with the edited rules through the
// reset frame (docs/protocol.md); Check runs them and then the explorer (explore.js),
// whose counterexample opens in the view. An error never breaks the run: a source the
// server refuses is shown at its line and the run keeps its rules; a source that fails
// during the run is shown at its line and the rules that ran before come back.

import { byId as part } from "./dom.js";
import { highlight } from "./starhl.js";

const INDENT = "    ";

function sourceOf(scenario) {
  return (scenario && scenario.source) || "";
}

// lineHeight of the textarea, for scrolling a line into view.
function lineHeight(ta) {
  return parseFloat(getComputedStyle(ta).lineHeight) || 18;
}

export function createEditor(page) {
  const open = part("rules-edit");
  const box = part("rules-editor");
  const tplEl = part("rules-template");
  if (!open || !box || !tplEl) return null;
  const template = JSON.parse(tplEl.textContent);
  const ta = part("rules-source");
  const hl = part("code-hl");
  const gutter = part("code-gutter");
  const st = {
    current: null, // the scenario the run has now (its hello)
    previous: null, // the one before our last Run: what comes back if the new rules fail
    pending: null, // {ref, scenario, check} while a Run waits for its answer
    errorLine: 0,
    edited: false,
  };

  function render() {
    highlight(hl, ta.value, st.errorLine);
    const n = ta.value.split("\n").length;
    const rows = [];
    for (let k = 1; k <= n; k++) rows.push(k === st.errorLine ? `▶${k}` : String(k));
    gutter.textContent = rows.join("\n") + "\n";
    sync();
  }

  function sync() {
    hl.scrollTop = ta.scrollTop;
    hl.scrollLeft = ta.scrollLeft;
    gutter.scrollTop = ta.scrollTop;
  }

  function status(text) {
    part("rules-status").textContent = text;
  }

  function showError(msg, line) {
    st.errorLine = line || 0;
    const err = part("rules-error");
    err.textContent = line ? `Line ${line}: ${msg}` : msg;
    err.hidden = false;
    box.dataset.errorLine = String(st.errorLine);
    render();
    if (line) ta.scrollTop = Math.max(0, (line - 4) * lineHeight(ta));
    sync();
  }

  function clearError() {
    st.errorLine = 0;
    part("rules-error").hidden = true;
    delete box.dataset.errorLine;
    render();
  }

  function show(on) {
    box.hidden = !on;
    part("code-scroll").hidden = on;
    open.setAttribute("aria-pressed", on ? "true" : "false");
    if (on && !st.edited) {
      ta.value = sourceOf(st.current) || template;
      render();
    }
    if (on) {
      ta.focus({ preventScroll: true });
      if (!st.edited) {
        ta.setSelectionRange(0, 0);
        ta.scrollTop = 0;
        sync();
      }
    }
  }

  // run sends the edited rules; check: then explore them once they run.
  function run(check) {
    if (!st.current) return;
    const scenario = { ...st.current, source: ta.value };
    const ref = page.send({ type: "reset", scenario });
    if (!ref) return;
    st.pending = { ref, scenario, check };
    status("Loading your rules…");
  }

  function checkRules() {
    if (st.current && sourceOf(st.current) === ta.value && !st.pending) {
      explore();
      return;
    }
    run(true);
  }

  function explore() {
    const button = part("explore-open");
    if (!button || button.disabled) {
      status(button ? `Check is off here: ${button.title}` : "Check is not available on this page");
      return;
    }
    part("challenge-verdict").textContent = "Checking…";
    button.click();
  }

  function hello(f) {
    const p = st.pending;
    if (p && sourceOf(f.scenario) === p.scenario.source) {
      st.previous = st.current;
      st.pending = null;
      clearError();
      status("Running your rules.");
      st.current = f.scenario;
      if (p.check) explore();
      return;
    }
    st.current = f.scenario;
    const c = f.scenario && f.scenario.challenge;
    part("challenge").hidden = !c;
    if (c) part("challenge-goal").textContent = c.goal;
    if (!st.edited) {
      ta.value = sourceOf(f.scenario) || template;
      render();
    }
  }

  // stopped: the run's rules failed at a line; the ones before come back.
  function stopped(f) {
    showError(f.stopped, f.stoppedLine);
    if (st.previous) {
      const back = st.previous;
      st.previous = null;
      page.send({ type: "reset", scenario: back });
      status("These rules failed while running; the run is back on the rules before them.");
    }
  }

  open.addEventListener("click", () => show(box.hidden));
  part("rules-close").addEventListener("click", () => show(false));
  part("rules-reset").addEventListener("click", () => {
    ta.value = template;
    st.edited = true;
    clearError();
  });
  part("rules-run").addEventListener("click", () => run(false));
  part("rules-check").addEventListener("click", checkRules);
  ta.addEventListener("input", () => {
    st.edited = true;
    render();
  });
  ta.addEventListener("scroll", sync);
  // Tab indents; Esc then Tab leaves the editor (Shift+Tab always does): the keyboard
  // is never trapped in it (WCAG 2.1.2; the editor's description says so).
  let leaving = false;
  ta.addEventListener("keydown", (e) => {
    e.stopPropagation(); // letters are text here, not the page's shortcuts
    if (e.key === "Escape") { leaving = true; return; }
    const leave = leaving;
    leaving = false;
    if (e.key === "Tab" && !e.shiftKey && !leave) {
      e.preventDefault();
      ta.setRangeText(INDENT, ta.selectionStart, ta.selectionEnd, "end");
      st.edited = true;
      render();
    }
  });
  document.addEventListener("pg:challenge", (e) => {
    const v = part("challenge-verdict");
    v.textContent = e.detail.met ? `Goal met: ${e.detail.why}` : `Goal not met: ${e.detail.why}`;
    v.dataset.met = e.detail.met ? "yes" : "no";
  });

  return {
    frame(f) {
      if (f.type === "hello") {
        hello(f);
      } else if (f.type === "error" && st.pending && f.ref === st.pending.ref) {
        st.pending = null;
        status("Not run: the run keeps its rules.");
        showError(f.error, f.line);
      } else if ((f.type === "state" || f.type === "events") && f.stoppedLine > 0 && f.stoppedLine !== st.errorLine) {
        stopped(f);
      }
    },
  };
}
