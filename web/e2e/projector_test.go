package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// Readable from the back row. The checks below read the page's boxes as the
// browser laid them out; each returns "" when the layout is right, else what is wrong.

// projectorLayoutJS checks, for a lecture page (presenter or follower) with a question open,
// that the stage keeps at least 60% of the viewport's height, that every rule of the
// rule strip is inside the viewport and clear of the question floating over the side
// column, and that the question does not cover the stage.
const projectorLayoutJS = `(() => {
  const W = innerWidth, H = innerHeight, bad = [];
  const box = (e) => e.getBoundingClientRect();
  const inside = (r) => r.top >= 0 && r.left >= 0 && r.bottom <= H + 0.5 && r.right <= W + 0.5;
  const meet = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  const stage = box(document.getElementById("svg-wrap"));
  if (stage.height < 0.6 * H) bad.push("the stage is " + Math.round(stage.height) + " px of " + H);
  const q = document.getElementById("lecture-q");
  if (!q || q.hidden) bad.push("no question shown");
  else if (meet(box(q), stage)) bad.push("the question covers the stage");
  const rules = [...document.querySelectorAll("#rulestrip .rs-rule")];
  if (!rules.length) bad.push("the rule strip shows no rule");
  for (const e of rules) {
    const r = box(e);
    if (!inside(r)) bad.push("rule " + e.dataset.rule + " is outside the viewport: " + JSON.stringify([r.top, r.bottom, r.left, r.right]));
    if (q && !q.hidden && meet(r, box(q))) bad.push("the question covers rule " + e.dataset.rule);
  }
  const strip = [...new Set(rules.map((e) => e.dataset.rule))].sort().join();
  const lit = [...new Set([...document.querySelectorAll("#code-scroll .rule.lit")].map((e) => e.dataset.rule))].sort().join();
  if (strip !== lit) bad.push("the strip shows " + strip + ", the pseudocode lights " + lit);
  const size = parseFloat(getComputedStyle(document.querySelector("#rulestrip .rs-ln")).fontSize);
  if (size < 14) bad.push("the strip's type is " + size + " px");
  return bad.join("; ");
})()`

// tallyShownJS: whether any tally of the question is on screen.
const tallyShownJS = `[...document.querySelectorAll("#lecture-q .lecture-tally")].some((e) => e.getClientRects().length > 0)`

// settledAt waits for the view to be drawn for a viewport of w x h.
func settledAt(t *testing.T, ctx context.Context, w, h int64) {
	t.Helper()
	run(t, ctx, chromedp.EmulateViewport(w, h))
	waitFor(t, ctx, fmt.Sprintf(`innerWidth === %d && (() => {
		const v = document.getElementById("view"), b = v.getBoundingClientRect(), vb = v.viewBox.baseVal;
		return Math.abs(vb.width - Math.max(240, Math.round(b.width))) < 1 && Math.abs(vb.height - Math.max(200, Math.round(b.height))) < 1;
	})() && document.getElementById("rulestrip")?.dataset.size !== undefined`, w))
	// the strip is refitted at the next animation frame after a resize
	eval[bool](t, ctx, `new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`, chromedp.EvalAwaitPromise)
}

