package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/scenarios"
)

// Play on a free run starts something: a message moves within a second of the click
// (the default workload when nothing is scheduled), and the status says what to do.
// Every registered algorithm, so that an algorithm added is played in Chromium too.
func TestPlayOnEveryFreeRunMovesAMessage(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	for _, slug := range algorithms.Slugs() {
		t.Run(slug, func(t *testing.T) {
			ctx := isolatedTab(t, ts.URL, 1280, 800)
			run(t, ctx, chromedp.Navigate(ts.URL+"/play/"+slug+"?fresh=1"))
			ready(t, ctx)
			status := eval[string](t, ctx, `document.getElementById("status").textContent`)
			// A quiet free run tells a first-time student what to press.
			quiet := eval[bool](t, ctx, `document.getElementById("status").dataset.state === "quiet"`)
			if want := "Ready: press Play to start"; quiet && !strings.HasPrefix(status, want) {
				t.Errorf("status %q, want it to start %q", status, want)
			}
			// A message moves within 1 s of the run's time (2 time units at 1x): waited
			// for on the page, then its send time read, so a busy machine cannot fail it.
			run(t, ctx, chromedp.Click(chromedp.CSS("#btn-play")))
			waitFor(t, ctx, `document.querySelectorAll("#view g.msg").length > 0 && document.querySelector("#log li.net .t") !== null`)
			sent := eval[string](t, ctx, `document.querySelector("#log li.net .t").textContent`)
			var at int
			if _, err := fmt.Sscanf(sent, "t=%d", &at); err != nil || at > 2 {
				t.Fatalf("Play on /play/%s: the first message was sent at %q, want within 1 s at 1x (t <= 2)", slug, sent)
			}
			if quiet {
				// The narration says the moves are the default workload's.
				waitFor(t, ctx, `document.querySelectorAll("#log .workload").length > 0`)
			}
		})
	}
}

type guideState struct {
	Step    int
	Held    bool
	Playing bool
	Current bool
	Text    string
}

const guideNow = `(() => {
  const g = document.getElementById("guide"), c = document.getElementById("caption");
  return { Step: Number(document.getElementById("main").dataset.step), Held: g.dataset.held === "true",
    Playing: document.getElementById("status").dataset.state === "playing",
    Current: c.dataset.current === "true" && !c.hidden, Text: c.textContent };
})()`

