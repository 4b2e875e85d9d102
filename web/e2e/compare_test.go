package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The compare page draws its charts server-side: in a real browser each is a visible
// SVG with one solid line per algorithm and the notes' dashed curves, no script error,
// no CSP refusal (tab fails the test on either).
func TestComparePageRendersItsCharts(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 900)
	run(t, ctx, chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`a[href="/compare"]`)))
	run(t, ctx, chromedp.Click(chromedp.CSS(`a[href="/compare"]`)), chromedp.WaitVisible(chromedp.CSS(`svg.chart`)))

	// Change the choices with the form: the result is a shareable URL.
	run(t, ctx,
		chromedp.SetValue(chromedp.CSS(`input[name="n"]`), "3-7"),
		chromedp.Click(chromedp.CSS(`input[name="alg"][value="ricart-agrawala-token"]`)),
		chromedp.Click(chromedp.CSS(`input[name="workload"][value="heavy"]`)),
		chromedp.Click(chromedp.CSS(`.compare-form button[type="submit"]`)),
	)
	// The new page is the one whose heavy radio is checked in its HTML.
	run(t, ctx, chromedp.WaitVisible(chromedp.CSS(`input[name="workload"][value="heavy"][checked]`)))
	waitFor(t, ctx, `location.search.includes("workload=heavy") && document.querySelectorAll("svg.chart").length === 3`)
	url := eval[string](t, ctx, `location.href`)
	if !strings.Contains(url, "alg=ricart-agrawala-token") || !strings.Contains(url, "n=3-7") {
		t.Fatalf("the form did not make a shareable URL: %s", url)
	}
	type chartInfo struct {
		ID       string
		Measured int
		Theory   int
		Width    float64
		Height   float64
		Painted  bool
	}
	got := eval[[]chartInfo](t, ctx, `[...document.querySelectorAll("svg.chart")].map((s) => {
	  const r = s.getBoundingClientRect();
	  const line = s.querySelector("polyline.measured");
	  return {
	    ID: s.id,
	    Measured: s.querySelectorAll("polyline.measured").length,
	    Theory: s.querySelectorAll("polyline.theory").length,
	    Width: r.width, Height: r.height,
	    Painted: !!line && getComputedStyle(line).stroke !== "none" && line.getBBox().width > 100,
	  };
	})`)
	for _, c := range got {
		// Four algorithms: the defaults (RA, central, Lamport) and the RA token algorithm.
		if c.Measured != 4 || c.Theory < 3 || c.Width < 300 || c.Height < 120 || !c.Painted {
			t.Errorf("chart %+v: want 4 visible measured lines and the notes' curves", c)
		}
	}
	rows := eval[int](t, ctx, `document.querySelectorAll("#table-mutex tbody tr").length`)
	if rows != 4*5 {
		t.Errorf("the table has %d rows, want 20", rows)
	}
	screenshot(t, ctx, "compare.png")

	// A bad parameter: a 400 page that names it and keeps the form.
	run(t, ctx, chromedp.Navigate(ts.URL+"/compare?alg=ricart-agrawala&seeds=77"), chromedp.WaitVisible(chromedp.CSS(`.compare-error`)))
	if p := eval[string](t, ctx, `document.querySelector(".compare-error").dataset.param`); p != "seeds" {
		t.Errorf("the error names %q, want seeds", p)
	}
}