// The projector view at 1024x768, 1280x720 and 1920x1080, for the presenter and for a
// follower, with a question open: the stage keeps 60% of the height, every lit rule is
// in large type in the strip beside it, the question floats clear of both, and the
// live tally stays off the projector until Reveal while the presenter's Peek window
// shows it.
func TestProjectorLayoutWithAQuestionOpen(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	pres := tab(t, ts.URL, 1280, 720)
	run(t, pres, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?n=4"))
	ready(t, pres)
	run(t, pres, chromedp.Click(chromedp.CSS("#lecture-start")), chromedp.WaitVisible(chromedp.CSS("#lecture-code")))
	waitFor(t, pres, `location.pathname.startsWith("/lecture/present/") && document.getElementById("main")?.dataset.ready === "true"`)
	waitFor(t, pres, `/^[A-Z0-9]{3} [A-Z0-9]{3}$/.test(document.getElementById("lecture-code")?.textContent || "")`)
	code := strings.ReplaceAll(eval[string](t, pres, `document.getElementById("lecture-code").textContent`), " ", "")
	fol := tab(t, ts.URL, 1280, 720)
	run(t, fol, chromedp.Navigate(ts.URL+"/l/"+code))
	ready(t, fol)

	clickProcessAction(t, pres, 0, "request")
	clickProcessAction(t, pres, 2, "request")
	run(t, pres, chromedp.KeyEvent(kb.Escape))
	for range 3 {
		before := eval[int](t, pres, `Number(document.getElementById("main").dataset.step)`)
		run(t, pres, chromedp.KeyEvent(kb.PageDown))
		waitFor(t, pres, fmt.Sprintf(`Number(document.getElementById("main").dataset.step) === %d`, before+1))
	}
	run(t, pres, chromedp.KeyEvent("q"))
	waitFor(t, pres, `document.getElementById("lecture-pick")?.open && document.querySelectorAll(".lecture-pick-item").length > 0`)
	run(t, pres, chromedp.KeyEvent("1"))
	for _, ctx := range []context.Context{pres, fol} {
		waitFor(t, ctx, `document.getElementById("lecture-q")?.dataset.state === "open"`)
	}
	waitSame(t, pres, fol, "the follower")
	// While the question is open the follower's Fork is off, and says why.
	waitFor(t, fol, `document.getElementById("lecture-fork").getAttribute("aria-disabled") === "true" && document.getElementById("lecture-fork-why").textContent.includes("until the answer is revealed")`)
	// The follower answers: the presenter's page has a tally, which it must not show.
	run(t, fol, chromedp.Click(chromedp.CSS(`.lecture-choice[data-choice="0"] button`)))
	waitFor(t, pres, `[...document.querySelectorAll("#lecture-q .lecture-count")].map((e) => e.textContent).join().startsWith("1")`)

	for _, vp := range []struct{ w, h int64 }{{1024, 768}, {1280, 720}, {1920, 1080}} {
		for _, who := range []struct {
			name string
			ctx  context.Context
		}{{"presenter", pres}, {"follower", fol}} {
			settledAt(t, who.ctx, vp.w, vp.h)
			if bad := eval[string](t, who.ctx, projectorLayoutJS); bad != "" {
				t.Errorf("%s at %dx%d: %s", who.name, vp.w, vp.h, bad)
			}
			if eval[bool](t, who.ctx, tallyShownJS) {
				t.Errorf("%s at %dx%d: the tally shows before Reveal", who.name, vp.w, vp.h)
			}
			screenshot(t, who.ctx, fmt.Sprintf("projector-%s-%dx%d.png", who.name, vp.w, vp.h))
		}
	}

	// Peek: the presenter's own window shows the live tally.
	presURL := eval[string](t, pres, `location.href`)
	desk := tab(t, ts.URL, 620, 760)
	run(t, desk, chromedp.Navigate(presURL+"#desk"))
	ready(t, desk)
	waitFor(t, desk, `document.body.classList.contains("lecture-desk") && document.getElementById("lecture-q")?.dataset.state === "open"`)
	waitFor(t, desk, tallyShownJS)
	if eval[bool](t, pres, `!document.getElementById("lecture-peek")`) {
		t.Error("the presenter has no Peek button")
	}
	screenshot(t, desk, "projector-peek-desk.png")

	// The type size: A+ makes everything larger, here and after a reload.
	before := eval[float64](t, pres, `parseFloat(getComputedStyle(document.body).fontSize)`)
	run(t, pres, chromedp.Click(chromedp.CSS("#font-larger")))
	waitFor(t, pres, fmt.Sprintf(`parseFloat(getComputedStyle(document.body).fontSize) > %g`, before))
	run(t, pres, chromedp.Reload())
	ready(t, pres)
	waitFor(t, pres, fmt.Sprintf(`document.getElementById("font-scale-value")?.textContent === "115%%" && parseFloat(getComputedStyle(document.body).fontSize) > %g`, before))

	// Reveal: now the projector shows the tally.
	run(t, pres, chromedp.KeyEvent("v"))
	waitFor(t, pres, `document.getElementById("lecture-q")?.dataset.state === "revealed"`)
	waitFor(t, pres, tallyShownJS)
	// The follower's answer is said in words, and Fork comes back.
	waitFor(t, fol, `document.getElementById("lecture-q")?.dataset.state === "revealed" && document.querySelector("#lecture-q .lecture-mine")?.textContent === " (your answer)" && /Your answer (was|, )/.test(document.querySelector("#lecture-q .lecture-q-foot").textContent)`)
	waitFor(t, fol, `document.getElementById("lecture-fork").getAttribute("aria-disabled") === "false"`)
}

// A follower on a phone: nothing overflows sideways, the title and the status pill do
// not overlap, and the question floats at the foot of the screen, answerable.
func TestProjectorFollowerOnAPhone(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	pres := tab(t, ts.URL, 1280, 720)
	run(t, pres, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?n=3"))
	ready(t, pres)
	run(t, pres, chromedp.Click(chromedp.CSS("#lecture-start")), chromedp.WaitVisible(chromedp.CSS("#lecture-code")))
	waitFor(t, pres, `/^[A-Z0-9]{3} [A-Z0-9]{3}$/.test(document.getElementById("lecture-code")?.textContent || "") && document.getElementById("main")?.dataset.ready === "true"`)
	code := strings.ReplaceAll(eval[string](t, pres, `document.getElementById("lecture-code").textContent`), " ", "")
	phone := tab(t, ts.URL, 390, 844)
	run(t, phone, chromedp.Navigate(ts.URL+"/l/"+code))
	ready(t, phone)
	clickProcessAction(t, pres, 1, "request")
	run(t, pres, chromedp.KeyEvent(kb.Escape), chromedp.KeyEvent(kb.PageDown))
	waitFor(t, pres, `document.getElementById("main").dataset.step === "1"`)
	run(t, pres, chromedp.KeyEvent("q"))
	waitFor(t, pres, `document.getElementById("lecture-pick")?.open && document.querySelectorAll(".lecture-pick-item").length > 0`)
	run(t, pres, chromedp.KeyEvent("1"))
	waitFor(t, phone, `document.getElementById("lecture-q")?.dataset.state === "open" && document.querySelectorAll(".lecture-choice-btn").length >= 2`)
	if bad := eval[string](t, phone, phoneJS); bad != "" {
		t.Error(bad)
	}
	if bad := eval[string](t, phone, `(() => {
		const a = document.querySelector(".run-title").getBoundingClientRect(), b = document.getElementById("status").getBoundingClientRect();
		return a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom ? "the title overlaps the status pill" : "";
	})()`); bad != "" {
		t.Error(bad)
	}
	if !eval[bool](t, phone, `(() => { const r = document.querySelector(".lecture-choice-btn").getBoundingClientRect(); return r.bottom <= innerHeight && r.top >= 0; })()`) {
		t.Error("the question's choices are not on the phone's screen")
	}
	screenshot(t, phone, "projector-follower-phone.png")
	run(t, phone, chromedp.Click(chromedp.CSS(`.lecture-choice[data-choice="0"] button`)))
	waitFor(t, phone, `document.querySelectorAll(".lecture-choice.mine").length === 1`)
}