// A curated scenario played at 1x holds at every caption until the reader continues;
// the explanation shows first, beside the stage; a caption shows at its step only and
// the history takes the reader back to it.
func TestCuratedScenarioHoldsAtEveryCaption(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	const name = "ricart-agrawala-concurrent"
	sc, ok := scenarios.Lookup(name)
	if !ok || len(sc.Captions) < 3 {
		t.Fatalf("%s has no captions to test", name)
	}
	ctx := isolatedTab(t, ts.URL, 1280, 800)
	run(t, ctx, chromedp.Navigate(ts.URL+"/s/"+name+"?fresh=1"))
	ready(t, ctx)
	// The explanation first, and not over the stage's drawing.
	waitFor(t, ctx, `document.getElementById("caption").textContent === `+jsString(sc.About))
	if over := eval[bool](t, ctx, `(() => {
	  const g = document.getElementById("guide").getBoundingClientRect();
	  const v = document.getElementById("view").getBoundingClientRect();
	  return g.top < v.bottom - 1 && g.bottom > v.top + 1 && g.left < v.right && g.right > v.left;
	})()`); over {
		t.Fatal("the explanation covers the stage")
	}
	seen := map[string]int{}
	checks, answer := 0, ""
	run(t, ctx, chromedp.Click(chromedp.CSS("#btn-play")))
	for len(seen) < len(sc.Captions) {
		waitFor(t, ctx, `(() => {
		  const g = document.getElementById("guide");
		  return g.dataset.held === "true" && document.getElementById("caption").dataset.current === "true" &&
		    document.getElementById("status").dataset.state !== "playing" && document.getElementById("main").dataset.step === g.dataset.step;
		})()`)
		g := eval[guideState](t, ctx, guideNow)
		// Still held a while later: the run waits for the reader.
		later := eval[guideState](t, ctx, `new Promise((r) => setTimeout(() => r(`+guideNow+`), 800))`, chromedp.EvalAwaitPromise)
		if later.Step != g.Step || later.Playing || !later.Held {
			t.Fatalf("held at step %d, then step %d (playing %v): the run did not wait", g.Step, later.Step, later.Playing)
		}
		fresh := 0
		for _, c := range sc.Captions {
			if strings.Contains(g.Text, c.Text) {
				if _, ok := seen[c.Text]; !ok {
					seen[c.Text] = g.Step
					fresh++
				}
			}
		}
		if fresh == 0 {
			t.Fatalf("held at step %d on %q, a caption already read", g.Step, g.Text)
		}
		if len(seen) == len(sc.Captions) {
			break
		}
		// A self-check offered here: predict, and the answer comes after the step.
		waitFor(t, ctx, fmt.Sprintf(`document.getElementById("guide").dataset.checked === "%d"`, g.Step))
		if a := eval[string](t, ctx, `document.getElementById("selfcheck-answer")?.textContent || ""`); a != "" {
			answer = a
		}
		if eval[bool](t, ctx, `!document.getElementById("selfcheck").hidden && document.getElementById("selfcheck").dataset.state === "open"`) {
			checks++
			run(t, ctx, chromedp.Click(chromedp.CSS("#selfcheck .selfcheck-choice")))
		}
		run(t, ctx, chromedp.Click(chromedp.CSS("#caption-continue")))
	}
	if checks == 0 {
		t.Fatal("no self-check was offered")
	}
	if !strings.HasPrefix(answer, "Answer: ") || !strings.Contains(answer, "Your answer") {
		t.Fatalf("the self-check's answer reads %q", answer)
	}
	// A caption shows at its step only: the step after the first caption's has none.
	first := seen[sc.Captions[0].Text]
	cmd(t, ctx, fmt.Sprintf(`{ type: "seek", step: %d }`, first+1))
	waitFor(t, ctx, fmt.Sprintf(`document.getElementById("main").dataset.step === "%d"`, first+1))
	if g := eval[guideState](t, ctx, guideNow); g.Current {
		t.Fatalf("step %d still shows %q", first+1, g.Text)
	}
	// The history goes back to a caption.
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById("caption-history").open = true`),
		chromedp.Click(chromedp.CSS("#caption-list li:first-child .caption-back")))
	waitFor(t, ctx, fmt.Sprintf(`document.getElementById("main").dataset.step === "%d" && document.getElementById("caption").textContent === %s`, first, jsString(sc.Captions[0].Text)))
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// editorLines is how many source lines the rules editor shows whole.
const editorLines = `(() => {
  const ta = document.getElementById("rules-source");
  const lh = parseFloat(getComputedStyle(ta).lineHeight);
  const r = ta.getBoundingClientRect();
  const bottom = Math.min(r.bottom, window.innerHeight);
  return Math.floor((bottom - r.top - 12) / lh);
})()`

// The rules editor shows at least 20 lines at 1280x800, in a challenge and on a
// free run.
func TestRulesEditorShowsTwentyLines(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	for _, path := range []string{"/s/challenge-ra-tie-break", "/play/ricart-agrawala"} {
		t.Run(strings.TrimPrefix(path, "/"), func(t *testing.T) {
			ctx := isolatedTab(t, ts.URL, 1280, 800)
			run(t, ctx, chromedp.Navigate(ts.URL+path+"?fresh=1"))
			ready(t, ctx)
			run(t, ctx, chromedp.Click(chromedp.CSS("#rules-edit")))
			waitFor(t, ctx, `!document.getElementById("rules-editor").hidden && document.getElementById("rules-source").value.length > 0`)
			if n := eval[int](t, ctx, editorLines); n < 20 {
				screenshot(t, ctx, "editor-"+strings.ReplaceAll(strings.TrimPrefix(path, "/"), "/", "-")+".png")
				t.Fatalf("%s: the editor shows %d lines, want at least 20", path, n)
			}
		})
	}
}

// Check at the page's defaults (Ricart-Agrawala, five processes) with the tie-break
// broken gives a verdict, saying which size it checked, instead of hitting the
// server's memory limit.
func TestCheckAtThePageDefaultsGivesAVerdict(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := isolatedTab(t, ts.URL, 1280, 800)
	run(t, ctx, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?fresh=1"))
	ready(t, ctx)
	if n := eval[int](t, ctx, `document.querySelectorAll("#view g.node").length`); n != 5 {
		t.Fatalf("the page's default has %d processes, want 5", n)
	}
	run(t, ctx, chromedp.Click(chromedp.CSS(`#rules-edit`)))
	waitFor(t, ctx, `!document.getElementById("rules-editor").hidden && document.getElementById("rules-source").value.includes("def older(")`)
	const tie = " or (s.ts == m.ts and ctx.self_id < ctx.id(m.sender))"
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`(() => {
		const ta = document.getElementById("rules-source");
		ta.value = ta.value.replace(`+"`"+tie+"`"+`, "  # ties: nobody wins");
		ta.dispatchEvent(new Event("input"));
	})()`))
	run(t, ctx, chromedp.Click(chromedp.CSS(`#rules-check`)))
	waitFor(t, ctx, `document.getElementById("explore-dialog").open && document.getElementById("explore-dialog").dataset.state !== "running"`)
	state := eval[string](t, ctx, `document.getElementById("explore-dialog").dataset.state`)
	verdict := eval[string](t, ctx, `document.getElementById("explore-verdict").textContent`)
	resized := eval[string](t, ctx, `document.getElementById("explore-resized").hidden ? "" : document.getElementById("explore-resized").textContent`)
	if state != "violation" || !strings.Contains(verdict, "Mutual exclusion is broken") {
		t.Fatalf("check: %s: %s (%s)", state, verdict, resized)
	}
	if !strings.HasPrefix(resized, "Checked with ") || !strings.Contains(resized, "instead of 5") {
		t.Fatalf("the dialog does not say which size it checked: %q", resized)
	}
	screenshot(t, ctx, "check-defaults.png")
	// The template's rules hold, at the size that fits.
	run(t, ctx, chromedp.Click(chromedp.CSS(`#explore-cancel`)), chromedp.Click(chromedp.CSS(`#rules-reset`)), chromedp.Click(chromedp.CSS(`#rules-check`)))
	waitFor(t, ctx, `document.getElementById("explore-dialog").open && document.getElementById("explore-dialog").dataset.state === "ok"`)
	if v := eval[string](t, ctx, `document.getElementById("explore-verdict").textContent`); !strings.HasPrefix(v, "Every property holds with 3 processes") {
		t.Fatalf("the template's verdict: %q", v)
	}
}

