package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/teach-dist/playground/internal/testwait"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/scenarios"
)

// sharedView is what a link must reproduce: the topology SVG, the inspector, the
// messages in flight, the lit pseudocode and the step. Messages and their trails are
// compared as sets: a page that scrubbed back keeps the elements it had and adds the
// others after them, so their document order (which only decides which of two
// overlapping arcs is drawn on top) depends on the page's history.
const sharedView = `(() => {
  const svg = document.getElementById("view").cloneNode(true);
  for (const g of [svg.querySelector("#trails"), svg.querySelector("#msgs")]) {
    const kids = [...g.children].sort((a, b) => (Number(a.dataset.id) - Number(b.dataset.id)) || a.outerHTML.localeCompare(b.outerHTML));
    g.replaceChildren(...kids);
  }
  return JSON.stringify({
    step: document.getElementById("main").dataset.step,
    svg: svg.outerHTML,
    vars: document.querySelector("#vars tbody").innerHTML,
    inflight: document.getElementById("inflight").innerHTML,
    lit: [...document.querySelectorAll(".rule.lit")].map((e) => e.dataset.rule).join(),
  });
})()`

func settle(t *testing.T, ctx context.Context) {
	t.Helper()
	waitFor(t, ctx, `document.getElementById("main").dataset.settled === "true"`)
}

// The test: a link copied with the button opens, in a fresh browser context,
// the same SVG and inspector at the same step, interventions and scrubbing included.
func TestCopiedLinkOpensTheSameViewInAFreshBrowser(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 720)
	run(t, ctx, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?n=5&seed=7&delay=1-4&fifo=false"))
	ready(t, ctx)
	steps := func(n int) {
		t.Helper()
		for range n {
			if d := eval[float64](t, ctx, stepJS, chromedp.EvalAwaitPromise); d < 0 {
				t.Fatal("the view did not move")
			}
		}
	}
	clickProcessAction(t, ctx, 0, "request")
	waitFor(t, ctx, `document.querySelectorAll("#view g.msg").length === 4`)
	run(t, ctx, chromedp.KeyEvent(kb.Escape))
	steps(4)
	clickProcessAction(t, ctx, 3, "request")
	run(t, ctx, chromedp.KeyEvent(kb.Escape))
	steps(5)
	clickProcessAction(t, ctx, 2, "crash")
	run(t, ctx, chromedp.KeyEvent(kb.Escape))
	steps(6)
	// Scrub back two steps: the link is of the step shown, not the latest.
	step := eval[string](t, ctx, `document.getElementById("main").dataset.step`)
	run(t, ctx, chromedp.KeyEvent(","), chromedp.KeyEvent(","))
	waitFor(t, ctx, fmt.Sprintf(`Number(document.getElementById("main").dataset.step) === %s - 2`, step))
	settle(t, ctx)
	want := eval[string](t, ctx, sharedView)

	run(t, ctx, chromedp.Click(chromedp.CSS("#copy-link")))
	waitFor(t, ctx, `(document.getElementById("share-url")?.value || "").startsWith(location.origin + "/r/v2.ricart-agrawala.")`)
	link := eval[string](t, ctx, `document.getElementById("share-url").value`)
	announced := eval[string](t, ctx, `document.getElementById("share-toast").getAttribute("role") + " " + document.getElementById("share-toast").textContent`)
	if !strings.HasPrefix(announced, "status ") || !strings.Contains(announced, "Link copied") && !strings.Contains(announced, "Copy this link") {
		t.Fatalf("the copy is not announced: %q", announced)
	}
	t.Logf("copied link: %d characters", len(link))
	screenshot(t, ctx, "copy-link.png")

	fresh := freshTab(t, 1280, 720)
	run(t, fresh, chromedp.Navigate(link))
	ready(t, fresh)
	settle(t, fresh)
	got := eval[string](t, fresh, sharedView)
	if got != want {
		t.Fatalf("the link shows another view; first difference:\n%s", firstDiff(got, want))
	}
	if a, b := eval[string](t, ctx, `document.getElementById("main").dataset.session`), eval[string](t, fresh, `document.getElementById("main").dataset.session`); a == b {
		t.Fatal("the fresh browser joined the same session instead of replaying the link")
	}
	screenshot(t, fresh, "link-opened.png")
}

