package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/teach-dist/playground/runtime/causal"
)

// ---- helpers ----

func httpGet(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return b
}

type stEvent struct {
	Seq  int64
	Type string
	Node *int
	Msg  *struct{ ID int64 }
}

type stBatch struct {
	Step   int
	Events []stEvent
	Raw    []json.RawMessage `json:"-"`
}

type stTimeline struct {
	Horizon int
	Batches []stBatch
}

func fetchTimeline(t *testing.T, base, id string) stTimeline {
	t.Helper()
	var tl stTimeline
	if err := json.Unmarshal(httpGet(t, base+"/api/sessions/"+id+"/timeline"), &tl); err != nil {
		t.Fatal(err)
	}
	return tl
}

type traceCounts struct {
	sends, delivers, drops int
	lastSeq                int64
}

func countTrace(t *testing.T, trace []byte) traceCounts {
	t.Helper()
	c := traceCounts{lastSeq: -1}
	for _, line := range bytes.Split(bytes.TrimSpace(trace), []byte("\n")) {
		var ev stEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatalf("trace line %q: %v", line, err)
		}
		switch ev.Type {
		case "send":
			c.sends++
		case "deliver":
			c.delivers++
		case "drop":
			c.drops++
		}
		c.lastSeq = ev.Seq
	}
	return c
}

func sessionID(t *testing.T, ctx context.Context) string {
	t.Helper()
	return eval[string](t, ctx, `document.getElementById("main").dataset.session`)
}

// openDiagram opens the space-time panel and waits for its timeline.
func openDiagram(t *testing.T, ctx context.Context) {
	t.Helper()
	run(t, ctx, chromedp.Click(chromedp.CSS("#st-toggle")))
	waitFor(t, ctx, `document.getElementById("spacetime").dataset.state === "ready" && !!document.querySelector("#st-diagram .st-dot")`)
}

// synced waits until the diagram holds the session's whole trace and shows step.
func synced(t *testing.T, ctx context.Context, c traceCounts, step int) {
	t.Helper()
	waitFor(t, ctx, fmt.Sprintf(`(() => {
		const s = document.getElementById("spacetime").dataset;
		return s.state === "ready" && s.seq === "%d" && s.step === "%d" && s.stepDrawn === "%d";
	})()`, c.lastSeq, step, step))
}

// stepToQuiet steps the run until nothing is left to happen (at most max steps).
func stepToQuiet(t *testing.T, ctx context.Context, max int) int {
	t.Helper()
	for range max {
		if eval[bool](t, ctx, `document.getElementById("status").dataset.state === "quiet"`) {
			break
		}
		if d := eval[float64](t, ctx, stepJS, chromedp.EvalAwaitPromise); d < 0 {
			break
		}
	}
	return eval[int](t, ctx, `Number(document.getElementById("main").dataset.step)`)
}

type dotInfo struct {
	Col, P, Step int
	Rel          string
}

const readDots = `[...document.querySelectorAll("#st-diagram .st-dot")].map((g) => ({
	Col: Number(g.dataset.col), P: Number(g.dataset.p), Step: Number(g.dataset.step),
	Rel: g.classList.contains("sel") ? "sel" : g.classList.contains("past") ? "past" : g.classList.contains("future") ? "future" : "",
}))`

// requestCS makes process id ask for the CS through its menu, and waits until it has.
func requestCS(t *testing.T, ctx context.Context, id int) {
	t.Helper()
	clickProcessAction(t, ctx, id, "request")
	waitFor(t, ctx, fmt.Sprintf(`document.querySelector('#vars tbody tr[data-id="%d"]')?.textContent.includes("REQUESTED")`, id))
}

// clickDot clicks the event of process position p in column col where it shows on
// screen (the diagram redraws its elements, so a node handle would not last).
func clickDot(t *testing.T, ctx context.Context, col, p int) {
	t.Helper()
	sel := fmt.Sprintf(`#st-diagram .st-dot[data-col="%d"][data-p="%d"] .body`, col, p)
	waitFor(t, ctx, fmt.Sprintf(`document.querySelector('%s') !== null`, sel))
	xy := eval[[2]float64](t, ctx, fmt.Sprintf(`(() => {
		const e = document.querySelector('%s');
		e.scrollIntoView({ block: "nearest", inline: "nearest" });
		const r = e.getBoundingClientRect();
		return [r.x + r.width / 2, r.y + r.height / 2];
	})()`, sel))
	// The scroll redraws the diagram: click once the same dot is there again.
	waitFor(t, ctx, fmt.Sprintf(`document.querySelector('%s') !== null`, sel))
	run(t, ctx, chromedp.MouseClickXY(xy[0], xy[1]))
}

