package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/performance"
	"github.com/chromedp/chromedp"
	"github.com/gorilla/websocket"
)

// Heavy traffic: N=32, every process asking at once, playing at 4x, several frames per
// display frame. The page paints once per animation frame whatever arrived, and still
// ends exactly where the run is: the step the server paused at, and the last 100
// events in the log. The frame times are reported (docs/benchmarks.md), not asserted.
func TestHeavyTrafficAt4xKeepsUp(t *testing.T) {
	needBrowser(t)
	if testing.Short() {
		t.Skip("a performance probe")
	}
	r := heavyRun(t, server(t), os.Getenv("HEAVY_TRACE") != "")
	t.Logf("N=32, every process asking, 4x, %s", r)
}

// The same run on two pages in one go, alternating: A is the page of an earlier git
// revision (its static/ directory, served by this server), B this one's. The machine
// is shared, so only pages measured side by side compare (docs/benchmarks.md):
//
//	HEAVY_AB=main HEAVY_AB_PAIRS=5 go test -count=1 -v -run HeavyTrafficAB ./web/e2e/
//
// Each page must end where the run is; the frame times are logged.
func TestHeavyTrafficAB(t *testing.T) {
	needBrowser(t)
	rev := os.Getenv("HEAVY_AB")
	if rev == "" || testing.Short() {
		t.Skip("a performance comparison: HEAVY_AB=<git revision> compares that revision's page with this one's")
	}
	pairs := 4
	if s := os.Getenv("HEAVY_AB_PAIRS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 20 {
			t.Fatalf("HEAVY_AB_PAIRS=%q: want a number of pairs from 1 to 20", s)
		}
		pairs = n
	}
	old := serverWithStatic(t, staticAt(t, rev))
	now := server(t)
	var a, b []heavyResult
	for i := range pairs {
		ra := heavyRun(t, old, false)
		t.Logf("pair %d A (%s): %s", i+1, rev, ra)
		rb := heavyRun(t, now, false)
		t.Logf("pair %d B (this tree): %s", i+1, rb)
		a, b = append(a, ra), append(b, rb)
	}
	t.Logf("A (%s), median of %d runs: %s", rev, pairs, medianOf(a))
	t.Logf("B (this tree), median of %d runs: %s", pairs, medianOf(b))
}

// heavyResult is one run's frame times in ms: [p50, p95, worst, frames over 25 ms,
// frames drawn] (frameTimesJS), and the step the run paused at.
type heavyResult struct {
	stats []float64
	step  int
	busy  [5]float64 // the renderer's main thread over those 3 s, ms: CPU time, then the wall time of its tasks, script, style, layout
}

func (r heavyResult) String() string {
	return fmt.Sprintf("%d steps: frame time p50 %.1f ms, p95 %.1f ms, worst %.1f ms, %d of %d frames over 25 ms; main thread CPU %.0f ms, busy %.0f ms (script %.0f, style %.0f, layout %.0f)",
		r.step, r.stats[0], r.stats[1], r.stats[2], int(r.stats[3]), int(r.stats[4]), r.busy[0], r.busy[1], r.busy[2], r.busy[3], r.busy[4])
}

// medianOf is each figure's median over the runs (each taken on its own).
func medianOf(rs []heavyResult) heavyResult {
	m := heavyResult{stats: make([]float64, 5)}
	for k := range m.stats {
		xs := make([]float64, len(rs))
		for i, r := range rs {
			xs[i] = r.stats[k]
		}
		slices.Sort(xs)
		m.stats[k] = xs[len(xs)/2]
	}
	steps := make([]int, len(rs))
	for i, r := range rs {
		steps[i] = r.step
	}
	slices.Sort(steps)
	m.step = steps[len(steps)/2]
	for k := range m.busy {
		xs := make([]float64, len(rs))
		for i, r := range rs {
			xs[i] = r.busy[k]
		}
		slices.Sort(xs)
		m.busy[k] = xs[len(xs)/2]
	}
	return m
}

// heavyRun opens the heavy-traffic run in a tab of ts, plays it at 4x for the 3 s of
// frameTimesJS (traced when trace is set: the main thread's busiest work is logged),
// pauses it and checks that the page ends exactly where the run is.
func heavyRun(t *testing.T, ts *httptest.Server, trace bool) heavyResult {
	t.Helper()
	ctx := tab(t, ts.URL, 1280, 720)
	// As a projector shows it: messages glide (the test tabs turn motion off).
	run(t, ctx, chromedp.Func(func(c context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(c, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-reduced-motion", Value: "no-preference"}},
		})
		return err
	}))
	run(t, ctx, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?n=32"))
	ready(t, ctx)
	type clock struct{ Step, Seq int }
	paused := make(chan clock, 1)
	var pauseSent atomic.Bool
	conn := secondViewer(t, ts, ctx, func(b []byte) {
		if !pauseSent.Load() {
			return
		}
		var f struct {
			Type      string
			Step, Seq int
			Playing   bool
		}
		if json.Unmarshal(b, &f) == nil && f.Type == "state" && !f.Playing {
			select {
			case paused <- clock{f.Step, f.Seq}:
			default:
			}
		}
	})
	for i := range 32 {
		conn.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `{"type":"act","do":"request","node":%d}`, i))
	}
	conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"speed","speed":4}`))
	if _, err := chromedp.Call(ctx, performance.Enable, performance.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, chromedp.Click(chromedp.CSS("#btn-play")))
	var tr *tracer
	if trace {
		tr = startTrace(t, ctx)
	}
	before := mainThread(t, ctx)
	stats := eval[[]float64](t, ctx, frameTimesJS, chromedp.EvalAwaitPromise)

	after := mainThread(t, ctx)
	if tr != nil {
		tr.stop(t, ctx)
	}
	pauseSent.Store(true)
	conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"pause"}`))
	at := <-paused
	step := at.Step
	waitFor(t, ctx, fmt.Sprintf(`document.getElementById("main").dataset.step === "%d" && document.getElementById("main").dataset.settled === "true"`, step))
	seqs := eval[[]int](t, ctx, `[...document.getElementById("log").children].map((li) => Number(li.dataset.seq))`)
	if len(seqs) != 100 || seqs[99] != at.Seq {
		t.Fatalf("after %d steps the log holds %d lines ending at seq %v, want the 100 events up to seq %d", step, len(seqs), seqs[len(seqs)-1:], at.Seq)
	}
	for k := 1; k < len(seqs); k++ {
		if seqs[k] != seqs[k-1]+1 {
			t.Fatalf("the log skips from seq %d to %d", seqs[k-1], seqs[k])
		}
	}
	r := heavyResult{stats: stats, step: step}
	for k := range r.busy {
		r.busy[k] = after[k] - before[k]
	}
	return r
}

// mainThread reads the renderer's counters of its main thread (Performance domain), in
// ms: its CPU time, then the wall time of its tasks, script, style recalculation and
// layout (which a busy machine stretches: the CPU time is the steadier figure).
func mainThread(t *testing.T, ctx context.Context) [5]float64 {
	t.Helper()
	res, err := chromedp.Call(ctx, performance.GetMetrics, cdp.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	var out [5]float64
	for _, m := range res.Metrics {
		if k := slices.Index([]string{"ThreadTime", "TaskDuration", "ScriptDuration", "RecalcStyleDuration", "LayoutDuration"}, m.Name); k >= 0 {
			out[k] = m.Value * 1000
		}
	}
	return out
}