// The metrics panel follows a scripted Ricart-Agrawala run: before any entry it says
// "n/a yet"; once P0 has been in the CS it shows 2(N-1) = 6 messages for N = 4, beside
// the notes' formulas and, apart, the project's derived figures.
func TestMetricsPanelShowsMessagesPerEntry(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 720)
	run(t, ctx, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?n=4&seed=3"))
	ready(t, ctx)
	const cell = `(document.querySelector('#metrics tr[data-key="messages-per-entry"] td.measured')?.textContent || "")`
	waitFor(t, ctx, cell+`.includes("n/a yet")`)

	clickProcessAction(t, ctx, 0, "request")
	for i := 0; i < 60; i++ {
		if d := eval[float64](t, ctx, stepJS, chromedp.EvalAwaitPromise); d < 0 {
			break // quiet: nothing left to do
		}
		if strings.Contains(eval[string](t, ctx, `document.getElementById("ordering").textContent`), "nothing to check") &&
			strings.HasPrefix(eval[string](t, ctx, cell), "6") {
			break
		}
	}
	waitFor(t, ctx, cell+`.startsWith("6")`)
	// The notes' formulas, naming their notes, apart from the project's own figure;
	// delays in time units and in T, as the head states T (the mean delay, 2 here).
	row := func(key, class string) string {
		return eval[string](t, ctx, `document.querySelector('#metrics tr[data-key="`+key+`"] td.`+class+`').textContent`)
	}
	if notes := row("messages-per-entry", "notes"); !strings.Contains(notes, "2(N-1) = 6 (note 002)") || !strings.Contains(notes, "2(n - 1) = 6 (note 001)") {
		t.Errorf("the notes' column says %q, want 2(N-1) = 6 (note 002) and 2(n - 1) = 6 (note 001)", notes)
	}
	if derived := row("messages-per-entry", "derived"); derived != "2(N-1) = 6" {
		t.Errorf("the derived column says %q, want 2(N-1) = 6", derived)
	}
	head := eval[string](t, ctx, `document.getElementById("metrics-note").textContent`)
	if !strings.Contains(head, "T = 2") {
		t.Fatalf("the panel's head says %q, want T = 2", head)
	}
	for key, want := range map[string]string{"client-delay": "2T: 4 = 2 T", "sync-delay": "T: 2 = 1 T"} {
		if got := row(key, "derived"); got != want {
			t.Errorf("%s: the derived column says %q, want %q (T = 2)", key, got, want)
		}
	}
	if notes := row("sync-delay", "notes"); !strings.Contains(notes, "1: 2 = 1 T (note 003)") {
		t.Errorf("sync-delay: the notes' column says %q, want 003's 1: 2 = 1 T", notes)
	}
	// Seeking back before the entry brings "n/a yet" back.
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`(() => {
		const tl = document.getElementById("timeline");
		tl.value = "1";
		tl.dispatchEvent(new Event("input", { bubbles: true }));
	})()`))
	waitFor(t, ctx, `document.getElementById("main").dataset.step === "1"`)
	waitFor(t, ctx, cell+`.includes("n/a yet")`)
	screenshot(t, ctx, "metrics-panel.png")
}

// A figure that is a range shows both its bounds, one entry, never its upper bound
// alone: the token ring's "1 to N-1" messages to obtain the token for N = 5, and the
// "0 to 3" of the New algorithm skeleton, a range its Starlark source declares with
// low and high.
func TestMetricsPanelShowsARangeWithBothBounds(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 720)
	derived := func(key string) string {
		return `[...document.querySelectorAll('#metrics tr[data-key="` + key + `"] td.derived li')].map((li) => (li.classList.contains("range") ? "range: " : "") + li.textContent).join(" | ")`
	}
	for _, c := range []struct{ path, key, want string }{
		{"/play/token-ring?n=5&seed=2", "messages-to-enter", "range: 1 to N-1 = 1 to 4"},
		{"/play/central?new=1&n=4", "messages-per-entry", "range: 0 to 3"},
	} {
		run(t, ctx, chromedp.Navigate(ts.URL+c.path))
		ready(t, ctx)
		waitFor(t, ctx, derived(c.key)+` !== ""`)
		if got := eval[string](t, ctx, derived(c.key)); got != c.want {
			t.Errorf("%s: the derived column of %s says %q, want %q", c.path, c.key, got, c.want)
		}
	}
	screenshot(t, ctx, "metrics-range.png")
}

// In the RA token algorithm's curated scenario the token goes round-robin and
// overtakes a request that happened before: the panel names the grant, and a click
// seeks the run to it.
func TestMetricsPanelPointsAtTheOutOfOrderGrant(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 720)
	run(t, ctx, chromedp.Navigate(ts.URL+"/s/ricart-agrawala-token-who-gets-the-token"))
	ready(t, ctx)
	for i := 0; i < 80; i++ {
		if d := eval[float64](t, ctx, stepJS, chromedp.EvalAwaitPromise); d < 0 {
			break
		}
	}
	waitFor(t, ctx, `document.getElementById("ordering").dataset.verdict === "broken"`)
	grant := eval[string](t, ctx, `[...document.querySelectorAll("#ordering button")].pop().dataset.step`)
	if grant != "37" {
		t.Errorf("the out-of-order grant is at step %s, want 37", grant)
	}
	// The panel says which definition of ordering the verdict judges.
	if o := eval[string](t, ctx, `document.getElementById("ordering").textContent`); !strings.Contains(o, "Judged by requests granted in happened-before order") {
		t.Errorf("the ordering verdict does not say which definition it judges: %q", o)
	}
	run(t, ctx, chromedp.Click(chromedp.CSS(`#ordering button:last-of-type`)))
	waitFor(t, ctx, fmt.Sprintf(`document.getElementById("main").dataset.step === %q`, grant))
	// At that step P5 is in the CS.
	waitFor(t, ctx, `[...document.querySelectorAll("#view g.node.in-cs")].map((e) => e.dataset.id).join() === "5"`)
}