// captureBlobs makes the page keep every blob it hands to a download, and refuses the
// downloads themselves (nothing is written to disk).
func captureBlobs(t *testing.T, ctx context.Context) {
	t.Helper()
	run(t, ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{Behavior: cdpbrowser.SetDownloadBehaviorBehaviorDeny})
		return err
	}))
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`(() => {
		window.__blobs = [];
		URL.createObjectURL = (b) => { window.__blobs.push(b); return "data:,"; };
		URL.revokeObjectURL = () => {};
	})()`))
}

func lastBlob(t *testing.T, ctx context.Context, n int) string {
	t.Helper()
	waitFor(t, ctx, fmt.Sprintf(`window.__blobs.length >= %d`, n))
	return eval[string](t, ctx, fmt.Sprintf(`window.__blobs[%d].text()`, n-1), chromedp.EvalAwaitPromise)
}

// svgDoc parses an exported SVG and counts its groups by class.
type svgNode struct {
	XMLName  xml.Name
	Attrs    []xml.Attr `xml:",any,attr"`
	Children []svgNode  `xml:",any"`
	Text     string     `xml:",chardata"`
}

func (n *svgNode) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func (n *svgNode) walk(f func(*svgNode)) {
	f(n)
	for i := range n.Children {
		n.Children[i].walk(f)
	}
}

func parseSVG(t *testing.T, text string) *svgNode {
	t.Helper()
	var root svgNode
	if err := xml.Unmarshal([]byte(text), &root); err != nil {
		t.Fatalf("the file is not XML: %v\n%s", err, clip(text, 500))
	}
	if root.XMLName.Local != "svg" || root.XMLName.Space != "http://www.w3.org/2000/svg" {
		t.Fatalf("the root is %v, not an SVG", root.XMLName)
	}
	if strings.Contains(text, "var(") || strings.Contains(text, "style=") {
		t.Fatalf("the file still depends on the page's CSS:\n%s", clip(text, 800))
	}
	// Under everything a white background the size of the view box: a slide shows the
	// drawing on white whatever the page's theme was.
	vb := strings.Fields(strings.ReplaceAll(root.attr("viewBox"), ",", " "))
	if len(root.Children) == 0 || len(vb) != 4 {
		t.Fatalf("the file has no view box or no content:\n%s", clip(text, 500))
	}
	bg := root.Children[0]
	if bg.XMLName.Local != "rect" || bg.attr("fill") != "#ffffff" ||
		[4]string{bg.attr("x"), bg.attr("y"), bg.attr("width"), bg.attr("height")} != [4]string(vb) {
		t.Fatalf("the file does not start with a white background over its view box %v:\n%s", vb, clip(text, 500))
	}
	return &root
}

func countClass(root *svgNode, tag string, classes ...string) int {
	n := 0
	root.walk(func(e *svgNode) {
		if e.XMLName.Local != tag {
			return
		}
		have := strings.Fields(e.attr("class"))
		for _, c := range classes {
			if !slices.Contains(have, c) {
				return
			}
		}
		n++
	})
	return n
}

// ---- tests ----

