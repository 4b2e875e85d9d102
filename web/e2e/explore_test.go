package e2e

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// exploreFromPage clicks Explore and waits for the verdict.
func exploreFromPage(t *testing.T, path string) (string, context.Context) {
	t.Helper()
	ts := server(t)
	c := tab(t, ts.URL, 1280, 800)
	run(t, c, chromedp.Navigate(ts.URL+path))
	ready(t, c)
	waitFor(t, c, `!document.getElementById("explore-open").disabled`)
	run(t, c, chromedp.Click(chromedp.CSS(`#explore-open`)))
	waitFor(t, c, `document.getElementById("explore-dialog").open && document.getElementById("explore-dialog").dataset.state !== "running"`)
	return ts.URL, c
}

func TestExploreShowsMaekawaDeadlockAndOpensIt(t *testing.T) {
	needBrowser(t)
	base, ctx := exploreFromPage(t, "/play/maekawa?n=3")
	state := eval[string](t, ctx, `document.getElementById("explore-dialog").dataset.state`)
	verdict := eval[string](t, ctx, `document.getElementById("explore-verdict").textContent`)
	if state != "violation" || !strings.Contains(verdict, "Deadlock freedom is broken") || !strings.Contains(verdict, "wait-for cycle") {
		t.Fatalf("state %q, verdict %q", state, verdict)
	}
	steps := eval[int](t, ctx, `document.querySelectorAll("#explore-path li").length`)
	href := eval[string](t, ctx, `(() => { const a = document.getElementById("explore-open-cx"); return a.hidden ? "" : a.getAttribute("href"); })()`)
	if steps != 6 || !strings.HasPrefix(href, "/r/") {
		t.Fatalf("%d steps, link %q", steps, href)
	}
	// The counterexample opens in the playground at the step where the monitor reports
	// the deadlock, with the violation in the narration.
	run(t, ctx, chromedp.Click(chromedp.CSS(`#explore-open-cx`)))
	waitFor(t, ctx, `location.pathname.startsWith("/r/")`)
	ready(t, ctx)
	if got := eval[string](t, ctx, `location.href`); !strings.HasPrefix(got, base+"/r/") {
		t.Fatalf("at %s", got)
	}
	waitFor(t, ctx, `[...document.querySelectorAll("#log li.violation")].some((li) => li.textContent.includes("deadlock") || li.textContent.includes("cycle"))`)
	step := eval[string](t, ctx, `document.getElementById("main").dataset.step`)
	if n, err := strconv.Atoi(step); err != nil || n < 6 {
		t.Fatalf("the counterexample opened at step %q", step)
	}
}

func TestExploreSaysRicartAgrawalaHolds(t *testing.T) {
	needBrowser(t)
	_, ctx := exploreFromPage(t, "/play/ricart-agrawala?n=3")
	state := eval[string](t, ctx, `document.getElementById("explore-dialog").dataset.state`)
	states := eval[string](t, ctx, `document.getElementById("explore-dialog").dataset.states`)
	text := eval[string](t, ctx, `document.getElementById("explore-dialog").textContent`)
	// 265: the reductions Ricart-Agrawala declares (3 074 states in full).
	if state != "ok" || states != "265" {
		t.Fatalf("state %q, states %q: %s", state, states, text)
	}
	for _, want := range []string{"Every property holds", "mutual exclusion", "265 states", "depth 18", "every process asks for the CS once"} {
		if !strings.Contains(text, want) {
			t.Errorf("the dialog does not say %q:\n%s", want, text)
		}
	}
	// Closing the dialog leaves the page as it was: no counterexample link.
	if eval[bool](t, ctx, `!document.getElementById("explore-open-cx").hidden`) {
		t.Error("a counterexample link for a property that holds")
	}
	run(t, ctx, chromedp.Click(chromedp.CSS(`#explore-cancel`)))
	waitFor(t, ctx, `!document.getElementById("explore-dialog").open`)
}

func TestExploreIsOffForLargeN(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 800)
	run(t, ctx, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?n=6"))
	ready(t, ctx)
	waitFor(t, ctx, `document.getElementById("explore-open").dataset.reason === "too many processes"`)
	if !eval[bool](t, ctx, `document.getElementById("explore-open").disabled`) {
		t.Fatal("Explore is on for 6 processes")
	}
	if title := eval[string](t, ctx, `document.getElementById("explore-open").title`); !strings.Contains(title, "at most 4") {
		t.Fatalf("title %q does not say why", title)
	}
}
