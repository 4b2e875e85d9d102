package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
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
	ts := server(t)
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
	run(t, ctx, chromedp.Click(chromedp.CSS("#btn-play")))
	stats := eval[[]float64](t, ctx, frameTimesJS, chromedp.EvalAwaitPromise)
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
	t.Logf("N=32, every process asking, 4x, %d steps: frame time p50 %.1f ms, p95 %.1f ms, worst %.1f ms, %d of %d frames over 25 ms",
		step, stats[0], stats[1], stats[2], int(stats[3]), int(stats[4]))
}
