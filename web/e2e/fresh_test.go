package e2e

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// Opening an algorithm from the catalogue again starts a fresh run
// (not the old one at its last step, where Play does nothing), a reload still resumes
// the run on screen, and Run setup writes its settings into the address, which a
// reload then runs.
func TestCatalogueOpensAFreshRunThatAReloadResumes(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 720)
	const where = `document.getElementById("main").dataset.session + "/" + document.getElementById("main").dataset.step`
	open := func() {
		t.Helper()
		run(t, ctx, chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`.card[data-slug="ricart-agrawala"] h3 a`)),
			chromedp.Click(chromedp.CSS(`.card[data-slug="ricart-agrawala"] h3 a`)))
		ready(t, ctx)
		if got := eval[string](t, ctx, `location.pathname + location.search`); got != "/play/ricart-agrawala" {
			t.Fatalf("the catalogue's link led to %s", got)
		}
	}
	open()
	clickProcessAction(t, ctx, 2, "request")
	for range 3 {
		eval[float64](t, ctx, stepJS, chromedp.EvalAwaitPromise)
	}
	first := eval[string](t, ctx, where)

	run(t, ctx, chromedp.Reload())
	ready(t, ctx)
	if got := eval[string](t, ctx, where); got != first {
		t.Fatalf("the reload showed %s, want the run at %s", got, first)
	}

	open()
	second := eval[string](t, ctx, where)
	if second == first || eval[string](t, ctx, `document.getElementById("main").dataset.step`) != "0" {
		t.Fatalf("the catalogue opened %s again, after %s: not a fresh run", second, first)
	}
	screenshot(t, ctx, "catalogue-fresh-run.png")

	// The form takes as many processes as the address does (128), not 32 as it did.
	if !eval[bool](t, ctx, `(() => { const i = document.getElementById("setup-form").elements.nodes; const was = i.value; i.value = "40"; const ok = i.checkValidity() && i.max === "128"; i.value = was; return ok; })()`) {
		t.Fatal("Run setup refuses 40 processes")
	}
	submitSetup(t, ctx, `f.nodes.value = "4"; f.seed.value = "7";`)
	waitFor(t, ctx, `(() => { const q = new URLSearchParams(location.search); return q.get("n") === "4" && q.get("seed") === "7"; })()`)
	waitFor(t, ctx, `document.querySelectorAll("#view g.node").length === 4`)
	screenshot(t, ctx, "setup-in-address.png")
	run(t, ctx, chromedp.Reload())
	ready(t, ctx)
	if n := eval[int](t, ctx, `document.querySelectorAll("#view g.node").length`); n != 4 {
		t.Fatalf("after a reload of the setup's address the run has %d processes", n)
	}
	if seed := eval[string](t, ctx, `document.getElementById("setup-form").elements.seed.value`); seed != "7" {
		t.Fatalf("after a reload of the setup's address the seed is %s", seed)
	}
}
