// Package e2e drives the real playground server with Debian's Chromium: what a student
// sees and clicks. One browser serves the whole package; every test opens its own tab.
package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/internal/testwait"
	"github.com/teach-dist/playground/web"
)

const chromium = "/usr/bin/chromium"

var (
	browser   context.Context // the package's one browser
	noBrowser string          // set when Chromium is not installed
	startErr  error           // set when it is installed but did not start
)

func TestMain(m *testing.M) {
	if _, err := os.Stat(chromium); err != nil {
		noBrowser = chromium + " is not installed (apt-get install chromium)"
		os.Exit(m.Run())
	}
	profile, err := os.MkdirTemp("", "playground-chromium-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("metrics-recording-only", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 720),
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelBrowser := chromedp.NewContext(alloc)
	if err := chromedp.Do(ctx); err != nil {
		startErr = err
	} else {
		browser = ctx
	}
	code := m.Run()
	cancelBrowser()
	cancelAlloc()
	os.RemoveAll(profile)
	os.Exit(code)
}

// needBrowser skips only when Chromium is not installed on a developer's machine; in
// CI (CI set) a missing browser is a failure, and so is one that does not start.
func needBrowser(t *testing.T) {
	t.Helper()
	if browser != nil {
		return
	}
	if startErr != nil {
		t.Fatalf("%s did not start: %v", chromium, startErr)
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("CI is set and the browser tests cannot run: %s", noBrowser)
	}
	t.Skip(noBrowser)
}

// server runs the real playground on 127.0.0.1 for one test.
func server(t *testing.T) *httptest.Server {
	t.Helper()
	srv := web.New(web.Options{})
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Close()
		ts.Close()
	})
	return ts
}

// tab opens a tab at width x height. Script errors, CSP refusals and any request that
// leaves the server fail the test.
func tab(t *testing.T, base string, width, height int64) context.Context {
	t.Helper()
	return openTab(t, base, width, height)
}

// freshTab is a tab in a new browser context: no cookie, no storage, no cache shared
// with any other tab, as a student's browser opening a link for the first time.
// Script errors fail the test; requests may go anywhere (a page of another site).
func freshTab(t *testing.T, width, height int64) context.Context {
	t.Helper()
	return openTab(t, "", width, height, chromedp.WithNewBrowserContext())
}

// openTab opens a tab; with base, a request that leaves that server fails the test.
func openTab(t *testing.T, base string, width, height int64, opts ...chromedp.ContextOption) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser, opts...)
	ctx, cancelTime := context.WithTimeout(ctx, 45*time.Second)
	t.Cleanup(func() {
		cancelTime()
		cancel()
	})
	var mu sync.Mutex
	var problems []string
	err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			d := e.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			problems = append(problems, fmt.Sprintf("script error at %s:%d: %s", d.URL, d.LineNumber+1, msg))
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				var parts []string
				for _, a := range e.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				problems = append(problems, "console error: "+strings.Join(parts, " "))
			}
		case *network.EventRequestWillBeSent:
			if base == "" {
				return
			}
			u := e.Request.URL
			ws := "ws" + strings.TrimPrefix(base, "http")
			if !strings.HasPrefix(u, base) && !strings.HasPrefix(u, ws) && !strings.HasPrefix(u, "data:") {
				problems = append(problems, "external request: "+u)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range problems {
			t.Error(p)
		}
	})
	run(t, ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if _, err := cdp.Call(ctx, tg, network.Enable, network.EnableParams{}); err != nil {
			return err
		}
		if _, err := cdp.Call(ctx, tg, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
			Width: width, Height: height, DeviceScaleFactor: 1, Mobile: width < 600,
		}); err != nil {
			return err
		}
		// No glide between steps: each step's view is final at once, so the test
		// polls for state instead of waiting for animations.
		_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-reduced-motion", Value: "reduce"}},
		})
		return err
	}))
	return ctx
}

