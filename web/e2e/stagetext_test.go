package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// stageTextJS measures the stage's texts as drawn on the screen (font size times the
// SVG's scale): the process names, and the median of every other text of the stage
// (states, clocks, message labels, marks and badges, the status pill, the step
// readout); and lists the labels that overlap one another or a process.
const stageTextJS = `(() => {
  const svg = document.getElementById("view");
  const unit = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  const shown = (e) => e.getClientRects().length > 0 && getComputedStyle(e).display !== "none" && e.textContent.trim() !== "";
  const px = (e, k) => parseFloat(getComputedStyle(e).fontSize) * k;
  const names = [...svg.querySelectorAll(".node .name")].filter(shown).map((e) => px(e, unit));
  const others = [
    ...[...svg.querySelectorAll(".label text, .msg text, .node .cs-tag, .role text")].filter(shown).map((e) => px(e, unit)),
    ...["status", "readout"].map((id) => document.getElementById(id)).filter((e) => e && shown(e)).map((e) => px(e, 1)),
  ].sort((a, b) => a - b);
  const median = others.length ? others[Math.floor(others.length / 2)] : 0;
  const box = (e, what) => { const r = e.getBoundingClientRect(); return { what, l: r.left, t: r.top, r: r.right, b: r.bottom }; };
  const labels = [...svg.querySelectorAll(".label text")].filter(shown).map((e) => box(e, "label " + e.textContent));
  const badges = [...svg.querySelectorAll(".role")].filter((e) => e.getClientRects().length).map((e) => box(e, "badge " + e.textContent));
  const pills = [...svg.querySelectorAll(".msg")].filter((e) => e.getClientRects().length).map((e) => box(e.querySelector("rect"), "pill " + e.textContent));
  const circles = [...svg.querySelectorAll(".node")].map((g) => {
    const b = box(g.querySelector("circle.body"), "P" + g.dataset.id);
    return { ...b, circle: true, cx: (b.l + b.r) / 2, cy: (b.t + b.b) / 2, rad: (b.r - b.l) / 2 };
  });
  // Two boxes meet when they share more than half a pixel; a box meets a circle when
  // the circle comes within it.
  const meet = (a, b) => {
    if (b.circle) {
      const x = Math.max(a.l, Math.min(b.cx, a.r)), y = Math.max(a.t, Math.min(b.cy, a.b));
      return Math.hypot(x - b.cx, y - b.cy) < b.rad - 0.5;
    }
    return a.l < b.r - 0.5 && b.l < a.r - 0.5 && a.t < b.b - 0.5 && b.t < a.b - 0.5;
  };
  const bad = [];
  const words = [...labels, ...badges];
  for (let i = 0; i < words.length; i++) {
    for (let j = i + 1; j < words.length; j++) if (meet(words[i], words[j])) bad.push(words[i].what + " / " + words[j].what);
    for (const c of circles) if (meet(words[i], c)) bad.push(words[i].what + " / " + c.what);
    for (const p of pills) if (meet(words[i], p)) bad.push(words[i].what + " / " + p.what);
  }
  for (const p of pills) for (const c of circles) if (meet(p, c)) bad.push(p.what + " / " + c.what);
  return { Names: names.length ? Math.min(...names) : 0, Median: median, Count: others.length, Overlaps: bad };
})()`

type stageText struct {
	Names, Median float64
	Count         int
	Overlaps      []string
}

// The presenter's stage reads from the back row: its texts grow with the stage, at
// 1920x1080 and 1280x720 with a question open, and no label overlaps another or a
// process.
func TestProjectorStageTextsScaleAndNeverOverlap(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	for _, slug := range []string{"ricart-agrawala", "central"} {
		t.Run(slug, func(t *testing.T) { testStageTexts(t, ts.URL, slug) })
	}
}

func testStageTexts(t *testing.T, base, slug string) {
	pres := isolatedTab(t, base, 1280, 720)
	run(t, pres, chromedp.Navigate(base+"/play/"+slug+"?n=5"))
	ready(t, pres)
	run(t, pres, chromedp.Click(chromedp.CSS("#lecture-start")), chromedp.WaitVisible(chromedp.CSS("#lecture-code")))
	waitFor(t, pres, `location.pathname.startsWith("/lecture/present/") && document.getElementById("main")?.dataset.ready === "true"`)
	clickProcessAction(t, pres, 0, "request")
	clickProcessAction(t, pres, 2, "request")
	run(t, pres, chromedp.KeyEvent(kb.Escape))
	for range 3 {
		before := eval[int](t, pres, `Number(document.getElementById("main").dataset.step)`)
		run(t, pres, chromedp.KeyEvent(kb.PageDown))
		waitFor(t, pres, fmt.Sprintf(`Number(document.getElementById("main").dataset.step) === %d`, before+1))
	}
	if slug == "ricart-agrawala" { // a question open: the stage keeps its sizes beside it
		run(t, pres, chromedp.KeyEvent("q"))
		waitFor(t, pres, `document.getElementById("lecture-pick")?.open && document.querySelectorAll(".lecture-pick-item").length > 0`)
		run(t, pres, chromedp.KeyEvent("1"))
		waitFor(t, pres, `document.getElementById("lecture-q")?.dataset.state === "open"`)
	}
	for _, c := range []struct {
		w, h          int64
		names, median float64
	}{{1920, 1080, 40, 24}, {1280, 720, 27, 16}} {
		settledAt(t, pres, c.w, c.h)
		got := eval[stageText](t, pres, stageTextJS)
		screenshot(t, pres, fmt.Sprintf("stage-text-%s-%dx%d.png", slug, c.w, c.h))
		if got.Names < c.names || got.Median < c.median {
			t.Errorf("at %dx%d: process names %.1f px (want at least %g), other texts' median %.1f px over %d (want at least %g)",
				c.w, c.h, got.Names, c.names, got.Median, got.Count, c.median)
		}
		if len(got.Overlaps) > 0 {
			t.Errorf("at %dx%d: overlaps: %s", c.w, c.h, strings.Join(got.Overlaps, "; "))
		}
	}
}

// The rule strip says once what several processes did alike ("P0–P7: BU-1"), in
// type read from the back of a hall.
func TestRuleStripMergesProcessesAlike(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	pres := tab(t, ts.URL, 1280, 720)
	run(t, pres, chromedp.Navigate(ts.URL+"/play/bully"))
	ready(t, pres)
	run(t, pres, chromedp.Click(chromedp.CSS("#lecture-start")), chromedp.WaitVisible(chromedp.CSS("#lecture-code")))
	waitFor(t, pres, `location.pathname.startsWith("/lecture/present/") && document.getElementById("main")?.dataset.ready === "true"`)
	waitFor(t, pres, `document.querySelectorAll("#rulestrip .rs-proc").length > 0 && document.getElementById("rulestrip").dataset.size !== undefined`)
	who := eval[[]string](t, pres, `[...document.querySelectorAll("#rulestrip .rs-who")].map((e) => e.textContent)`)
	rules := eval[int](t, pres, `document.querySelectorAll("#rulestrip .rs-rule").length`)
	if len(who) != 1 || who[0] != "P0–P7" || rules != 1 {
		t.Fatalf("the strip shows %q with %d rules, want one line for P0–P7", who, rules)
	}
	if size := eval[float64](t, pres, `parseFloat(getComputedStyle(document.querySelector("#rulestrip .rs-ln")).fontSize)`); size < 22 {
		t.Fatalf("the strip's rule is %.1f px, want at least 22", size)
	}
}
