package e2e

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/teach-dist/playground/internal/testwait"
	"github.com/teach-dist/playground/web"
)

// resting reads the server's count of runs at rest from /metrics.
func resting(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "playground_sessions_resting "); ok {
			return v
		}
	}
	t.Fatal("no playground_sessions_resting in /metrics")
	return ""
}

// A student who leaves the page still long enough for the run to rest comes back to
// the same run: the next step is the next one, the narration log goes on from where
// it was, and a reload shows the same step.
func TestRestedRunGoesOnInTheBrowser(t *testing.T) {
	needBrowser(t)
	srv := web.New(web.Options{HibernateAfter: 300 * time.Millisecond})
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Close()
		ts.Close()
	})
	ctx := requestedRun(t, ts.URL)
	const shownJS = `document.getElementById("main").dataset.step + "|" + document.getElementById("log").children.length`
	before := eval[string](t, ctx, shownJS)
	testwait.For(t, "the run going to rest", func() bool { return resting(t, ts.URL) == "1" })
	if now := eval[string](t, ctx, shownJS); now != before {
		t.Fatalf("resting changed the page: %s, then %s", before, now)
	}
	if ms := eval[float64](t, ctx, stepJS, chromedp.EvalAwaitPromise); ms < 0 {
		t.Fatal("a step on the rested run never showed")
	}
	var step, logLen, beforeStep, beforeLog int
	parse := func(s string, a, b *int) {
		parts := strings.Split(s, "|")
		*a, *b = atoi(t, parts[0]), atoi(t, parts[1])
	}
	parse(before, &beforeStep, &beforeLog)
	parse(eval[string](t, ctx, shownJS), &step, &logLen)
	if step != beforeStep+1 || logLen <= beforeLog {
		t.Fatalf("after waking: step %d (was %d), log %d entries (was %d)", step, beforeStep, logLen, beforeLog)
	}
	run(t, ctx, chromedp.Reload())
	ready(t, ctx)
	if got := eval[string](t, ctx, `document.getElementById("main").dataset.step`); atoi(t, got) != step {
		t.Fatalf("after a reload the page shows step %s, want %d", got, step)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%q is not a number", s)
	}
	return n
}