func run(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

func eval[T any](t *testing.T, ctx context.Context, js string, opts ...chromedp.EvaluateOption) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js, opts...))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// ready waits for the page to have its first snapshot.
func ready(t *testing.T, ctx context.Context) {
	t.Helper()
	waitFor(t, ctx, `document.getElementById("main")?.dataset.ready === "true"`)
}

// waitFor polls a JS condition.
func waitFor(t *testing.T, ctx context.Context, cond string) {
	t.Helper()
	for try := 0; ; try++ {
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](cond, chromedp.WithPollingInterval(10*time.Millisecond), chromedp.WithPollingTimeout(testwait.Limit)))
		if err == nil {
			return
		}
		// A navigation replaces the page's JavaScript context under the poll: ask again.
		if try < 20 && (strings.Contains(err.Error(), "context") || strings.Contains(err.Error(), "navigated")) && ctx.Err() == nil {
			continue
		}
		t.Fatalf("waiting for %s: %v\n%s", cond, err, pageNow(ctx))
	}
}

// pageNow says what the page showed when a wait failed: where it is, the status, the
// latest toast, what has the focus and the step, to tell a slow server from a page
// that did something else.
func pageNow(ctx context.Context) string {
	const js = `(() => {
	  const t = (id) => document.getElementById(id)?.textContent?.trim().slice(0, 160) || "";
	  const a = document.activeElement;
	  return "page " + location.pathname + location.search + ", step " + (document.getElementById("main")?.dataset.step ?? "-") +
	    ", status " + JSON.stringify(t("status")) + ", toast " + JSON.stringify(document.querySelector(".toast:not([hidden])")?.textContent?.trim() || "") +
	    ", focus " + (a ? a.tagName + (a.id ? "#" + a.id : "") : "none");
	})()`
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	out, err := chromedp.Run(cctx, chromedp.Evaluate[string](js))
	if err != nil {
		return "(the page could not be read: " + err.Error() + ")"
	}
	return out
}

// viewState is what a student sees, minus the timeline's extent: it must be the same
// whether a step was reached live or by scrubbing.
const viewState = `JSON.stringify({
  svg: document.getElementById("view").outerHTML,
  vars: document.querySelector("#vars tbody").innerHTML,
  inflight: document.getElementById("inflight").innerHTML,
  code: document.getElementById("code-scroll").innerHTML,
  log: document.getElementById("log").innerHTML,
})`

type observed struct {
	Step  int
	Lit   []string
	Msgs  []int
	InCS  []string
	Held  bool
	Nodes int
}

const observe = `(() => {
  const app = document.getElementById("main");
  return {
    Step: Number(app.dataset.step),
    Lit: [...document.querySelectorAll(".rule.lit")].map((e) => e.dataset.rule),
    Msgs: [...document.querySelectorAll("#view g.msg")].map((e) => Number(e.dataset.id)),
    InCS: [...document.querySelectorAll("#view g.node.in-cs")].map((e) => e.dataset.id),
    Held: document.querySelector("#vars tbody").textContent.includes("HELD"),
    Nodes: document.querySelectorAll("#view g.node").length,
  };
})()`

// stepJS clicks "step" and resolves, after the next animation frame, with the time it
// took for the view to show the new step (or -1 if no step came).
const stepJS = `new Promise((resolve) => {
  const app = document.getElementById("main");
  const before = app.dataset.step;
  const t0 = performance.now();
  const done = (v) => { obs.disconnect(); clearTimeout(timer); resolve(v); };
  const obs = new MutationObserver(() => {
    if (app.dataset.step !== before) requestAnimationFrame(() => done(performance.now() - t0));
  });
  obs.observe(app, { attributes: true, attributeFilter: ["data-step"] });
  const timer = setTimeout(() => done(-1), 5000);
  document.getElementById("btn-step").click();
})`