// A scripted Ricart-Agrawala run: the diagram draws one line per process and one
// arrow per message, as many delivered and lost as the trace says; clicking an event
// seeks the run to its step; stepping back dims what comes after, and an intervention
// made back there rewrites the diagram's future.
func TestSpacetimeDiagramFollowsTheRun(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 720)
	run(t, ctx, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?n=4&seed=1&loss=0.2"))
	ready(t, ctx)
	openDiagram(t, ctx)
	id := sessionID(t, ctx)

	requestCS(t, ctx, 0)
	requestCS(t, ctx, 2)
	end := stepToQuiet(t, ctx, 200)
	trace := httpGet(t, ts.URL+"/api/sessions/"+id+"/trace")
	c := countTrace(t, trace)
	synced(t, ctx, c, end)
	if c.drops == 0 || c.delivers < 8 {
		t.Fatalf("the scripted run should lose a message and deliver many: %+v", c)
	}

	type shape struct {
		Labels, Lines, Msgs, Delivered, Dropped, InFlight, Later int
	}
	got := eval[shape](t, ctx, `(() => {
		const q = (s) => document.querySelectorAll("#st-diagram " + s).length;
		return {
			Labels: document.querySelectorAll("#st-labels .st-label").length,
			Lines: q(".st-line:not(.later)"), Msgs: q(".st-msg"), Delivered: q(".st-msg.delivered"),
			Dropped: q(".st-msg.dropped"), InFlight: q(".st-msg.inflight"), Later: q(".st-dot.later"),
		};
	})()`)
	want := shape{Labels: 4, Lines: 4, Msgs: c.sends, Delivered: c.delivers, Dropped: c.drops, InFlight: c.sends - c.delivers - c.drops}
	if got != want {
		t.Fatalf("the diagram shows %+v; the trace says %+v", got, want)
	}
	screenshot(t, ctx, "spacetime-end.png")

	// Click an event half way: the run goes back to its step.
	dots := eval[[]dotInfo](t, ctx, readDots)
	target := dots[len(dots)/2]
	if target.Step <= 0 || target.Step >= end {
		t.Fatalf("no event half way through: %+v", target)
	}
	clickDot(t, ctx, target.Col, target.P)
	waitFor(t, ctx, fmt.Sprintf(`document.getElementById("main").dataset.step === "%d"`, target.Step))
	waitFor(t, ctx, fmt.Sprintf(`document.getElementById("timeline").value === "%d" &&
		document.getElementById("readout").textContent.startsWith("step %d of %d")`, target.Step, target.Step, end))
	synced(t, ctx, c, target.Step)
	later := eval[int](t, ctx, `document.querySelectorAll("#st-diagram .st-dot.later").length`)
	wantLater := 0
	for _, d := range eval[[]dotInfo](t, ctx, readDots) {
		if d.Step > target.Step {
			wantLater++
		}
	}
	if later == 0 || later != wantLater {
		t.Fatalf("after seeking to step %d, %d events are dimmed; %d come after it", target.Step, later, wantLater)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("#st-diagram .st-msg").length`); n != c.sends {
		t.Fatalf("after seeking back the diagram lost its future: %d arrows, want %d", n, c.sends)
	}
	screenshot(t, ctx, "spacetime-seek.png")

	// The keyboard: focus the diagram, move, Enter jumps.
	run(t, ctx, chromedp.Focus(chromedp.CSS("#st-scroll")), chromedp.KeyEvent(kb.ArrowRight), chromedp.KeyEvent(kb.ArrowRight), chromedp.KeyEvent(kb.Enter))
	waitFor(t, ctx, `document.querySelector("#st-diagram .st-dot.active.sel") !== null`)
	kstep := eval[int](t, ctx, `Number(document.querySelector("#st-diagram .st-dot.active").dataset.step)`)
	waitFor(t, ctx, fmt.Sprintf(`document.getElementById("main").dataset.step === "%d"`, kstep))

	// An intervention back there rewrites the future: the diagram fetches it again.
	run(t, ctx, chromedp.KeyEvent(kb.Escape))
	requestCS(t, ctx, 3)
	waitFor(t, ctx, fmt.Sprintf(`document.getElementById("main").dataset.step === "%d" && document.getElementById("spacetime").dataset.state === "ready"`, kstep))
	end2 := stepToQuiet(t, ctx, 200)
	trace2 := httpGet(t, ts.URL+"/api/sessions/"+id+"/trace")
	c2 := countTrace(t, trace2)
	synced(t, ctx, c2, end2)
	tl := fetchTimeline(t, ts.URL, id)
	cols := 0
	for _, b := range tl.Batches {
		if len(b.Events) > 0 {
			cols++
		}
	}
	got2 := eval[[3]int](t, ctx, `(() => {
		const s = document.getElementById("spacetime").dataset;
		return [Number(s.columns), document.querySelectorAll("#st-diagram .st-msg").length, document.querySelectorAll("#st-diagram .st-msg.delivered").length];
	})()`)
	if got2 != [3]int{cols, c2.sends, c2.delivers} {
		t.Fatalf("after the rewrite the diagram has %v (columns, arrows, delivered); the timeline %v", got2, [3]int{cols, c2.sends, c2.delivers})
	}
}

// causal.js computes the same clocks as runtime/causal on a real trace, and the
// textbook values on a hand-made one; its causal past and future are the events
// happened-before says.
func TestSpacetimeCausalJSMatchesGo(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 720)
	run(t, ctx, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?n=3&seed=7"))
	ready(t, ctx)
	requestCS(t, ctx, 1)
	requestCS(t, ctx, 2)
	stepToQuiet(t, ctx, 100)
	id := sessionID(t, ctx)
	trace := httpGet(t, ts.URL+"/api/sessions/"+id+"/trace")
	ids := []int{0, 1, 2}
	evs, err := causal.ParseTrace(trace, ids)
	if err != nil {
		t.Fatal(err)
	}
	want := causal.Compute(3, evs)
	mid := -1 // a delivery half way, whose past and future both have events
	for i := len(evs) / 2; i < len(evs); i++ {
		if evs[i].Type == "deliver" {
			mid = i
			break
		}
	}
	if mid < 0 {
		t.Fatal("no delivery in the second half of the run")
	}

	type jsClock struct {
		Process, Lamport int
		Vector           []int
	}
	type result struct {
		Clocks       []jsClock
		Past, Future []int
		Hand         []jsClock
		HB           []bool
		AtStep       []struct {
			Lamport int
			Vector  []int
		}
	}
	got := eval[result](t, ctx, fmt.Sprintf(`(async () => {
		const src = document.querySelector('script[type="module"][src$="app.js"]').src.replace(/app\.js$/, "causal.js");
		const m = await import(src);
		const text = await (await fetch("/api/sessions/%s/trace")).text();
		const events = text.trim().split("\n").map((l) => JSON.parse(l));
		const ids = [0, 1, 2];
		const norm = (cs) => cs.map((c) => ({ Process: c.process, Lamport: c.lamport, Vector: c.vector || [] }));
		const hand = [
			{ type: "rule", node: 0, step: 0 },
			{ type: "send", node: 0, msg: { id: 1 }, step: 0 },
			{ type: "request", node: 0, step: 0 },
			{ type: "timer", node: 2, step: 1 },
			{ type: "deliver", node: 1, msg: { id: 1 }, step: 2 },
			{ type: "send", node: 1, msg: { id: 2 }, step: 2 },
			{ type: "send", node: 1, msg: { id: 3 }, step: 2 },
			{ type: "drop", node: 1, msg: { id: 3 }, step: 2 },
			{ type: "violation", step: 2 },
			{ type: "deliver", node: 2, msg: { id: 2 }, step: 3 },
			{ type: "crash", node: 0, step: 4 },
			{ type: "recover", node: 0, step: 5 },
		];
		const hc = m.vectorClocks(hand, ids);
		return {
			Clocks: norm(m.vectorClocks(events, ids)),
			Past: m.causalPast(events, ids, %d),
			Future: m.causalFuture(events, ids, %d),
			Hand: norm(hc),
			HB: [m.happenedBefore(hc[1], hc[4]), m.happenedBefore(hc[2], hc[4]), m.happenedBefore(hc[5], hc[9]), m.happenedBefore(hc[6], hc[9]), m.happenedBefore(hc[4], hc[1])],
			AtStep: m.clocksAtStep(hand, ids, 2),
		};
	})()`, id, mid, mid), chromedp.EvalAwaitPromise)

	if len(got.Clocks) != len(want) {
		t.Fatalf("%d clocks from JS, %d from Go", len(got.Clocks), len(want))
	}
	for i, w := range want {
		g := got.Clocks[i]
		wv := w.Vector
		if wv == nil {
			wv = []int{}
		}
		if g.Process != w.Process || g.Lamport != w.Lamport || !slices.Equal(g.Vector, wv) {
			t.Fatalf("event %d (%s): JS says %+v, Go %+v", i, evs[i].Type, g, w)
		}
	}
	var past, future []int
	for i := range evs {
		if causal.HappenedBefore(want[i], want[mid]) {
			past = append(past, i)
		}
		if causal.HappenedBefore(want[mid], want[i]) {
			future = append(future, i)
		}
	}
	if !slices.Equal(got.Past, past) || !slices.Equal(got.Future, future) || len(past) == 0 || len(future) == 0 {
		t.Fatalf("event %d: JS past %v future %v; Go past %v future %v", mid, got.Past, got.Future, past, future)
	}

	hand := []jsClock{
		{-1, 0, []int{}}, {0, 1, []int{1, 0, 0}}, {0, 2, []int{2, 0, 0}}, {2, 1, []int{0, 0, 1}},
		{1, 2, []int{1, 1, 0}}, {1, 3, []int{1, 2, 0}}, {1, 4, []int{1, 3, 0}}, {-1, 0, []int{}},
		{-1, 0, []int{}}, {2, 4, []int{1, 2, 2}}, {0, 3, []int{3, 0, 0}}, {0, 4, []int{4, 0, 0}},
	}
	for i, w := range hand {
		g := got.Hand[i]
		if g.Process != w.Process || g.Lamport != w.Lamport || !slices.Equal(g.Vector, w.Vector) {
			t.Errorf("hand-made event %d: %+v, want %+v", i, g, w)
		}
	}
	if !slices.Equal(got.HB, []bool{true, false, true, false, false}) {
		t.Errorf("happenedBefore on the hand-made trace: %v", got.HB)
	}
	at := got.AtStep
	if len(at) != 3 || at[0].Lamport != 2 || !slices.Equal(at[1].Vector, []int{1, 3, 0}) || !slices.Equal(at[2].Vector, []int{0, 0, 1}) {
		t.Errorf("clocks at step 2: %+v", at)
	}
}

// Clicking an event lights exactly its causal past and future, as happened-before
// over the trace says (runtime/causal, on the timeline fetched over HTTP); the clocks
// table shows each process's clocks at the step.
func TestSpacetimeCausalHighlight(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 720)
	run(t, ctx, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?n=3&seed=4"))
	ready(t, ctx)
	openDiagram(t, ctx)
	requestCS(t, ctx, 0)
	requestCS(t, ctx, 1)
	end := stepToQuiet(t, ctx, 100)
	id := sessionID(t, ctx)
	c := countTrace(t, httpGet(t, ts.URL+"/api/sessions/"+id+"/trace"))
	synced(t, ctx, c, end)

	// The dots, as the timeline's batches make them, with their clocks from Go.
	tl := fetchTimeline(t, ts.URL, id)
	type dot struct {
		col, p, step int
		evs          []int // indexes into all
	}
	var all []causal.Event
	var dots []dot
	col := 0
	for _, b := range tl.Batches {
		if len(b.Events) == 0 {
			continue
		}
		here := map[int]int{}
		for _, ev := range b.Events {
			k := len(all)
			e := causal.Event{Type: ev.Type, Node: -1}
			if ev.Node != nil {
				e.Node = *ev.Node // ids are 0..2 here
			}
			if ev.Msg != nil {
				e.Msg = ev.Msg.ID
			}
			all = append(all, e)
			if ev.Node == nil || ev.Type == "drop" {
				continue
			}
			d, ok := here[*ev.Node]
			if !ok {
				d = len(dots)
				here[*ev.Node] = d
				dots = append(dots, dot{col: col, p: *ev.Node, step: b.Step})
			}
			dots[d].evs = append(dots[d].evs, k)
		}
		col++
	}
	clocks := causal.Compute(3, all)
	// A dot's range: its first and last process events or, with none, its process's
	// events around it.
	rng := func(d dot) (lo, hi int) {
		lo, hi = -1, -1
		for _, k := range d.evs {
			if clocks[k].Process >= 0 {
				if lo < 0 {
					lo = k
				}
				hi = k
			}
		}
		if lo >= 0 {
			return lo, hi
		}
		for k := range all {
			if clocks[k].Process == d.p {
				if k < d.evs[0] {
					hi = k
				} else if lo < 0 {
					lo = k
				}
			}
		}
		return lo, hi
	}
	upTo := func(a, b int) bool { return a == b || causal.HappenedBefore(clocks[a], clocks[b]) }
	var chosen dot
	for _, d := range dots[len(dots)/3:] {
		if slices.ContainsFunc(d.evs, func(k int) bool { return all[k].Type == "deliver" }) {
			chosen = d
			break
		}
	}
	lo, hi := rng(chosen)
	want := map[string]string{}
	np, nf := 0, 0
	for _, d := range dots {
		key := fmt.Sprintf("%d/%d", d.col, d.p)
		olo, ohi := rng(d)
		switch {
		case d.col == chosen.col && d.p == chosen.p:
			want[key] = "sel"
		case olo >= 0 && hi >= 0 && upTo(olo, hi):
			want[key] = "past"
			np++
		case lo >= 0 && ohi >= 0 && upTo(lo, ohi):
			want[key] = "future"
			nf++
		default:
			want[key] = ""
		}
	}
	if np == 0 || nf == 0 || np+nf+1 == len(dots) {
		t.Fatalf("the chosen event (%+v) should have a past, a future and concurrent events: %d past, %d future of %d", chosen, np, nf, len(dots))
	}

	clickDot(t, ctx, chosen.col, chosen.p)
	waitFor(t, ctx, fmt.Sprintf(`document.getElementById("main").dataset.step === "%d" && document.getElementById("spacetime").dataset.stepDrawn === "%d"`, chosen.step, chosen.step))
	waitFor(t, ctx, `document.querySelector("#st-diagram .st-dot.sel") !== null`)
	got := map[string]string{}
	for _, d := range eval[[]dotInfo](t, ctx, readDots) {
		got[fmt.Sprintf("%d/%d", d.Col, d.P)] = d.Rel
	}
	if len(got) != len(want) {
		t.Fatalf("the diagram has %d events, the timeline %d", len(got), len(want))
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("event %s: lit %q, want %q", k, got[k], w)
		}
	}
	// Arrows: a message is lit as past when its delivery is in the past, as future when
	// its sending is in the future.
	lit := eval[[2]int](t, ctx, `[document.querySelectorAll("#st-diagram .st-msg.past").length, document.querySelectorAll("#st-diagram .st-msg.future").length]`)
	if lit[0] == 0 || lit[1] == 0 {
		t.Errorf("lit arrows: %d past, %d future", lit[0], lit[1])
	}
	if legend := eval[string](t, ctx, `document.querySelector("#spacetime .st-legend").textContent`); !strings.Contains(legend, "causal past") || !strings.Contains(legend, "causal future") {
		t.Errorf("the legend does not explain the highlighting: %q", legend)
	}

	// The clocks at this step: each process's last event up to it.
	run(t, ctx, chromedp.Click(chromedp.CSS("#st-clocks")))
	waitFor(t, ctx, `document.querySelectorAll("#st-clock-table tbody tr").length === 3`)
	rows := eval[[]string](t, ctx, `[...document.querySelectorAll("#st-clock-table tbody tr")].map((tr) => [...tr.cells].slice(1).map((c) => c.textContent).join(" "))`)
	for p := range 3 {
		last := -1
		for _, d := range dots {
			if d.p == p && d.step <= chosen.step {
				for _, k := range d.evs {
					if clocks[k].Process >= 0 {
						last = k
					}
				}
			}
		}
		w := "0 [0, 0, 0]"
		if last >= 0 {
			w = fmt.Sprintf("%d [%s]", clocks[last].Lamport, strings.Trim(strings.Join(strings.Fields(fmt.Sprint(clocks[last].Vector)), ", "), "[]"))
		}
		if rows[p] != w {
			t.Errorf("P%d's clocks at step %d: %q, want %q", p, chosen.step, rows[p], w)
		}
	}
	screenshot(t, ctx, "spacetime-causal.png")
}

// The SVG downloads are self-contained files: the diagram with one arrow per message
// (as many delivered as the trace says), the processes view with every process; both
// in the light theme's colours even when the page is dark.
func TestSpacetimeSVGDownloads(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 720)
	run(t, ctx, chromedp.Navigate(ts.URL+"/"), chromedp.Evaluate[chromedp.Void](`localStorage.setItem("theme", "dark")`))
	run(t, ctx, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?n=3&seed=2"))
	ready(t, ctx)
	openDiagram(t, ctx)
	requestCS(t, ctx, 2)
	end := stepToQuiet(t, ctx, 100)
	id := sessionID(t, ctx)
	c := countTrace(t, httpGet(t, ts.URL+"/api/sessions/"+id+"/trace"))
	synced(t, ctx, c, end)
	captureBlobs(t, ctx)

	run(t, ctx, chromedp.Click(chromedp.CSS("#st-svg")))
	text := lastBlob(t, ctx, 1)
	root := parseSVG(t, text)
	if n := countClass(root, "g", "st-msg"); n != c.sends {
		t.Errorf("the diagram file has %d arrows; the run sent %d messages", n, c.sends)
	}
	if n := countClass(root, "g", "st-msg", "delivered"); n != c.delivers {
		t.Errorf("the diagram file has %d delivered arrows; the trace %d deliveries", n, c.delivers)
	}
	labels := 0
	root.walk(func(e *svgNode) {
		if e.XMLName.Local == "text" && strings.Contains(e.attr("class"), "st-export-label") {
			labels++
			if f := e.attr("fill"); f != "#161c24" {
				t.Errorf("label %q is filled %q, not the light theme's ink", e.Text, f)
			}
		}
	})
	if labels != 3 {
		t.Errorf("the diagram file names %d processes, want 3", labels)
	}
	if theme := eval[string](t, ctx, `document.documentElement.dataset.theme`); theme != "dark" {
		t.Errorf("the export left the page in the %q theme", theme)
	}

	run(t, ctx, chromedp.Click(chromedp.CSS("#st-view-svg")))
	view := parseSVG(t, lastBlob(t, ctx, 2))
	if n := countClass(view, "g", "node"); n != 3 {
		t.Errorf("the view file has %d processes, want 3", n)
	}
	fills := 0
	view.walk(func(e *svgNode) {
		if strings.HasPrefix(e.attr("fill"), "#") {
			fills++
		}
	})
	if fills < 6 {
		t.Errorf("the view file has %d concrete fills", fills)
	}

	// The page's Export menu offers both as well.
	if eval[bool](t, ctx, `!!document.getElementById("export-list")`) {
		run(t, ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById("export-spacetime-svg").click()`))
		if again := lastBlob(t, ctx, 3); countClass(parseSVG(t, again), "g", "st-msg") != c.sends {
			t.Error("the Export menu's diagram differs")
		}
	}
}

