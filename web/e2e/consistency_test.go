package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// headerJS names the header's controls in order: the same on every page.
const headerJS = `[...document.querySelectorAll("header.top a.brand, header.top #theme-toggle, a.skip[href='#main']")].map((e) => e.tagName + " " + (e.getAttribute("aria-label") || e.textContent.trim())).join(" | ")`

// controlsJS names a run page's controls, in order.
const controlsJS = `[...document.querySelectorAll("#controls button, #controls input, #controls select")].map((e) => e.getAttribute("aria-label") || e.id).join(" | ")`

// Consistent navigation and identification (WCAG 3.2.3, 3.2.4): every page has the
// same skip link, home link and theme button, named alike, in the same order; every
// run page has the same run controls, named alike. Multiple ways (2.4.5): a curated
// scenario is reached from the catalogue and from its algorithm's Scenarios menu.
func TestConsistentNavigationAndMultipleWays(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 800)
	var header, controls string
	for _, path := range []string{"/", "/join", "/compare", "/play/ricart-agrawala", "/play/bully", "/s/ricart-agrawala-concurrent"} {
		run(t, ctx, chromedp.Navigate(ts.URL+path), chromedp.WaitReady(chromedp.CSS("main")))
		h := eval[string](t, ctx, headerJS)
		if strings.Count(h, "|") != 2 {
			t.Errorf("%s: header %q lacks the skip link, the home link or the theme button", path, h)
		}
		if header == "" {
			header = h
		} else if h != header {
			t.Errorf("%s: header %q, elsewhere %q", path, h, header)
		}
		if !strings.Contains(path, "/play/") && !strings.HasPrefix(path, "/s/") {
			continue
		}
		ready(t, ctx)
		c := eval[string](t, ctx, controlsJS)
		if controls == "" {
			controls = c
		} else if c != controls {
			t.Errorf("%s: run controls %q, elsewhere %q", path, c, controls)
		}
	}
	const link = `a[href="/s/ricart-agrawala-concurrent?fresh=1"]`
	run(t, ctx, chromedp.Navigate(ts.URL+"/"), chromedp.WaitReady(chromedp.CSS("main")))
	if !eval[bool](t, ctx, `document.querySelector('main `+link+`') !== null`) {
		t.Error("the catalogue does not link the curated scenario")
	}
	run(t, ctx, chromedp.Navigate(ts.URL+"/play/ricart-agrawala"))
	ready(t, ctx)
	if !eval[bool](t, ctx, `document.querySelector('nav.scenario-nav `+link+`') !== null`) {
		t.Error("the algorithm's Scenarios menu does not link the curated scenario")
	}
}

// On focus and on input (WCAG 3.2.1, 3.2.2): tabbing through a run page, changing the
// speed with the arrow keys, turning "Be the network" on with Space and typing in Run
// setup change no context: the address stays, no dialog opens, the focus stays put,
// and the run keeps its processes until the setup is submitted.
func TestNoChangeOfContextOnFocusOrInput(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 800)
	run(t, ctx, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?n=3"))
	ready(t, ctx)
	href := eval[string](t, ctx, `location.href`)
	same := func(when string) {
		t.Helper()
		if got := eval[string](t, ctx, `location.href`); got != href {
			t.Fatalf("%s: the address became %s", when, got)
		}
		if eval[bool](t, ctx, `document.querySelector("dialog[open]") !== null`) {
			t.Fatalf("%s: a dialog opened", when)
		}
	}
	for range 120 {
		run(t, ctx, tabKey)
		same("tabbing")
	}
	tabTo(t, ctx, `el.id === "speed"`, false)
	run(t, ctx, downKey)
	waitFor(t, ctx, `document.getElementById("speed").value === "2" && document.activeElement.id === "speed"`)
	same("changing the speed")
	tabTo(t, ctx, `el.id === "net-hold"`, false)
	run(t, ctx, chromedp.KeyEvent(" "))
	waitFor(t, ctx, `document.getElementById("net-hold").checked && document.activeElement.id === "net-hold"`)
	same("being the network")
	eval[bool](t, ctx, `document.querySelector(".setup details").open = true`)
	tabTo(t, ctx, `el.name === "nodes"`, false)
	run(t, ctx, press("End", 35, 0), press("Backspace", 8, 0), chromedp.KeyEvent("5"))
	same("typing a number of processes")
	if n := eval[int](t, ctx, `document.querySelectorAll("#view g.node").length`); n != 3 {
		t.Fatalf("typing in Run setup changed the run to %d processes", n)
	}
	run(t, ctx, chromedp.KeyEvent(kb.Enter)) // submits: a new run of 5, on this page
	waitFor(t, ctx, `document.querySelectorAll("#view g.node").length === 5`)
}

// Error suggestion (WCAG 3.3.3): a refused run setup says what the values must be; a
// shortcut key already taken says by which action, and the field is marked invalid.
func TestErrorsSayHowToFixThem(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := freshTab(t, 1280, 800)
	run(t, ctx, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?n=3"))
	ready(t, ctx)
	eval[bool](t, ctx, `(() => {
		document.querySelector(".setup details").open = true;
		const f = document.getElementById("setup-form").elements;
		f.dmin.value = "9"; f.dmax.value = "3";
		document.querySelector("#setup-form button[type=submit]").click();
		return true;
	})()`)
	waitFor(t, ctx, `document.getElementById("setup-error").textContent !== ""`)
	if got := eval[string](t, ctx, `document.getElementById("setup-error").textContent`); !strings.Contains(got, "must satisfy 0 <= min <= max") {
		t.Errorf("a refused delay says %q: not what it must be", got)
	}
	run(t, ctx, chromedp.KeyEvent("?"))
	waitFor(t, ctx, `document.getElementById("help").open`)
	tabTo(t, ctx, `el.id === "sc-key-step"`, false)
	run(t, ctx, press("End", 35, 0), press("Backspace", 8, 0), chromedp.KeyEvent("c"), tabKey)
	waitFor(t, ctx, `document.getElementById("sc-key-step").getAttribute("aria-invalid") === "true"`)
	if got := eval[string](t, ctx, `document.getElementById("sc-note").textContent`); got != `"c" is already the key of crash the selected process` {
		t.Errorf("a taken key says %q", got)
	}
}
