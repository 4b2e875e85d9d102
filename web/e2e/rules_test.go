package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The target: from the catalogue, a student changes Ricart-Agrawala's
// tie-break in the editor, runs it, checks it, and opens the shortest run that breaks
// mutual exclusion, all by clicking and typing in the page.
func TestEditedRicartAgrawalaBreaksMutualExclusion(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 800)
	run(t, ctx, chromedp.Navigate(ts.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(`a[href="/play/ricart-agrawala?fresh=1"]`)),
		chromedp.Click(chromedp.CSS(`a[href="/play/ricart-agrawala?fresh=1"]`)))
	ready(t, ctx)
	// Three processes, so that the explorer may run in the browser (Run setup).
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`(() => {
		document.querySelector(".setup details").open = true;
		document.getElementById("setup-form").elements.nodes.value = "3";
		document.querySelector("#setup-form button[type=submit]").click();
	})()`))
	waitFor(t, ctx, `document.querySelectorAll("#view g.node").length === 3`)

	run(t, ctx, chromedp.Click(chromedp.CSS(`#rules-edit`)))
	waitFor(t, ctx, `!document.getElementById("rules-editor").hidden && document.getElementById("rules-source").value.includes("def older(")`)
	if n := eval[int](t, ctx, `document.querySelectorAll("#code-hl .t-kw").length`); n < 50 {
		t.Fatalf("the source is not highlighted: %d keywords marked", n)
	}
	// Select the tie-break and type over it.
	const tie = " or (s.ts == m.ts and ctx.self_id < ctx.id(m.sender))"
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`(() => {
		const ta = document.getElementById("rules-source");
		const at = ta.value.indexOf(`+"`"+tie+"`"+`);
		ta.focus();
		ta.setSelectionRange(at, at + `+"`"+tie+"`"+`.length);
	})()`), chromedp.SendKeys(`#rules-source`, "  # ties: nobody wins"))
	src := eval[string](t, ctx, `document.getElementById("rules-source").value`)
	if strings.Contains(src, tie) || !strings.Contains(src, "return s.ts < m.ts  # ties: nobody wins") {
		t.Fatalf("the edit did not take: %q", src[strings.Index(src, "def older("):][:160])
	}
	run(t, ctx, chromedp.Click(chromedp.CSS(`#rules-run`)))
	waitFor(t, ctx, `document.getElementById("rules-status").textContent === "Running your rules."`)

	run(t, ctx, chromedp.Click(chromedp.CSS(`#rules-check`)))
	waitFor(t, ctx, `document.getElementById("explore-dialog").open && document.getElementById("explore-dialog").dataset.state !== "running"`)
	verdict := eval[string](t, ctx, `document.getElementById("explore-verdict").textContent`)
	if state := eval[string](t, ctx, `document.getElementById("explore-dialog").dataset.state`); state != "violation" || !strings.Contains(verdict, "Mutual exclusion is broken") {
		t.Fatalf("check: %s: %s", state, verdict)
	}
	run(t, ctx, chromedp.Click(chromedp.CSS(`#explore-open-cx`)))
	waitFor(t, ctx, `location.pathname.startsWith("/r/v3.ricart-agrawala.")`)
	ready(t, ctx)
	waitFor(t, ctx, `[...document.querySelectorAll("#log li.violation")].some((li) => li.textContent.includes("mutual-exclusion: P1 entered the CS while P0 is in it"))`)
	// The counterexample runs the edited rules, and the editor there starts from them.
	run(t, ctx, chromedp.Click(chromedp.CSS(`#rules-edit`)))
	waitFor(t, ctx, `document.getElementById("rules-source").value.includes("return s.ts < m.ts  # ties: nobody wins")`)
	screenshot(t, ctx, "rules-counterexample.png")
}