// Performance probe: 32 processes and a few thousand events. Reported: frame times
// while the run plays with the diagram open, while the diagram scrolls through the
// run, and the time to fetch and build the whole timeline.
func TestSpacetimeManyEvents(t *testing.T) {
	needBrowser(t)
	if testing.Short() {
		t.Skip("a performance probe")
	}
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 720)
	run(t, ctx, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?n=32&delay=1-3&cs=1"))
	ready(t, ctx)
	openDiagram(t, ctx)
	id := sessionID(t, ctx)
	const frames = `new Promise((resolve) => {
		const times = [];
		let last = performance.now();
		const end = last + 2000;
		const s = document.getElementById("st-scroll");
		const tick = (now) => {
			times.push(now - last);
			last = now;
			if (window.__scroll) s.scrollLeft += 160;
			if (now < end) requestAnimationFrame(tick);
			else {
				times.sort((a, b) => a - b);
				const q = (p) => times[Math.min(times.length - 1, Math.floor(times.length * p))];
				resolve([q(0.5), q(0.95), times[times.length - 1], times.length]);
			}
		};
		requestAnimationFrame(tick);
	})`
	// Requests from 24 processes, sent over the page's own command channel; play fast.
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`(() => {
		const cmd = (detail) => document.dispatchEvent(new CustomEvent("pg:command", { detail }));
		for (let i = 0; i < 24; i++) cmd({ type: "act", do: "request", node: i });
		cmd({ type: "speed", speed: 4 });
		cmd({ type: "play" });
	})()`))
	playing := eval[[]float64](t, ctx, frames, chromedp.EvalAwaitPromise)
	waitFor(t, ctx, `document.getElementById("status").dataset.state === "quiet"`)
	step := eval[int](t, ctx, `Number(document.getElementById("main").dataset.step)`)
	c := countTrace(t, httpGet(t, ts.URL+"/api/sessions/"+id+"/trace"))
	synced(t, ctx, c, step)

	run(t, ctx, chromedp.Evaluate[chromedp.Void](`(() => { document.getElementById("st-scroll").scrollLeft = 0; window.__scroll = true; })()`))
	scrolling := eval[[]float64](t, ctx, frames, chromedp.EvalAwaitPromise)
	load := eval[float64](t, ctx, `new Promise((resolve) => {
		const sec = document.getElementById("spacetime");
		const t0 = performance.now();
		document.getElementById("st-toggle").click();
		document.getElementById("st-toggle").click();
		const wait = () => sec.dataset.state === "ready" && document.querySelector("#st-diagram > g") ? resolve(performance.now() - t0) : requestAnimationFrame(wait);
		requestAnimationFrame(wait);
	})`, chromedp.EvalAwaitPromise)
	// Half way through the run, where every process is busy.
	drawn := eval[int](t, ctx, `new Promise((resolve) => {
		const s = document.getElementById("st-scroll");
		s.scrollLeft = s.scrollWidth / 2;
		requestAnimationFrame(() => requestAnimationFrame(() => resolve(document.querySelectorAll("#st-diagram .st-dot, #st-diagram .st-msg").length)));
	})`, chromedp.EvalAwaitPromise)
	cols := eval[int](t, ctx, `Number(document.getElementById("spacetime").dataset.columns)`)
	t.Logf("N=32, %d events in %d columns. Frame time playing (diagram open): p50 %.1f ms, p95 %.1f ms, worst %.1f ms over %d frames; "+
		"scrolling the diagram: p50 %.1f ms, p95 %.1f ms, worst %.1f ms over %d frames (%d elements drawn half way); fetch and build the timeline: %.0f ms",
		c.lastSeq+1, cols, playing[0], playing[1], playing[2], int(playing[3]), scrolling[0], scrolling[1], scrolling[2], int(scrolling[3]), drawn, load)
	if c.lastSeq < 2000 {
		t.Errorf("the probe produced only %d events", c.lastSeq+1)
	}
	screenshot(t, ctx, "spacetime-n32.png")
}