func clickProcessAction(t *testing.T, ctx context.Context, id int, act string) {
	t.Helper()
	node := fmt.Sprintf(`#view g.node[data-id="%d"]`, id)
	button := fmt.Sprintf(`#menu button[data-act="%s"]`, act)
	// A new run (a reset, Run setup) redraws the processes on the next animation
	// frame: a click that lands on the old drawing opens no menu, or finds its node
	// gone. Click again until the menu shows, each try waiting for it a while; only a
	// menu that never comes fails.
	visible := fmt.Sprintf(`(() => { const b = document.querySelector(%q); return !!b && b.offsetParent !== null; })()`, button)
	for try := 0; ; try++ {
		// The node itself may be replaced between finding it and clicking it ("could not
		// find node"): that too is a click to make again.
		_, err := chromedp.Run(ctx, chromedp.Click(chromedp.CSS(node)))
		if err == nil {
			_, err = chromedp.Run(ctx, chromedp.Poll[bool](visible, chromedp.WithPollingInterval(10*time.Millisecond), chromedp.WithPollingTimeout(2*time.Second)))
		}
		if err == nil {
			break
		}
		if try == 10 || ctx.Err() != nil {
			t.Fatalf("the menu of P%d never offered %q: %v", id, act, err)
		}
	}
	run(t, ctx, chromedp.Click(chromedp.CSS(button)))
}