// expectedCaption is the caption a page must show at step: the captions whose events
// are in that step's batch (a caption shows at its step only), worked out here by
// replaying the scenario as a live session does.
func expectedCaption(t *testing.T, sc *scenarios.Scenario, step int) string {
	t.Helper()
	cfg, err := sc.Config()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Until = 0 // a live run has no end time
	before, last := int64(-1), int64(-1)
	if step > 0 {
		if _, err := sim.Replay(cfg, nil, step-1, func(ev *sim.Event) { before = ev.Seq }); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := sim.Replay(cfg, nil, step, func(ev *sim.Event) { last = ev.Seq }); err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, c := range sc.Captions {
		if c.Seq > before && c.Seq <= last {
			texts = append(texts, c.Text)
		}
	}
	return strings.Join(texts, " ")
}

type captionState struct {
	Step   int
	Hidden bool
	Text   string
}

const captionNow = `(() => {
  const c = document.getElementById("caption");
  const current = !c.hidden && c.dataset.current === "true";
  return { Step: Number(document.getElementById("main").dataset.step), Hidden: !current, Text: current ? c.textContent : "" };
})()`

// A curated scenario's captions appear as the run reaches their events, and scrubbing
// back takes them away (or back to an earlier one).
func TestCaptionsFollowTheRunAndTheScrubbing(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 720)
	const name = "bully-best-case"
	sc, ok := scenarios.Lookup(name)
	if !ok || len(sc.Captions) < 3 {
		t.Fatalf("%s has no captions to test", name)
	}
	run(t, ctx, chromedp.Navigate(ts.URL+"/s/"+name))
	ready(t, ctx)
	check := func(when string) captionState {
		t.Helper()
		settle(t, ctx)
		c := eval[captionState](t, ctx, captionNow)
		want := expectedCaption(t, sc, c.Step)
		if c.Hidden != (want == "") || c.Text != want {
			t.Fatalf("%s, step %d: caption %q (hidden %v); want %q", when, c.Step, c.Text, c.Hidden, want)
		}
		return c
	}
	check("at the start")
	seen := map[string]int{} // caption -> first step showing it
	for range 200 {
		if d := eval[float64](t, ctx, stepJS, chromedp.EvalAwaitPromise); d < 0 {
			break // the run is over
		}
		c := check("stepping")
		if _, ok := seen[c.Text]; !ok && c.Text != "" {
			seen[c.Text] = c.Step
			if len(seen) == 2 {
				screenshot(t, ctx, "caption.png")
			}
		}
		if len(seen) == len(sc.Captions) {
			break
		}
	}
	if len(seen) != len(sc.Captions) {
		t.Fatalf("stepping showed %d of the %d captions", len(seen), len(sc.Captions))
	}
	scrub := func(step int) captionState {
		t.Helper()
		run(t, ctx, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
			const tl = document.getElementById("timeline");
			tl.value = "%d";
			tl.dispatchEvent(new Event("input"));
		})()`, step)))
		waitFor(t, ctx, fmt.Sprintf(`document.getElementById("main").dataset.step === "%d"`, step))
		return check(fmt.Sprintf("scrubbed to %d", step))
	}
	first, second := seen[sc.Captions[0].Text], seen[sc.Captions[1].Text]
	if c := scrub(first - 1); !c.Hidden {
		t.Fatalf("scrubbed before the first caption, it still shows %q", c.Text)
	}
	if c := scrub(second); c.Text != sc.Captions[1].Text {
		t.Fatalf("scrubbed forward to step %d: %q", second, c.Text)
	}
	if c := scrub(first); c.Text != sc.Captions[0].Text {
		t.Fatalf("scrubbed back to step %d: %q", first, c.Text)
	}
	scrub(0)
}

// frameState evaluates js in the first child frame of the page, in a world of its
// own (the frame's DOM, none of its scripts), and returns its JSON result. It also
// returns the frame's URL: a frame the browser refused to show has an error URL.
func frameState(t *testing.T, ctx context.Context, js string) (url string, result string) {
	t.Helper()
	run(t, ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		tree, err := cdp.Call(ctx, tg, page.GetFrameTree, cdp.Empty{})
		if err != nil {
			return err
		}
		if len(tree.FrameTree.ChildFrames) == 0 {
			return fmt.Errorf("the page has no frame")
		}
		f := tree.FrameTree.ChildFrames[0].Frame
		url = f.URL
		if f.UnreachableURL != "" {
			url = "unreachable: " + f.UnreachableURL
			return nil
		}
		yes := true
		world, err := cdp.Call(ctx, tg, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: f.ID, WorldName: "e2e"})
		if err != nil {
			return err
		}
		res, err := cdp.Call(ctx, tg, cdpruntime.Evaluate, cdpruntime.EvaluateParams{Expression: js, ContextID: world.ExecutionContextID, ReturnByValue: &yes})
		if err != nil {
			return err
		}
		if res.ExceptionDetails != nil {
			return fmt.Errorf("in the frame: %s", res.ExceptionDetails.Text)
		}
		result = string(res.Result.Value)
		return nil
	}))
	return url, result
}

// An embed page renders in an iframe of another site, compact; a normal page refuses
// to be framed.
func TestEmbedPageRendersInAFrameOfAnotherSite(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	// A course page on another origin (another port) framing the playground.
	var src string
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>Slides</title><h1>Week 5</h1><iframe src="%s%s" width="800" height="560"></iframe>`, ts.URL, src)
	}))
	t.Cleanup(host.Close)
	ctx := freshTab(t, 1280, 900)

	src = "/embed/s/bully-best-case"
	run(t, ctx, chromedp.Navigate(host.URL))
	const state = `JSON.stringify({
	  ready: document.getElementById("main")?.dataset.ready === "true",
	  embed: document.body.classList.contains("page-embed"),
	  header: getComputedStyle(document.querySelector("header.top")).display,
	  inspector: getComputedStyle(document.querySelector(".col-right")).display,
	  controls: !!document.getElementById("btn-play") && getComputedStyle(document.querySelector(".controls")).display !== "none",
	  nodes: document.querySelectorAll("#view g.node").length,
	  caption: !!document.getElementById("caption"),
	  open: document.querySelector(".embed-open")?.getAttribute("href"),
	})`
	var got struct {
		Ready, Embed, Controls, Caption bool
		Header, Inspector, Open         string
		Nodes                           int
	}
	testwait.For(t, "the embed page ready in the frame", func() bool {
		url, res := frameState(t, ctx, state)
		if strings.HasPrefix(url, "unreachable") || strings.HasPrefix(url, "chrome-error") {
			t.Fatalf("the browser refused to frame the embed page: %s", url)
		}
		var s string
		return res != "" && json.Unmarshal([]byte(res), &s) == nil && json.Unmarshal([]byte(s), &got) == nil && got.Ready
	})
	if !got.Embed || got.Header != "none" || got.Inspector != "none" || !got.Controls || !got.Caption || got.Nodes != 8 || got.Open != "/s/bully-best-case" {
		t.Fatalf("the embed page in the frame: %+v", got)
	}
	screenshot(t, ctx, "embed-in-slides.png")

	// The same page outside /embed/ keeps frame-ancestors 'none': the browser refuses.
	src = "/s/bully-best-case"
	run(t, ctx, chromedp.Navigate(host.URL))
	testwait.For(t, "the frame loading or failing", func() bool {
		url, res := frameState(t, ctx, `String(!!document.getElementById("main"))`)
		if res == `"true"` {
			t.Fatal("a normal playground page was framed by another site")
		}
		refused := strings.HasPrefix(url, "unreachable") || strings.HasPrefix(url, "chrome-error")
		if refused {
			t.Logf("refused as it should be: %s", url)
		}
		return refused
	})
}
