package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// litInViewJS checks that every lit rule of the pseudocode shows: its label and first
// line inside the pseudocode panel's visible box and inside the viewport, and that the
// panel shows several lines. It returns what is wrong, or "".
const litInViewJS = `(() => {
  const bad = [];
  const box = document.getElementById("code-scroll");
  const b = box.getBoundingClientRect();
  const line = parseFloat(getComputedStyle(box.querySelector(".ln")).lineHeight);
  if (box.clientHeight < 5 * line) bad.push("the pseudocode shows " + (box.clientHeight / line).toFixed(1) + " lines");
  const lit = [...box.querySelectorAll(".rule.lit")];
  if (!lit.length) bad.push("no rule is lit");
  for (const e of lit) {
    const head = e.querySelector(".label").getBoundingClientRect();
    const first = e.querySelector(".ln").getBoundingClientRect();
    const top = Math.min(head.top, first.top), bottom = Math.max(head.bottom, first.bottom);
    if (top < b.top - 0.5 || bottom > b.bottom + 0.5) bad.push(e.dataset.rule + " is outside the pseudocode's view (" + Math.round(top) + ".." + Math.round(bottom) + " in " + Math.round(b.top) + ".." + Math.round(b.bottom) + ")");
    if (top < 0 || bottom > innerHeight) bad.push(e.dataset.rule + " is outside the viewport");
    // on top, not under another pinned rule
    const at = document.elementFromPoint(head.left + 2, head.top + head.height / 2);
    if (!at || at.closest(".rule") !== e) bad.push(e.dataset.rule + " is covered");
  }
  return bad.join("; ");
})()`