func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.ArtifactDir(), name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// The walk-through: catalogue, Ricart-Agrawala, two requests, step until both
// have been in the CS; the view, the pseudocode and the inspector follow; scrubbing
// back and forth gives the very same views.
func TestRicartAgrawalaWalkThrough(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 720)

	run(t, ctx, chromedp.Navigate(ts.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(`a[href="/play/ricart-agrawala?fresh=1"]`)))
	if n := eval[int](t, ctx, `document.querySelectorAll(".card").length`); n < 2 {
		t.Fatalf("the catalogue shows %d algorithms", n)
	}
	screenshot(t, ctx, "catalogue.png")
	run(t, ctx, chromedp.Click(chromedp.CSS(`.card[data-slug="ricart-agrawala"] h3 a`)))
	ready(t, ctx)

	first := eval[observed](t, ctx, observe)
	if first.Nodes != 5 {
		t.Fatalf("the SVG shows %d processes, want 5", first.Nodes)
	}
	clickProcessAction(t, ctx, 0, "request")
	waitFor(t, ctx, `document.querySelectorAll("#view g.msg").length === 4`)
	clickProcessAction(t, ctx, 1, "request")
	waitFor(t, ctx, `document.querySelectorAll("#view g.msg").length === 8`)
	// Follow every process's rules, not the last one clicked.
	run(t, ctx, chromedp.KeyEvent(kb.Escape))
	waitFor(t, ctx, `[...document.querySelectorAll(".rule.lit")].map((e) => e.dataset.rule).join() === "RA1,RA2"`)

	var lit []string // the highlighted rule, each time it changed
	addLit := func(o observed) {
		for _, r := range o.Lit {
			if len(lit) == 0 || lit[len(lit)-1] != r {
				lit = append(lit, r)
			}
		}
	}
	lit = append(lit, "RA1", "RA2") // a request lights both rules of the asking process
	seen := map[int]bool{}
	entered := map[string]bool{}
	views := map[int]string{}
	held := false
	maxMsgs := 0
	var latencies []float64
	for i := 0; i < 200; i++ {
		d := eval[float64](t, ctx, stepJS, chromedp.EvalAwaitPromise)
		if d < 0 {
			t.Fatalf("step %d: the view did not move", i)
		}
		latencies = append(latencies, d)
		waitFor(t, ctx, `document.getElementById("main").dataset.settled === "true"`)
		o := eval[observed](t, ctx, observe)
		addLit(o)
		for _, id := range o.Msgs {
			seen[id] = true
		}
		maxMsgs = max(maxMsgs, len(o.Msgs))
		for _, id := range o.InCS {
			entered[id] = true
		}
		held = held || o.Held
		views[o.Step] = eval[string](t, ctx, viewState)
		if i == 2 {
			screenshot(t, ctx, "ricart-agrawala-running.png")
		}
		if entered["0"] && entered["1"] && slices.Contains(lit, "RR1") && len(o.InCS) == 0 {
			break
		}
	}
	if !entered["0"] || !entered["1"] {
		t.Fatalf("after 200 steps, these entered the CS: %v", entered)
	}
	if !held {
		t.Error("the inspector never showed HELD")
	}
	// The narration says which case of RH1 applied, naming the requester.
	narration := eval[string](t, ctx, `document.getElementById("log").textContent`)
	if !regexp.MustCompile(`(answers|defers) P\d's request`).MatchString(narration) {
		t.Errorf("the narration never says why a request was answered or deferred:\n%s", narration)
	}
	if !inOrder(lit, "RA1", "RH1", "RE1", "RR1") {
		t.Errorf("the highlighted rule went %v; want RA1, RH1, RE1, RR1 in that order", lit)
	}
	now := eval[observed](t, ctx, observe)
	left := 0
	for id := range seen {
		if !slices.Contains(now.Msgs, id) {
			left++
		}
	}
	if len(seen) < 8 || left == 0 {
		t.Errorf("%d message elements appeared, %d left", len(seen), left)
	}
	t.Logf("lit rules: %v; up to %d messages at once", lit, maxMsgs)
	sort.Float64s(latencies)
	t.Logf("step to updated SVG: p50 %.1f ms, p95 %.1f ms over %d steps (budget 50 ms)",
		latencies[len(latencies)/2], latencies[len(latencies)*95/100], len(latencies))
	screenshot(t, ctx, "ricart-agrawala.png")

	// Scrub with the timeline: every step shown again is exactly what was shown live.
	last := now.Step
	for _, k := range []int{last - 3, 2, last - 7, last, 1, last} {
		if k < 1 {
			continue
		}
		run(t, ctx, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
			const tl = document.getElementById("timeline");
			tl.value = "%d";
			tl.dispatchEvent(new Event("input", { bubbles: true }));
		})()`, k)))
		waitFor(t, ctx, fmt.Sprintf(`document.getElementById("main").dataset.step === "%d" && document.getElementById("main").dataset.settled === "true"`, k))
		got := eval[string](t, ctx, viewState)
		want, ok := views[k]
		if !ok {
			continue
		}
		if got != want {
			t.Fatalf("step %d: the view after scrubbing differs from the live one\n%s", k, firstDiff(got, want))
		}
	}
}

// inOrder reports whether want appears in seq as a subsequence.
func inOrder(seq []string, want ...string) bool {
	k := 0
	for _, s := range seq {
		if k < len(want) && s == want[k] {
			k++
		}
	}
	return k == len(want)
}

func firstDiff(a, b string) string {
	var x, y map[string]string
	json.Unmarshal([]byte(a), &x)
	json.Unmarshal([]byte(b), &y)
	for k := range x {
		if x[k] != y[k] {
			i := 0
			for i < len(x[k]) && i < len(y[k]) && x[k][i] == y[k][i] {
				i++
			}
			lo := max(0, i-120)
			return fmt.Sprintf("%s differs at %d:\n scrubbed …%s\n live     …%s", k, i, clip(x[k][lo:], 300), clip(y[k][lo:], 300))
		}
	}
	return "(no difference found)"
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// Keyboard shortcuts drive the run as the buttons do.
func TestKeyboardShortcuts(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 720)
	run(t, ctx, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?n=3"))
	ready(t, ctx)
	run(t, ctx, chromedp.KeyEvent("2"), chromedp.KeyEvent("r"))
	waitFor(t, ctx, `document.querySelectorAll("#view g.msg").length === 2`)
	run(t, ctx, chromedp.KeyEvent(kb.Escape), chromedp.KeyEvent("."))
	waitFor(t, ctx, `document.getElementById("main").dataset.step === "1"`)
	run(t, ctx, chromedp.KeyEvent(","))
	waitFor(t, ctx, `document.getElementById("main").dataset.step === "0"`)
	run(t, ctx, chromedp.KeyEvent("1"), chromedp.KeyEvent("c"))
	waitFor(t, ctx, `document.querySelector('#view g.node[data-id="1"]').classList.contains("crashed")`)
	run(t, ctx, chromedp.KeyEvent("u"))
	waitFor(t, ctx, `!document.querySelector('#view g.node[data-id="1"]').classList.contains("crashed")`)
	run(t, ctx, chromedp.KeyEvent("+"))
	waitFor(t, ctx, `document.getElementById("speed").value === "2"`)
	run(t, ctx, chromedp.KeyEvent(kb.Escape), chromedp.KeyEvent(" "))
	waitFor(t, ctx, `document.getElementById("btn-play").getAttribute("aria-pressed") === "true"`)
	run(t, ctx, chromedp.KeyEvent(" "))
	waitFor(t, ctx, `document.getElementById("btn-play").getAttribute("aria-pressed") === "false"`)

	// After a digit picks a process (which focuses it), Space still plays and
	// pauses, and opens no menu; Enter opens the menu.
	run(t, ctx, chromedp.KeyEvent("2"))
	waitFor(t, ctx, `document.activeElement?.closest?.('#view g.node[data-id="2"]') !== null`)
	run(t, ctx, chromedp.KeyEvent(" "))
	waitFor(t, ctx, `document.getElementById("btn-play").getAttribute("aria-pressed") === "true"`)
	if !eval[bool](t, ctx, `document.getElementById("menu").hidden`) {
		t.Fatal("Space on a picked process opened its menu")
	}
	run(t, ctx, chromedp.KeyEvent(" "))
	waitFor(t, ctx, `document.getElementById("btn-play").getAttribute("aria-pressed") === "false"`)
	// A menu opened on the paused run closes when the run plays.
	run(t, ctx, chromedp.KeyEvent("2"))
	waitFor(t, ctx, `document.activeElement?.closest?.('#view g.node[data-id="2"]') !== null`)
	// Enter as a keyboard sends it: a key down the page prevents, so no keypress follows
	// (chromedp's KeyEvent would send the character to the menu's first button too).
	run(t, ctx, rawKey("Enter", 13))
	waitFor(t, ctx, `!document.getElementById("menu").hidden && document.getElementById("menu-title").textContent === "P2"`)
	screenshot(t, ctx, "keyboard-menu-open.png")
	run(t, ctx, chromedp.Click(chromedp.CSS("#btn-play")))
	waitFor(t, ctx, `document.getElementById("btn-play").getAttribute("aria-pressed") === "true" && document.getElementById("menu").hidden`)
	screenshot(t, ctx, "keyboard-menu-closed-on-play.png")
	run(t, ctx, chromedp.Click(chromedp.CSS("#btn-play")))
	waitFor(t, ctx, `document.getElementById("btn-play").getAttribute("aria-pressed") === "false"`)
	run(t, ctx, chromedp.KeyEvent("?"))
	waitFor(t, ctx, `document.getElementById("help").open`)
}

// rawKey presses and releases a key as a keyboard does: a key down the page may
// prevent, and no character event after it (chromedp's KeyEvent sends Enter's "\r" as
// a character too, which would click whatever button the key down focused).
func rawKey(key string, vk int64) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for _, typ := range []input.DispatchKeyEventType{input.DispatchKeyEventTypeRawKeyDown, input.DispatchKeyEventTypeKeyUp} {
			p := input.DispatchKeyEventParams{Type: typ, Key: key, Code: key, WindowsVirtualKeyCode: vk}
			if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, p); err != nil {
				return err
			}
		}
		return nil
	})
}

// Reloading the page resumes the same run at its step.
func TestReloadResumes(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := requestedRun(t, ts.URL)
	before := eval[string](t, ctx, `document.getElementById("main").dataset.session + "/" + document.getElementById("main").dataset.step`)
	run(t, ctx, chromedp.Reload())
	ready(t, ctx)
	after := eval[string](t, ctx, `document.getElementById("main").dataset.session + "/" + document.getElementById("main").dataset.step`)
	if before != after {
		t.Fatalf("before the reload %s, after %s", before, after)
	}
}

// requestedRun opens Ricart-Agrawala in a new tab, asks P2 into the CS and takes three
// steps.
func requestedRun(t *testing.T, base string) context.Context {
	t.Helper()
	ctx := tab(t, base, 1280, 720)
	run(t, ctx, chromedp.Navigate(base+"/play/ricart-agrawala"))
	ready(t, ctx)
	clickProcessAction(t, ctx, 2, "request")
	for range 3 {
		eval[float64](t, ctx, stepJS, chromedp.EvalAwaitPromise)
	}
	return ctx
}

// A phone-width page in the dark theme, on an election algorithm: nothing overflows
// sideways, and the legend and controls are there.
func TestPhoneWidthDarkTheme(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 390, 844)
	run(t, ctx, chromedp.Navigate(ts.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(".card")),
		chromedp.Evaluate[chromedp.Void](`localStorage.setItem("theme", "dark")`))
	path := "/play/ricart-agrawala"
	if eval[bool](t, ctx, `!!document.querySelector('.card[data-slug="bully"]')`) {
		path = "/play/bully"
	}
	run(t, ctx, chromedp.Navigate(ts.URL+path))
	ready(t, ctx)
	if theme := eval[string](t, ctx, `document.documentElement.dataset.theme`); theme != "dark" {
		t.Fatalf("theme %q", theme)
	}
	act := "request"
	if path == "/play/bully" {
		act = "elect"
	}
	clickProcessAction(t, ctx, 0, act)
	waitFor(t, ctx, `document.querySelectorAll("#view g.msg").length > 0`)
	for range 4 {
		eval[float64](t, ctx, stepJS, chromedp.EvalAwaitPromise)
	}
	if w := eval[int](t, ctx, `document.documentElement.scrollWidth - window.innerWidth`); w > 0 {
		t.Errorf("the page is %d px wider than the phone", w)
	}
	screenshot(t, ctx, "phone-dark.png")
	run(t, ctx, chromedp.EmulateViewport(1280, 720))
	waitFor(t, ctx, `document.getElementById("view").getBoundingClientRect().width > 600`)
	waitFor(t, ctx, `document.querySelector("#view g.node").getAttribute("transform") !== null`)
	screenshot(t, ctx, "desktop-dark.png")
}

// Budget probe: N=32 with 300 messages in flight, playing; the p95 frame time is
// measured with requestAnimationFrame (budget 16.7 ms) and reported.
func TestFrameTimeWithManyMessages(t *testing.T) {
	needBrowser(t)
	if testing.Short() {
		t.Skip("a performance probe")
	}
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 720)
	run(t, ctx, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?n=32&delay=40-80"))
	ready(t, ctx)
	conn := secondViewer(t, ts, ctx, nil)
	for i := range 10 {
		conn.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `{"type":"act","do":"request","node":%d}`, i))
	}
	waitFor(t, ctx, `document.querySelectorAll("#view g.msg").length >= 300`)
	run(t, ctx, chromedp.Click(chromedp.CSS("#btn-play")))
	stats := eval[[]float64](t, ctx, frameTimesJS, chromedp.EvalAwaitPromise)
	n := eval[int](t, ctx, `document.querySelectorAll("#view g.msg").length`)
	t.Logf("N=32, %d messages in flight: frame time p50 %.1f ms, p95 %.1f ms (budget 16.7 ms), worst %.1f ms, %d of %d frames over 25 ms",
		n, stats[0], stats[1], stats[2], int(stats[3]), int(stats[4]))
	screenshot(t, ctx, "n32.png")
}

// secondViewer connects another viewer to the page's session, which sends commands
// while the page follows. It reads every frame (so it is never the slow one) and hands
// each to seen, if given.
func secondViewer(t *testing.T, ts *httptest.Server, ctx context.Context, seen func([]byte)) *websocket.Conn {
	t.Helper()
	id := eval[string](t, ctx, `document.getElementById("main").dataset.session`)
	conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.URL, "http")+"/ws/"+id, http.Header{"Origin": {ts.URL}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	go func() {
		for {
			_, b, err := conn.ReadMessage()
			if err != nil {
				return
			}
			if seen != nil {
				seen(b)
			}
		}
	}()
	return conn
}

// frameTimesJS measures frame intervals for 3 s with requestAnimationFrame: at 60 Hz a
// frame on time is one vsync (16.7 ms), a dropped frame 33 ms or more. It resolves to
// [p50, p95, worst, frames over 25 ms, frames].
const frameTimesJS = `new Promise((resolve) => {
		const times = [];
		let last = performance.now();
		const end = last + 3000;
		const tick = (now) => {
			times.push(now - last);
			last = now;
			if (now < end) requestAnimationFrame(tick);
			else {
				times.sort((a, b) => a - b);
				const q = (p) => times[Math.min(times.length - 1, Math.floor(times.length * p))];
				resolve([q(0.5), q(0.95), times[times.length - 1], times.filter((x) => x > 25).length, times.length]);
			}
		};
		requestAnimationFrame(tick);
	})`

// The run setup form starts a new run; a bad setup is explained, not run.
func TestSetupFormStartsANewRun(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 720)
	run(t, ctx, chromedp.Navigate(ts.URL+"/play/ricart-agrawala"))
	ready(t, ctx)
	set := func(delayMin, nodes string) {
		t.Helper()
		run(t, ctx, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
			document.querySelector(".setup details").open = true;
			const f = document.getElementById("setup-form").elements;
			f.nodes.value = %q; f.dmin.value = %q; f.seed.value = "7";
			document.querySelector("#setup-form button[type=submit]").click();
		})()`, nodes, delayMin)))
	}
	set("9", "4")
	waitFor(t, ctx, `document.getElementById("setup-error").textContent.includes("network.delay")`)
	if n := eval[int](t, ctx, `document.querySelectorAll("#view g.node").length`); n != 5 {
		t.Fatalf("a refused setup changed the run: %d processes", n)
	}
	set("1", "4")
	waitFor(t, ctx, `document.querySelectorAll("#view g.node").length === 4 && document.getElementById("setup-error").textContent === ""`)
	screenshot(t, ctx, "setup.png")
}