// The presenter's Scenarios menu moves the lecture: three followers end up on the new
// run, with its title and explanation, and the join code stays. A question open turns
// a follower's Fork off, with the reason; after Reveal the follower's answer is said in
// words. The presenter's header offers no Explore saying "at most 0 processes".
func TestPresenterSwitchingScenariosKeepsTheFollowers(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	pres := isolatedTab(t, ts.URL, 1280, 720)
	run(t, pres, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?n=4&fresh=1"))
	ready(t, pres)
	run(t, pres, chromedp.Click(chromedp.CSS("#lecture-start")), chromedp.WaitVisible(chromedp.CSS("#lecture-code")))
	waitFor(t, pres, `location.pathname.startsWith("/lecture/present/") && document.getElementById("main")?.dataset.ready === "true"`)
	waitFor(t, pres, `/^[A-Z0-9]{3} [A-Z0-9]{3}$/.test(document.getElementById("lecture-code")?.textContent || "")`)
	code := strings.ReplaceAll(eval[string](t, pres, `document.getElementById("lecture-code").textContent`), " ", "")
	presURL := eval[string](t, pres, `location.href`)
	if eval[bool](t, pres, `(() => { const w = document.getElementById("explore-why"); return !!w && !w.hidden && w.textContent.includes("at most 0"); })()`) {
		t.Error(`the presenter's header says "at most 0 processes"`)
	}
	var fols []context.Context
	for range 3 {
		f := isolatedTab(t, ts.URL, 1280, 720)
		run(t, f, chromedp.Navigate(ts.URL+"/l/"+code))
		ready(t, f)
		fols = append(fols, f)
	}
	waitFor(t, pres, `document.getElementById("main").dataset.followers === "3"`)

	sc, _ := scenarios.Lookup("ricart-agrawala-concurrent")
	run(t, pres, chromedp.Evaluate[chromedp.Void](`(() => {
		document.getElementById("more-btn")?.click();
		document.querySelector(".scenario-nav details").open = true;
	})()`), chromedp.Click(chromedp.CSS(`.scenario-nav a[href^="/s/ricart-agrawala-concurrent"]`)))
	titled := `document.getElementById("run-title")?.textContent === ` + jsString(sc.Title) +
		` && document.getElementById("run-about-text")?.textContent === ` + jsString(sc.About)
	waitFor(t, pres, titled)
	if got := eval[string](t, pres, `location.href`); got != presURL {
		t.Fatalf("the presenter left the lecture for %s", got)
	}
	for i, f := range fols {
		waitFor(t, f, titled)
		waitFor(t, f, `document.querySelectorAll("#view g.node").length === 3`)
		if got := eval[string](t, f, `document.getElementById("lecture-code").textContent.replace(" ", "")`); got != code {
			t.Fatalf("follower %d: the code is %q, want %q", i, got, code)
		}
	}
	// The scenario's scheduled request is what happens next: at step 0, with nothing
	// in flight, the picker asks which rule P0 fires (RA1 when its request comes).
	run(t, pres, chromedp.KeyEvent("q"))
	waitFor(t, pres, `document.getElementById("lecture-pick")?.open && [...document.querySelectorAll(".lecture-pick-item")].some((e) => e.textContent.includes("Which rule does P0 fire next?"))`)
	run(t, pres, escKey)
	waitFor(t, pres, `!document.getElementById("lecture-pick").open`)
	// The new run goes on for all: step the presenter, and every follower shows it.
	for range 4 {
		before := eval[int](t, pres, `Number(document.getElementById("main").dataset.step)`)
		run(t, pres, chromedp.KeyEvent(kb.PageDown))
		waitFor(t, pres, fmt.Sprintf(`Number(document.getElementById("main").dataset.step) > %d`, before))
	}
	for i, f := range fols {
		waitSame(t, pres, f, fmt.Sprintf("follower %d", i))
	}
	waitFor(t, pres, `document.getElementById("main").dataset.followers === "3"`)
	// A process selected: the strip, in view beside the stage, shows its lit rules.
	run(t, pres, chromedp.KeyEvent("0"))
	waitFor(t, pres, `(() => {
	  const s = document.getElementById("rulestrip"), r = s.getBoundingClientRect();
	  const want = [...document.querySelectorAll("#code-scroll .rule.lit")].map((e) => e.dataset.rule);
	  const got = [...s.querySelectorAll(".rs-rule")].map((e) => e.dataset.rule);
	  return s.dataset.selected === "0" && got.length > 0 && JSON.stringify(got) === JSON.stringify(want) && r.top >= 0 && r.bottom <= innerHeight;
	})()`)
}

// Messages per entry mid-run: while a request is still being served the panel says
// how many messages so far and how many entries, not a mean that counts the waiting
// request's messages against one entry.
func TestMetricsSayMessagesSoFarMidRun(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := isolatedTab(t, ts.URL, 1280, 800)
	run(t, ctx, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?n=5&seed=3&fresh=1"))
	ready(t, ctx)
	clickProcessAction(t, ctx, 0, "request")
	clickProcessAction(t, ctx, 1, "request")
	const cell = `(document.querySelector('#metrics tr[data-key="messages-per-entry"] td.measured')?.textContent || "")`
	stepUntil(t, ctx, `/^\d+ messages so far, 1 entry$/.test(`+cell+`)`)
	// Once both have entered, the mean: 2(N-1) = 8.
	stepUntil(t, ctx, cell+`.startsWith("8")`)
}

// /compare: an algorithm keeps its colour on every chart and whichever algorithms are
// beside it; a line that ends says why; the theory is drawn over the measured lines,
// so both show.
func TestCompareColoursEndsAndTheory(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := isolatedTab(t, ts.URL, 1280, 900)
	colour := `(() => {
	  const out = {};
	  for (const p of document.querySelectorAll("#chart-mutex-messages-per-entry polyline.measured, svg.chart polyline.measured")) {
	    const name = p.querySelector("title").textContent.replace(" (measured)", "");
	    const c = getComputedStyle(p).stroke;
	    out[name] = out[name] && out[name] !== c ? "differs" : c;
	  }
	  return out;
	})()`
	run(t, ctx, chromedp.Navigate(ts.URL+"/compare?alg=maekawa&alg=ricart-agrawala&n=3-8"), chromedp.WaitVisible(chromedp.CSS(`svg.chart`)))
	first := eval[map[string]string](t, ctx, colour)
	run(t, ctx, chromedp.Navigate(ts.URL+"/compare?alg=central&alg=lamport&alg=maekawa&n=3-4"), chromedp.WaitVisible(chromedp.CSS(`svg.chart`)))
	second := eval[map[string]string](t, ctx, colour)
	const mk = "Maekawa's voting algorithm"
	if first[mk] == "" || first[mk] == "differs" || first[mk] != second[mk] {
		t.Errorf("Maekawa's colour: %q with Ricart-Agrawala, %q with central and Lamport", first[mk], second[mk])
	}
	run(t, ctx, chromedp.Navigate(ts.URL+"/compare?alg=maekawa&alg=ricart-agrawala&n=3-8"), chromedp.WaitVisible(chromedp.CSS(`svg.chart`)))
	ends := eval[string](t, ctx, `[...document.querySelectorAll(".chart-ends li")].map((e) => e.textContent).join("\n")`)
	if !strings.Contains(ends, mk+": no value ") {
		t.Errorf("no chart says where Maekawa's line ends: %q", ends)
	}
	// The theory over the measured lines, each drawn visibly.
	if bad := eval[string](t, ctx, `[...document.querySelectorAll("svg.chart")].map((s) => {
	  const th = s.querySelector("polyline.theory"), me = s.querySelector("polyline.measured");
	  if (!th || !me) return "";
	  const on = (p) => parseFloat(getComputedStyle(p).strokeWidth) >= 2 && getComputedStyle(p).stroke !== "none" && parseFloat(getComputedStyle(p).strokeOpacity) > 0.3;
	  if (!on(th) || !on(me)) return s.id + ": a line is not drawn visibly";
	  return me.compareDocumentPosition(th) & Node.DOCUMENT_POSITION_FOLLOWING ? "" : s.id + ": the theory is under the measured lines";
	}).filter(Boolean).join("; ")`); bad != "" {
		t.Error(bad)
	}
	screenshot(t, ctx, "compare-ends.png")
}

// The catalogue: half the height it had (6,368 px at 1280 px), a path to start with,
// and each algorithm's costs as a table that reads across (the notes' formula beside
// the project's).
func TestCatalogueIsShortWithAStartPathAndCostTables(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := isolatedTab(t, ts.URL, 1280, 800)
	run(t, ctx, chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS(".card")))
	if h := eval[float64](t, ctx, `document.documentElement.scrollHeight`); h > 3184 {
		screenshot(t, ctx, "catalogue-tall.png")
		t.Errorf("the catalogue is %.0f px tall at 1280 px, want at most 3184", h)
	}
	start := eval[[]string](t, ctx, `[...document.querySelectorAll(".start-here a")].map((a) => a.getAttribute("href"))`)
	if len(start) < 4 {
		t.Fatalf("the start path has %d steps", len(start))
	}
	for _, href := range start {
		if name, ok := strings.CutPrefix(strings.TrimSuffix(href, "?fresh=1"), "/s/"); ok {
			if _, ok := scenarios.Lookup(name); !ok {
				t.Errorf("the start path links to %s, which is not a curated scenario", href)
			}
		}
	}
	// Every card's costs: a table with a head, one row per cost, three cells each.
	if bad := eval[string](t, ctx, `[...document.querySelectorAll(".card")].map((c) => {
	  const tb = c.querySelector("table.costs");
	  if (!tb) return c.dataset.slug + ": no cost table";
	  const rows = [...tb.querySelectorAll("tbody tr")];
	  if (!tb.tHead || !rows.length || rows.some((r) => r.cells.length !== 3)) return c.dataset.slug + ": a malformed cost table";
	  const size = parseFloat(getComputedStyle(tb.querySelector("tbody td")).fontSize);
	  return size >= 13 ? "" : c.dataset.slug + ": cost type " + size + " px";
	}).filter(Boolean).join("; ")`); bad != "" {
		t.Error(bad)
	}
	screenshot(t, ctx, "catalogue.png")
}

// A mistyped join code gets the real fault: the characters codes never use.
func TestJoinSaysWhichCharactersCodesNeverUse(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := isolatedTab(t, ts.URL, 1280, 800)
	for typed, want := range map[string]string{"YNX4W0": "codes never use “0”", "ABC123": "codes never use “B”, “1” and “2”"} {
		run(t, ctx, chromedp.Navigate(ts.URL+"/join?code="+typed))
		waitFor(t, ctx, `document.readyState === "complete"`)
		if text := eval[string](t, ctx, `document.querySelector("main").textContent`); !strings.Contains(text, want) || strings.Contains(text, "letters and digits") {
			t.Errorf("joining with %s: the page says %q, want %q", typed, clip(text, 300), want)
		}
	}
}

// Two requests with the same timestamp: the narration says the ids break the tie,
// never that one request is older.
func TestNarrationSaysTheIdsBreakATie(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := isolatedTab(t, ts.URL, 1280, 800)
	run(t, ctx, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?n=3&fresh=1"))
	ready(t, ctx)
	clickProcessAction(t, ctx, 0, "request")
	clickProcessAction(t, ctx, 1, "request")
	stepUntil(t, ctx, `[...document.querySelectorAll("#log li")].some((li) => li.textContent.includes("breaks the tie"))`)
	if bad := eval[string](t, ctx, `[...document.querySelectorAll("#log li")].map((li) => li.textContent).filter((s) => s.includes("is older than its own") || s.includes("its own request is older")).join(" | ")`); bad != "" {
		t.Errorf("the narration calls a tied request older: %s", bad)
	}
}

// A stall with no wait-for cycle (a crashed process's reply that never comes) is
// called a stall, not a deadlock.
func TestAStallWithoutACycleIsNotCalledADeadlock(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := isolatedTab(t, ts.URL, 1280, 800)
	run(t, ctx, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?n=3&fresh=1"))
	ready(t, ctx)
	clickProcessAction(t, ctx, 2, "crash")
	clickProcessAction(t, ctx, 0, "request")
	stepUntil(t, ctx, `document.getElementById("status").dataset.violation === "deadlock"`)
	pill := eval[string](t, ctx, `document.getElementById("status").textContent`)
	if !strings.HasPrefix(pill, "Stalled, no wait-for cycle: P0 waits") {
		t.Errorf("the status pill says %q", pill)
	}
	if log := eval[string](t, ctx, `[...document.querySelectorAll("#log li.violation")].map((li) => li.textContent).join(" | ")`); !strings.Contains(log, "stalled, no wait-for cycle") {
		t.Errorf("the narration says %q", log)
	}
}

// The space-time diagram: a step's rules are all named, in type at least 11 px, and
// the chosen event's description shows whole, its clocks included.
func TestSpacetimeNamesEveryRuleAndShowsTheClocks(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := isolatedTab(t, ts.URL, 1280, 800)
	run(t, ctx, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?n=3&fresh=1"))
	ready(t, ctx)
	clickProcessAction(t, ctx, 0, "request")
	for range 3 {
		eval[float64](t, ctx, stepJS, chromedp.EvalAwaitPromise)
	}
	openDiagram(t, ctx)
	if bad := eval[string](t, ctx, `[...document.querySelectorAll("#st-diagram .st-rule")].map((e) => {
	  const size = parseFloat(getComputedStyle(e).fontSize);
	  return e.textContent.includes("…") || size < 11 ? e.textContent + " at " + size + " px" : "";
	}).filter(Boolean).join("; ")`); bad != "" {
		t.Errorf("rule labels cut or small: %s", bad)
	}
	many := eval[[]int](t, ctx, `(() => {
	  const g = [...document.querySelectorAll("#st-diagram .st-dot")].find((d) => d.querySelectorAll(".st-rule tspan").length >= 2);
	  return g ? [Number(g.dataset.col), Number(g.dataset.p)] : [];
	})()`)
	if len(many) != 2 {
		t.Fatal("no event shows the several rules its step fired")
	}
	clickDot(t, ctx, many[0], many[1])
	waitFor(t, ctx, `document.getElementById("st-info").textContent.includes("Lamport")`)
	if cut := eval[bool](t, ctx, `(() => { const e = document.getElementById("st-info"); return e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1; })()`); cut {
		t.Errorf("the description is cut: %q", eval[string](t, ctx, `document.getElementById("st-info").textContent`))
	}
}