// An election with a crash and a recovery, in the dark theme: the diagram marks the
// crash, the recovery and every process that made itself leader, with its leadership
// as a band along its line.
func TestSpacetimeElectionMarks(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 720)
	run(t, ctx, chromedp.Navigate(ts.URL+"/"), chromedp.Evaluate[chromedp.Void](`localStorage.setItem("theme", "dark")`))
	run(t, ctx, chromedp.Navigate(ts.URL+"/play/bully?n=5&seed=3"))
	ready(t, ctx)
	openDiagram(t, ctx)
	clickProcessAction(t, ctx, 4, "crash")
	waitFor(t, ctx, `document.querySelector('#view g.node[data-id="4"]').classList.contains("crashed")`)
	clickProcessAction(t, ctx, 1, "elect")
	// The command goes over the socket: step only once the run has taken it, or
	// stepToQuiet may see the quiet state from before it.
	waitFor(t, ctx, `document.getElementById("status").dataset.state !== "quiet"`)
	stepToQuiet(t, ctx, 300)
	clickProcessAction(t, ctx, 4, "recover")
	waitFor(t, ctx, `!document.querySelector('#view g.node[data-id="4"]').classList.contains("crashed")`)
	end := stepToQuiet(t, ctx, 300)
	id := sessionID(t, ctx)
	trace := httpGet(t, ts.URL+"/api/sessions/"+id+"/trace")
	c := countTrace(t, trace)
	synced(t, ctx, c, end)

	selfLeaders := 0
	for _, line := range bytes.Split(bytes.TrimSpace(trace), []byte("\n")) {
		var ev struct {
			Type         string
			Node, Leader int
		}
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Type == "leader" && ev.Leader == ev.Node {
			selfLeaders++
		}
	}
	type marks struct{ Crash, Recover, Star, Lead int }
	got := eval[marks](t, ctx, `(() => {
		const m = [...document.querySelectorAll("#st-diagram .st-mark")];
		return {
			Crash: m.filter((e) => e.textContent === "✕").length,
			Recover: m.filter((e) => e.textContent === "↻").length,
			Star: m.filter((e) => e.textContent === "★").length,
			Lead: document.querySelectorAll("#st-diagram .st-lead").length,
		};
	})()`)
	if got.Crash != 1 || got.Recover != 1 || got.Star != selfLeaders || selfLeaders == 0 || got.Lead == 0 {
		t.Fatalf("marks %+v; the trace has one crash, one recovery and %d processes making themselves leader", got, selfLeaders)
	}
	screenshot(t, ctx, "spacetime-bully-dark.png")
}