// A curated scenario opens from the catalogue in the playground, with its story.
func TestCuratedScenarioFromTheCatalogue(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 720)
	// A card's scenarios fold under "N curated scenarios": open the first card's.
	run(t, ctx, chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`.scenarios summary`)),
		chromedp.Click(chromedp.CSS(`.scenarios summary`)), chromedp.WaitVisible(chromedp.CSS(`.scenarios a`)))
	title := eval[string](t, ctx, `document.querySelector(".scenarios a").textContent`)
	run(t, ctx, chromedp.Click(chromedp.CSS(`.scenarios a`)))
	ready(t, ctx)
	if got := eval[string](t, ctx, `document.querySelector(".about summary")?.textContent || ""`); got != title {
		t.Fatalf("the playground shows %q, the catalogue said %q", got, title)
	}
	// The processes are spread over the view: no two circles overlap.
	overlaps := eval[int](t, ctx, `(() => {
		const c = [...document.querySelectorAll("#view g.node .body")].map((e) => e.getBoundingClientRect());
		let n = 0;
		for (let i = 0; i < c.length; i++) for (let j = i + 1; j < c.length; j++) {
			const d = Math.hypot(c[i].x - c[j].x, c[i].y - c[j].y);
			if (d < c[i].width) n++;
		}
		return n;
	})()`)
	if overlaps > 0 {
		t.Fatalf("%d pairs of processes overlap", overlaps)
	}
	screenshot(t, ctx, "curated.png")
}