// A challenge in the page: its goal shows, a syntax error is shown at its line while
// the run keeps its rules, and Check on the fixed rules says the goal is met.
func TestChallengeShowsGoalErrorsAndVerdict(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 800)
	run(t, ctx, chromedp.Navigate(ts.URL+"/s/challenge-ra-tie-break"))
	ready(t, ctx)
	run(t, ctx, chromedp.Click(chromedp.CSS(`#rules-edit`)))
	waitFor(t, ctx, `!document.getElementById("challenge").hidden && document.getElementById("challenge-goal").textContent.includes("fix RH1")`)
	if src := eval[string](t, ctx, `document.getElementById("rules-source").value`); !strings.Contains(src, "return s.ts < tj\n") {
		t.Fatal("the editor does not start from the challenge's rules")
	}
	// A colon too few: refused at its line, the run goes on with the rules it had.
	line := eval[int](t, ctx, `(() => {
		const ta = document.getElementById("rules-source");
		const at = ta.value.indexOf("def on_release(ctx, s):") + "def on_release(ctx, s)".length;
		ta.focus();
		ta.setSelectionRange(at, at + 1);
		return ta.value.slice(0, at).split("\n").length;
	})()`)
	run(t, ctx, chromedp.SendKeys(`#rules-source`, " "), chromedp.Click(chromedp.CSS(`#rules-run`)))
	waitFor(t, ctx, `!document.getElementById("rules-error").hidden`)
	errText := eval[string](t, ctx, `document.getElementById("rules-error").textContent`)
	marked := eval[int](t, ctx, `[...document.querySelectorAll("#code-hl .hl-line")].findIndex((d) => d.classList.contains("hl-error")) + 1`)
	if !strings.HasPrefix(errText, "Line ") || marked == 0 || marked < line-1 || marked > line+1 {
		t.Fatalf("error %q marked at line %d, the edit is at line %d", errText, marked, line)
	}
	if status := eval[string](t, ctx, `document.getElementById("rules-status").textContent`); !strings.Contains(status, "keeps its rules") {
		t.Fatalf("status %q", status)
	}
	// A source that fails while it runs: shown at its line, the rules before come back.
	failLine := eval[int](t, ctx, `(() => {
		const ta = document.getElementById("rules-source");
		ta.value = document.getElementById("rules-source").value.replace("def on_release(ctx, s) \n", "def on_release(ctx, s):\n")
			.replace("    s.ts = s.clock\n", "    s.ts = s.clock // (ctx.n - ctx.n)\n");
		ta.dispatchEvent(new Event("input"));
		return ta.value.slice(0, ta.value.indexOf("s.ts = s.clock //")).split("\n").length;
	})()`)
	run(t, ctx, chromedp.Click(chromedp.CSS(`#rules-run`)))
	waitFor(t, ctx, `document.getElementById("rules-status").textContent === "Running your rules."`)
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`document.dispatchEvent(new CustomEvent("pg:command", {detail: {type: "play"}}))`))
	waitFor(t, ctx, `document.getElementById("rules-status").textContent.includes("back on the rules before them")`)
	if e := eval[string](t, ctx, `document.getElementById("rules-error").textContent`); !strings.HasPrefix(e, fmt.Sprintf("Line %d: ", failLine)) || !strings.Contains(e, "division by zero") {
		t.Fatalf("runtime error shown as %q, want it at line %d", e, failLine)
	}
	// The run is back on the challenge's rules (no stop), and the editor keeps the text.
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`document.dispatchEvent(new CustomEvent("pg:command", {detail: {type: "play"}}))`))
	waitFor(t, ctx, `Number(document.getElementById("main").dataset.step) > 5`)

	// The fix (the template), then Check: the goal is met.
	run(t, ctx, chromedp.Click(chromedp.CSS(`#rules-reset`)), chromedp.Click(chromedp.CSS(`#rules-check`)))
	waitFor(t, ctx, `document.getElementById("explore-dialog").open && document.getElementById("explore-dialog").dataset.state !== "running"`)
	run(t, ctx, chromedp.Click(chromedp.CSS(`#explore-cancel`)))
	waitFor(t, ctx, `document.getElementById("challenge-verdict").dataset.met === "yes"`)
	if v := eval[string](t, ctx, `document.getElementById("challenge-verdict").textContent`); !strings.HasPrefix(v, "Goal met: every run") {
		t.Fatalf("verdict %q", v)
	}
}

