package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

var allSlugs = []string{"central", "lamport", "ricart-agrawala", "ricart-agrawala-token", "token-ring",
	"maekawa", "suzuki-kasami", "raymond", "bakery", "bully", "ring", "ring-list"}

// Play on a free run starts something: a message moves within a second of the click
// (the default workload when nothing is scheduled), and the status says what to do.
func TestPlayOnEveryFreeRunMovesAMessage(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	for _, slug := range allSlugs {
		t.Run(slug, func(t *testing.T) {
			ctx := isolatedTab(t, ts.URL, 1280, 800)
			run(t, ctx, chromedp.Navigate(ts.URL+"/play/"+slug+"?fresh=1"))
			ready(t, ctx)
			status := eval[string](t, ctx, `document.getElementById("status").textContent`)
			// A quiet free run tells a first-time student what to press.
			quiet := eval[bool](t, ctx, `document.getElementById("status").dataset.state === "quiet"`)
			if want := "Ready: press Play to start"; quiet && !strings.HasPrefix(status, want) {
				t.Errorf("status %q, want it to start %q", status, want)
			}
			// The message must show within 1 s of the click; the promise waits up to a
			// generous ceiling, so a busy machine reports a slow start rather than hanging.
			ms := eval[float64](t, ctx, `new Promise((resolve) => {
			  const t0 = performance.now();
			  document.getElementById("btn-play").click();
			  const moving = () => document.querySelectorAll("#view g.msg").length > 0;
			  const poll = () => {
			    if (moving()) resolve(performance.now() - t0);
			    else if (performance.now() - t0 > 5000) resolve(-1);
			    else setTimeout(poll, 10);
			  };
			  poll();
			})`, chromedp.EvalAwaitPromise)
			if ms < 0 || ms > 1000 {
				t.Fatalf("Play on /play/%s: no message moved within 1 s (%s)", slug, fmt.Sprintf("%.0f ms", ms))
			}
			if quiet {
				// The narration says the moves are the default workload's.
				waitFor(t, ctx, `document.querySelectorAll("#log .workload").length > 0`)
			}
		})
	}
}