// At 1280x800, stepping through maekawa-deadlock-free, every lit rule is in view at
// every step; with Be the network and Run setup open too, the pseudocode still shows
// several lines with its lit rules.
func TestRightColumnKeepsLitRulesInView(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 800)
	run(t, ctx, chromedp.Navigate(ts.URL+"/s/maekawa-deadlock-free"))
	ready(t, ctx)
	check := func(when string) {
		t.Helper()
		waitFor(t, ctx, `document.getElementById("main").dataset.settled === "true"`)
		if bad := eval[string](t, ctx, litInViewJS); bad != "" {
			t.Errorf("%s: %s", when, bad)
		}
	}
	// Step to the end of the story: until nothing is left to happen.
	steps := 0
	for ; steps < 60 && !eval[bool](t, ctx, `document.getElementById("status").dataset.state === "quiet"`); steps++ {
		if d := eval[float64](t, ctx, stepJS, chromedp.EvalAwaitPromise); d < 0 {
			t.Fatalf("step %d did not come", steps+1)
		}
		check(fmt.Sprintf("step %d", steps+1))
		if steps+1 == 4 {
			screenshot(t, ctx, "maekawa-1280x800-step4.png")
		}
	}
	if steps < 10 {
		t.Fatalf("the scenario ended after %d steps", steps)
	}
	// Be the network and Run setup open: the pseudocode keeps its lines.
	run(t, ctx, chromedp.Click(chromedp.CSS("#net-toggle")), chromedp.Evaluate[chromedp.Void](`document.querySelector(".setup details").open = true`))
	waitFor(t, ctx, `!document.getElementById("net-body").hidden`)
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById("timeline").value = "4"; document.getElementById("timeline").dispatchEvent(new Event("input", { bubbles: true }))`))
	waitFor(t, ctx, `document.getElementById("main").dataset.step === "4"`)
	check("step 4 with Network and Run setup open")
	screenshot(t, ctx, "maekawa-1280x800-panels-open.png")
}

// The inspector shows every process: the central coordinator at N=5 shows the
// coordinator's own row, with Be the network and Run setup open.
func TestRightColumnInspectorShowsEveryProcess(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 720)
	run(t, ctx, chromedp.Navigate(ts.URL+"/play/central?n=5"))
	ready(t, ctx)
	rows := `(() => {
	  const wrap = document.querySelector(".vars-wrap").getBoundingClientRect();
	  const out = [];
	  for (const tr of document.querySelectorAll("#vars tbody tr")) {
	    const r = tr.getBoundingClientRect();
	    if (r.top >= wrap.top - 0.5 && r.bottom <= wrap.bottom + 0.5 && r.bottom <= innerHeight) out.push(tr.dataset.id);
	  }
	  return out.join();
	})()`
	for _, open := range []bool{false, true} {
		if open {
			run(t, ctx, chromedp.Click(chromedp.CSS("#net-toggle")), chromedp.Evaluate[chromedp.Void](`document.querySelector(".setup details").open = true`))
			waitFor(t, ctx, `!document.getElementById("net-body").hidden`)
		}
		waitFor(t, ctx, `document.querySelectorAll("#vars tbody tr").length === 5`)
		if got := eval[string](t, ctx, rows); got != "0,1,2,3,4" {
			t.Errorf("panels open %v: the inspector shows the rows of %q, want 0,1,2,3,4 (4 is the coordinator)", open, got)
		}
		if bad := eval[string](t, ctx, `(() => { const b = document.getElementById("code-scroll"); const l = parseFloat(getComputedStyle(b.querySelector(".ln")).lineHeight); return b.clientHeight < 5 * l ? "the pseudocode shows " + (b.clientHeight / l).toFixed(1) + " lines" : ""; })()`); bad != "" {
			t.Errorf("panels open %v: %s", open, bad)
		}
	}
	screenshot(t, ctx, "central-n5-1280x720.png")
}

// Opening the space-time diagram leaves the processes view whole: no two circles
// overlap and every label is inside the view; the clocks table says why its Lamport
// clock is not the inspector's clock.
func TestSpacetimeKeepsTheProcessView(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	for _, vp := range []struct{ w, h int64 }{{1280, 720}, {1024, 768}} {
		ctx := tab(t, ts.URL, vp.w, vp.h)
		run(t, ctx, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?n=5"))
		ready(t, ctx)
		clickProcessAction(t, ctx, 1, "request")
		for range 3 {
			eval[float64](t, ctx, stepJS, chromedp.EvalAwaitPromise)
		}
		// The panel remembers being open (localStorage): start from it closed.
		if eval[bool](t, ctx, `document.getElementById("spacetime").dataset.open === "true"`) {
			run(t, ctx, chromedp.Click(chromedp.CSS("#st-toggle")))
			waitFor(t, ctx, `document.getElementById("spacetime").dataset.open === "false"`)
		}
		waitFor(t, ctx, `(() => { const v = document.getElementById("view"), b = v.getBoundingClientRect(); return Math.abs(v.viewBox.baseVal.height - Math.max(200, Math.round(b.height))) < 1; })()`)
		// The height once the layout has settled: two frames without a change.
		h0 := eval[float64](t, ctx, `new Promise((done) => {
		  const h = () => document.getElementById("view").getBoundingClientRect().height;
		  let last = h(), still = 0;
		  const tick = () => { const now = h(); still = now === last ? still + 1 : 0; last = now; if (still >= 2) done(now); else requestAnimationFrame(tick); };
		  requestAnimationFrame(tick);
		})`, chromedp.EvalAwaitPromise)
		run(t, ctx, chromedp.Click(chromedp.CSS("#st-toggle")))
		waitFor(t, ctx, `document.getElementById("spacetime").dataset.state === "ready" && !!document.querySelector("#st-diagram .st-dot")`)
		waitFor(t, ctx, fmt.Sprintf(`(() => { const v = document.getElementById("view"), b = v.getBoundingClientRect(); return b.height < %g && Math.abs(v.viewBox.baseVal.height - Math.max(200, Math.round(b.height))) < 1; })()`, h0))
		bad := eval[string](t, ctx, `(() => {
		  const bad = [];
		  const svg = document.getElementById("view").getBoundingClientRect();
		  const c = [...document.querySelectorAll("#view g.node .body")].map((e) => e.getBoundingClientRect());
		  for (let i = 0; i < c.length; i++) for (let j = i + 1; j < c.length; j++) {
		    const d = Math.hypot(c[i].x + c[i].width / 2 - c[j].x - c[j].width / 2, c[i].y + c[i].height / 2 - c[j].y - c[j].height / 2);
		    if (d < (c[i].width + c[j].width) / 2) bad.push("circles " + i + " and " + j + " overlap");
		  }
		  for (const e of document.querySelectorAll("#view g.node .name, #view .label text")) {
		    if (!e.textContent || e.closest("[display=none]")) continue;
		    const r = e.getBoundingClientRect();
		    if (r.width === 0) continue;
		    if (r.left < svg.left - 0.5 || r.right > svg.right + 0.5 || r.top < svg.top - 0.5 || r.bottom > svg.bottom + 0.5) bad.push("label " + JSON.stringify(e.textContent) + " is clipped");
		  }
		  if (svg.height < 180) bad.push("the view is " + Math.round(svg.height) + " px tall");
		  return bad.join("; ");
		})()`)
		if bad != "" {
			t.Errorf("%dx%d with the space-time diagram open: %s", vp.w, vp.h, bad)
		}
		run(t, ctx, chromedp.Click(chromedp.CSS("#st-clocks")))
		waitFor(t, ctx, `document.getElementById("st-clock-box").hidden === false && document.querySelectorAll("#st-clock-table tbody tr").length === 5`)
		// The note is on screen: its first line inside the clocks' box.
		note := eval[string](t, ctx, `(() => {
		  const n = document.getElementById("st-clock-note").getBoundingClientRect(), b = document.getElementById("st-clock-box").getBoundingClientRect();
		  return n.top >= b.top && n.top + 14 <= b.bottom && n.height > 0 ? document.getElementById("st-clock-note").textContent : "";
		})()`)
		if note == "" || !containsAll(note, "inspector's clock", "every event", "own clock ticks only where its rules say") {
			t.Errorf("the clocks table does not say why its Lamport clock differs from the inspector's: %q", note)
		}
		screenshot(t, ctx, fmt.Sprintf("spacetime-open-%dx%d.png", vp.w, vp.h))
	}
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// phoneJS: nothing wider than the phone, the theme button on screen.
const phoneJS = `(() => {
  const bad = [];
  const sw = document.scrollingElement.scrollWidth;
  if (sw > innerWidth) bad.push("the page is " + sw + " px wide on a " + innerWidth + " px screen");
  const t = document.getElementById("theme-toggle");
  const r = t && t.getBoundingClientRect();
  if (!r || r.width === 0 || r.right > innerWidth || r.left < 0) bad.push("the theme button is not on screen");
  return bad.join("; ");
})()`

// The header at 1280 and 1366 wide: one line, every title whole; on a phone its
// actions are in a menu and nothing overflows.
func TestHeaderAtLaptopAndPhoneWidths(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 720)
	header := `(() => {
	  const bad = [];
	  const top = document.querySelector(".top");
	  if (top.scrollWidth > top.clientWidth + 1) bad.push("the header overflows");
	  for (const e of document.querySelectorAll(".top-actions .btn, .top-actions summary, .top-actions .share-btn, .top-actions .icon-btn")) {
	    const r = e.getBoundingClientRect();
	    if (r.width > 0 && r.height > 40) bad.push((e.id || e.textContent.trim()) + " wraps (" + Math.round(r.height) + " px tall)");
	  }
	  const h1 = document.querySelector(".crumb h1");
	  if (h1.scrollWidth > h1.clientWidth) bad.push("the title is cut: " + h1.textContent);
	  return bad.join("; ");
	})()`
	for _, slug := range []string{"lamport", "ricart-agrawala-token", "maekawa", "central"} {
		run(t, ctx, chromedp.Navigate(ts.URL+"/play/"+slug))
		ready(t, ctx)
		for _, w := range []int64{1280, 1366} {
			run(t, ctx, chromedp.EmulateViewport(w, 768))
			waitFor(t, ctx, fmt.Sprintf(`innerWidth === %d`, w))
			if bad := eval[string](t, ctx, header); bad != "" {
				t.Errorf("%s at %d: %s", slug, w, bad)
			}
		}
	}
	screenshot(t, ctx, "header-1366.png")

	phone := tab(t, ts.URL, 390, 844)
	run(t, phone, chromedp.Navigate(ts.URL+"/play/ricart-agrawala"))
	ready(t, phone)
	if bad := eval[string](t, phone, phoneJS); bad != "" {
		t.Error(bad)
	}
	if eval[bool](t, phone, `document.getElementById("lecture-start").getClientRects().length > 0`) {
		t.Error("on a phone, Start lecture is in the header rather than its menu")
	}
	run(t, phone, chromedp.Click(chromedp.CSS("#more-btn")))
	waitFor(t, phone, `document.getElementById("lecture-start").getClientRects().length > 0 && document.getElementById("more-btn").getAttribute("aria-expanded") === "true"`)
	if bad := eval[string](t, phone, phoneJS); bad != "" {
		t.Errorf("with the menu open: %s", bad)
	}
	screenshot(t, phone, "phone-menu.png")
	run(t, phone, chromedp.KeyEvent(kb.Escape))
	waitFor(t, phone, `document.getElementById("lecture-start").getClientRects().length === 0`)
}