// After Run, the pseudocode panel shows the edited rules, not those the page was
// drawn with: a renamed rule with its new pseudocode, lit when the edited run fires
// it, and a rule's edited line; the narration says the edited rule's words, and the
// inspector shows a variable the edit added.
func TestEditedRulesShowInThePseudocodePanel(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 800)
	run(t, ctx, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?fresh=1"))
	ready(t, ctx)
	if n := eval[int](t, ctx, `document.querySelectorAll('#code-scroll .rule[data-rule="RA1"]').length`); n != 1 {
		t.Fatalf("the page's own panel has %d RA1 rules", n)
	}
	run(t, ctx, chromedp.Click(chromedp.CSS(`#rules-edit`)))
	waitFor(t, ctx, `document.getElementById("rules-source").value.includes("def on_request(")`)
	// RA1 becomes "AS-1" (the project's form: not in the notes), with its own line and
	// words; RH1 keeps its label with an edited line.
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`(() => {
		const ta = document.getElementById("rules-source");
		ta.value = ta.value
			.replace('rule("RA1", notes = "000", group = "Asking for the CS",\n         lines = ["state := REQUESTED", "T := clock   // the timestamp of this request"],\n         says = "wants the CS and stamps its request with its clock")',
				'rule("AS-1", group = "Asking, edited",\n         lines = ["state := REQUESTED   // edited in the browser"],\n         says = "asks for the CS in edited words")')
			.replace('ctx.rule("RA1")', 'ctx.rule("AS-1")\n    s.asked += 1')
			.replace('"    queue j\'s request, do not answer yet"', '"    keep j waiting (edited)"')
			.replace('    var("deferred", "ids whose requests wait for this process to leave the CS"),', '    var("deferred", "ids whose requests wait for this process to leave the CS"),\n    var("asked", "times it asked (edited)"),')
			.replace('"replies": 0, "deferred": []}', '"replies": 0, "deferred": [], "asked": 0}')
			.replace('        ("deferred", [ctx.id(j) for j in s.deferred]),', '        ("deferred", [ctx.id(j) for j in s.deferred]),\n        ("asked", s.asked),');
		ta.dispatchEvent(new Event("input"));
	})()`))
	if src := eval[string](t, ctx, `document.getElementById("rules-source").value`); !strings.Contains(src, `ctx.rule("AS-1")`) || !strings.Contains(src, "keep j waiting (edited)") ||
		!strings.Contains(src, `rule("AS-1"`) || strings.Count(src, "asked") != 6 {
		t.Fatal("the edit did not take")
	}
	run(t, ctx, chromedp.Click(chromedp.CSS(`#rules-run`)))
	waitFor(t, ctx, `document.getElementById("rules-status").textContent === "Running your rules."`)
	waitFor(t, ctx, `document.getElementById("code-scroll").dataset.rules === "run"`)
	run(t, ctx, chromedp.Click(chromedp.CSS(`#rules-close`)))

	panel := eval[map[string]any](t, ctx, `(() => {
		const p = document.getElementById("code-scroll");
		const as = p.querySelector('.rule[data-rule="AS-1"]');
		const rh = p.querySelector('.rule[data-rule="RH1"]');
		return {
			ra1: p.querySelectorAll('.rule[data-rule="RA1"]').length,
			asLines: as ? [...as.querySelectorAll(".ln")].map((l) => l.textContent).join("|") : "",
			asOurs: as ? as.classList.contains("ours") : false,
			asGroup: as ? as.closest(".rule-group").querySelector("h3").textContent : "",
			rhLines: rh ? [...rh.querySelectorAll(".ln")].map((l) => l.textContent).join("|") : "",
			visible: p.offsetParent !== null,
		};
	})()`)
	if panel["ra1"].(float64) != 0 || panel["asLines"] != "state := REQUESTED   // edited in the browser" || panel["asOurs"] != true ||
		panel["asGroup"] != "Asking, edited" || !strings.Contains(panel["rhLines"].(string), "keep j waiting (edited)") || panel["visible"] != true {
		t.Fatalf("the panel after Run: %v", panel)
	}
	// A request: P0 fires the edited rule, which the panel lights and the log words.
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`document.dispatchEvent(new CustomEvent("pg:command", {detail: {type: "act", do: "request", node: 0}}))`))
	waitFor(t, ctx, `document.querySelector('#code-scroll .rule[data-rule="AS-1"]').classList.contains("lit")`)
	if tag := eval[string](t, ctx, `document.querySelector('#code-scroll .rule[data-rule="AS-1"] .tags').textContent`); tag != "P0" {
		t.Fatalf("the lit rule's tag is %q, want P0", tag)
	}
	waitFor(t, ctx, `[...document.querySelectorAll("#log li")].some((li) => li.textContent.includes("asks for the CS in edited words"))`)
	// The edited source's new variable is a column of the inspector, P0's counting 1.
	waitFor(t, ctx, `[...document.querySelectorAll("#vars thead th")].map((th) => th.textContent).join(",") === "process,state,clock,ts,replied,deferred,asked"`)
	waitFor(t, ctx, `document.querySelector('#vars tbody tr[data-id="0"] td:last-child')?.textContent === "1"`)
	screenshot(t, ctx, "rules-edited-panel.png")
}

