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
	const tie = " or (s.ts == tj and ctx.self_id < idj)"
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`(() => {
		const ta = document.getElementById("rules-source");
		const at = ta.value.indexOf(`+"`"+tie+"`"+`);
		ta.focus();
		ta.setSelectionRange(at, at + `+"`"+tie+"`"+`.length);
	})()`), chromedp.SendKeys(`#rules-source`, "  # ties: nobody wins"))
	src := eval[string](t, ctx, `document.getElementById("rules-source").value`)
	if strings.Contains(src, tie) || !strings.Contains(src, "return s.ts < tj  # ties: nobody wins") {
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
	waitFor(t, ctx, `document.getElementById("rules-source").value.includes("return s.ts < tj  # ties: nobody wins")`)
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