// After a crash a ring election goes round the live ring: the panel evaluates the
// notes' figures for the processes alive and says so. In ring-6-fails-3-starts (6 has
// crashed, 5 live) 000's worst case is 3n - 1 = 14, not 17.
func TestMetricsPanelSaysWhichNAfterACrash(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 720)
	run(t, ctx, chromedp.Navigate(ts.URL+"/s/ring-6-fails-3-starts"))
	ready(t, ctx)
	const notes = `(document.querySelector('#metrics tr[data-key="election-messages"] td.notes')?.textContent || "")`
	for i := 0; i < 200; i++ {
		if d := eval[float64](t, ctx, stepJS, chromedp.EvalAwaitPromise); d < 0 {
			break
		}
	}
	waitFor(t, ctx, notes+`.includes("for n = 5 live processes")`)
	if got := eval[string](t, ctx, notes); !strings.Contains(got, "3n - 1 = 14") {
		t.Errorf("the notes' column says %q, want 3n - 1 = 14 for the 5 live processes", got)
	}
}

// /compare draws the theory that matches the workload (ring-list under the
// heavy workload against 2kN for its k concurrent initiators, not the one-initiator
// 2N nor the other variant's N²), and a chart with nothing measured says so inside its
// plot, clear of the axes' labels and not cut by the chart's edges.
func TestCompareDrawsTheWorkloadsTheoryAndFitsTheEmptyMessage(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 720)
	run(t, ctx, chromedp.Navigate(ts.URL+"/compare?alg=ring-list&n=4-8&workload=heavy&seeds=1"), chromedp.WaitVisible(chromedp.CSS(`svg.chart`)))
	curves := eval[[]string](t, ctx, `[...document.querySelectorAll("#chart-election-election-messages polyline.theory title")].map((e) => e.textContent)`)
	if len(curves) != 1 || !strings.Contains(curves[0], "2kN") {
		t.Fatalf("ring-list under the heavy workload is drawn against %q, want the 2kN curve alone", curves)
	}
	run(t, ctx, chromedp.ScrollIntoView(chromedp.CSS(`#chart-election-election-messages`)))
	screenshot(t, ctx, "compare-ring-list-heavy.png")

	// Central under the light workload never has a process waiting when another leaves:
	// nothing to measure for the synchronisation delay.
	run(t, ctx, chromedp.Navigate(ts.URL+"/compare?alg=central&n=3-5&workload=light&seeds=1"), chromedp.WaitVisible(chromedp.CSS(`svg.chart`)))
	type box struct{ X, Y, W, H float64 }
	type layout struct {
		Text, Plot, XLabel, YLabel box
		Message                    string
	}
	got := eval[layout](t, ctx, `(() => {
		const svg = document.querySelector("svg.chart:has(.chart-empty)");
		const b = (e) => { const r = e.getBBox(); return { X: r.x, Y: r.y, W: r.width, H: r.height }; };
		const [xl, yl] = svg.querySelectorAll(".axis-label");
		const axis = svg.querySelector("line.axis");
		// The rotated y label's box, in the chart's units: its width is its height.
		const y = b(yl);
		const yBox = { X: Number(yl.getAttribute("x")) - y.H / 2, Y: Number(yl.getAttribute("y")) - y.W / 2, W: y.H, H: y.W };
		const vb = svg.viewBox.baseVal;
		return { Text: b(svg.querySelector(".chart-empty")), XLabel: b(xl), YLabel: yBox,
			Plot: { X: 56, Y: 14, W: vb.width - 56 - 16, H: Number(axis.getAttribute("y1")) - 14 },
			Message: svg.querySelector(".chart-empty").textContent };
	})()`)
	if !strings.Contains(got.Message, "Nothing to measure") {
		t.Fatalf("the empty chart says %q", got.Message)
	}
	in := func(a, b box) bool { return a.X >= b.X && a.Y >= b.Y && a.X+a.W <= b.X+b.W && a.Y+a.H <= b.Y+b.H }
	over := func(a, b box) bool { return a.X < b.X+b.W && b.X < a.X+a.W && a.Y < b.Y+b.H && b.Y < a.Y+a.H }
	if !in(got.Text, got.Plot) || over(got.Text, got.XLabel) || over(got.Text, got.YLabel) {
		t.Errorf("the empty chart's message %+v is not inside the plot %+v, clear of the labels %+v %+v", got.Text, got.Plot, got.XLabel, got.YLabel)
	}
	run(t, ctx, chromedp.ScrollIntoView(chromedp.CSS(`svg.chart:has(.chart-empty)`)))
	screenshot(t, ctx, "compare-empty-chart.png")
}