// The notes' exercise in the page: on three processes Check finds Maekawa's deadlock;
// the student turns the rules into the deadlock-free variant (INQUIRE, RELINQUISH and
// FAILED on, whatever the run's params say), runs them, and Check proves every
// property.
func TestEditedMaekawaBecomesDeadlockFree(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 800)
	run(t, ctx, chromedp.Navigate(ts.URL+"/play/maekawa?fresh=1"))
	ready(t, ctx)
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`(() => {
		document.querySelector(".setup details").open = true;
		document.getElementById("setup-form").elements.nodes.value = "3";
		document.querySelector("#setup-form button[type=submit]").click();
	})()`))
	waitFor(t, ctx, `document.querySelectorAll("#view g.node").length === 3`)

	run(t, ctx, chromedp.Click(chromedp.CSS(`#rules-edit`)))
	waitFor(t, ctx, `!document.getElementById("rules-editor").hidden && document.getElementById("rules-source").value.includes("def contend(")`)
	run(t, ctx, chromedp.Click(chromedp.CSS(`#rules-check`)))
	waitFor(t, ctx, `document.getElementById("explore-dialog").open && document.getElementById("explore-dialog").dataset.state !== "running"`)
	if state, verdict := eval[string](t, ctx, `document.getElementById("explore-dialog").dataset.state`),
		eval[string](t, ctx, `document.getElementById("explore-verdict").textContent`); state != "violation" || !strings.Contains(verdict, "Deadlock freedom is broken") {
		t.Fatalf("check of the notes' rules: %s: %s", state, verdict)
	}
	run(t, ctx, chromedp.Click(chromedp.CSS(`#explore-cancel`)))

	const variant = `setup.params.variant == "deadlock-free"`
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`(() => {
		const ta = document.getElementById("rules-source");
		const at = ta.value.indexOf(`+"`"+variant+"`"+`);
		ta.focus();
		ta.setSelectionRange(at, at + `+"`"+variant+"`"+`.length);
	})()`), chromedp.SendKeys(`#rules-source`, "True"))
	if src := eval[string](t, ctx, `document.getElementById("rules-source").value`); !strings.Contains(src, `"df": True,`) {
		t.Fatalf("the edit did not take: %q", src[strings.Index(src, "def init("):][:200])
	}
	run(t, ctx, chromedp.Click(chromedp.CSS(`#rules-run`)))
	waitFor(t, ctx, `document.getElementById("rules-status").textContent === "Running your rules."`)
	run(t, ctx, chromedp.Click(chromedp.CSS(`#rules-check`)))
	waitFor(t, ctx, `document.getElementById("explore-dialog").open && document.getElementById("explore-dialog").dataset.state !== "running"`)
	state := eval[string](t, ctx, `document.getElementById("explore-dialog").dataset.state`)
	verdict := eval[string](t, ctx, `document.getElementById("explore-verdict").textContent`)
	if state != "ok" || !strings.Contains(verdict, "Every property holds") || !strings.Contains(verdict, "deadlock") {
		t.Fatalf("check of the edited rules: %s: %s", state, verdict)
	}
	screenshot(t, ctx, "rules-maekawa-deadlock-free.png")
}

// An algorithm written from scratch: "New algorithm" in the catalogue opens the
// mutual exclusion skeleton, the page heads it with its own title marked as the
// student's, a renamed title shows once it runs, the explorer's summary and the link's
// page call it by that title, never by the page's algorithm.
func TestNewAlgorithmShowsItsOwnTitle(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 800)
	run(t, ctx, chromedp.Navigate(ts.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(`p.new-algorithm[data-new="mutex"] a.open`)),
		chromedp.Click(chromedp.CSS(`p.new-algorithm[data-new="mutex"] a.open`)))
	ready(t, ctx)
	waitFor(t, ctx, `document.getElementById("algo-title").textContent === "My mutual exclusion" && !document.getElementById("own-tag").hidden`)
	if title := eval[string](t, ctx, `document.title`); !strings.HasPrefix(title, "My mutual exclusion") {
		t.Fatalf("window title %q", title)
	}

	run(t, ctx, chromedp.Evaluate[chromedp.Void](`(() => {
		document.querySelector(".setup details").open = true;
		document.getElementById("setup-form").elements.nodes.value = "3";
		document.querySelector("#setup-form button[type=submit]").click();
	})()`))
	waitFor(t, ctx, `document.querySelectorAll("#view g.node").length === 3`)
	run(t, ctx, chromedp.Click(chromedp.CSS(`#rules-edit`)))
	waitFor(t, ctx, `document.getElementById("rules-source").value.includes('name = "my-mutex"')`)
	const old = `title = "My mutual exclusion"`
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`(() => {
		const ta = document.getElementById("rules-source");
		const at = ta.value.indexOf(`+"`"+old+"`"+`);
		ta.focus();
		ta.setSelectionRange(at, at + `+"`"+old+"`"+`.length);
	})()`), chromedp.SendKeys(`#rules-source`, `title = "Keeper mutex"`))
	run(t, ctx, chromedp.Click(chromedp.CSS(`#rules-run`)))
	waitFor(t, ctx, `document.getElementById("rules-status").textContent === "Running your rules."`)
	waitFor(t, ctx, `document.getElementById("algo-title").textContent === "Keeper mutex" && !document.getElementById("own-tag").hidden && document.title.startsWith("Keeper mutex")`)

	run(t, ctx, chromedp.Click(chromedp.CSS(`#rules-check`)))
	waitFor(t, ctx, `document.getElementById("explore-dialog").open && document.getElementById("explore-dialog").dataset.state !== "running"`)
	state := eval[string](t, ctx, `document.getElementById("explore-dialog").dataset.state`)
	searched := eval[string](t, ctx, `document.getElementById("explore-algorithm").textContent`)
	if state != "ok" || searched != "Searched: Keeper mutex (my-mutex), your algorithm: not one of the notes'." {
		t.Fatalf("check: %s, %q", state, searched)
	}
	run(t, ctx, chromedp.Click(chromedp.CSS(`#explore-cancel`)))

	path := eval[string](t, ctx, `fetch("/api/sessions/" + document.getElementById("main").dataset.session + "/link").then((r) => r.json()).then((l) => l.path)`,
		chromedp.EvalAwaitPromise)
	if !strings.HasPrefix(path, "/r/v3.central.") {
		t.Fatalf("link %q", path)
	}
	run(t, ctx, chromedp.Navigate(ts.URL+path))
	ready(t, ctx)
	if h1, own := eval[string](t, ctx, `document.getElementById("algo-title").textContent`), eval[bool](t, ctx, `!document.getElementById("own-tag").hidden`); h1 != "Keeper mutex" || !own {
		t.Fatalf("the link's page: heading %q, marked as the student's %v", h1, own)
	}
	if title := eval[string](t, ctx, `document.title`); !strings.HasPrefix(title, "Keeper mutex") {
		t.Fatalf("the link's window title %q", title)
	}
	screenshot(t, ctx, "new-algorithm.png")
}
