package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/teach-dist/playground/internal/testwait"
	"github.com/teach-dist/playground/runtime/compare"
	"github.com/teach-dist/playground/web/ratelimit"
)

// getFrom loads url as the client at addr (X-Real-IP, from a trusted proxy).
func getFrom(t *testing.T, addr, url string) page {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("X-Real-IP", addr)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err) // Error, not Fatal: getFrom also runs on the looper's goroutines
		return page{}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return page{resp.StatusCode, string(b), resp.Header}
}

// queuedAt reports whether p is the compare page's "in the queue" answer at place n.
func queuedAt(p page, n int) bool {
	return p.status == http.StatusAccepted && p.header.Get("Refresh") == "3" &&
		strings.Contains(p.body, fmt.Sprintf("yours is number %d in the queue", n)) && !strings.Contains(p.body, `<svg class="chart"`)
}

// A client looping heavy comparisons on every compare slot does not keep a second
// client's trivial comparison out (without the queue, 16 loops made it take 26-29 s
// or fail with 503): the page answers 202 with the second client's place, 1, ahead of
// the looper's waiting ones, and reloads (Refresh); once a slot frees it is the second
// client's, and its reload gets the chart. The looper has at most its share of places:
// past --compare-queue waiting, 429. The comparisons are held by a gate.
func TestComparePageQueuesASecondClientBeforeTheLooper(t *testing.T) {
	clientIP, err := ratelimit.ClientIP("X-Real-IP=127.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	const looper, student = "192.0.2.66", "198.51.100.7"
	// The looper varies its seeds, so every request is its own comparison (one query
	// is one job); the gate makes them as long as the test wants.
	heavy := func(i int) string {
		return fmt.Sprintf("/compare?alg=lamport&alg=ricart-agrawala&alg=token-ring&n=3-12&workload=heavy&seeds=%d", i)
	}
	const trivial = "/compare?alg=central&n=3&seeds=1"
	canonical := func(path string) string {
		u, _ := url.Parse(path)
		cq, err := compare.ParseQuery(u.Query(), compare.DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		return cq.Canonical()
	}
	errHeld := errors.New("ended by the test without running")
	started := make(chan string, 16) // each comparison that gets a slot
	gate := make(chan struct{})
	hold := func(ctx context.Context, cq compare.Query) error {
		started <- cq.Canonical()
		if cq.Canonical() == canonical(trivial) {
			return nil // the second client's runs for real: its page draws the chart
		}
		select { // the looper's never run: the slot is all they are here for
		case <-gate:
		case <-ctx.Done():
		}
		return errHeld
	}
	_, ts := newTestServer(t, Options{ClientIP: clientIP, Compare: compare.Options{Slots: 2, Share: 1, Queue: 2, Hold: hold}})

	// The looper's first two hold both slots; their pages wait for them.
	holding := make(chan page, 2)
	for i := range 2 {
		go func() { holding <- getFrom(t, looper, ts.URL+heavy(i+1)) }()
		testwait.Recv(t, "the looper's comparison taking a slot", started)
	}
	// Its next two wait, at 1 and 2; a fifth is past its share of places.
	for i, place := range []int{1, 2} {
		if p := getFrom(t, looper, ts.URL+heavy(3+i)); !queuedAt(p, place) {
			t.Fatalf("the looper's comparison %d: status %d, Refresh %q, want 202 at place %d:\n%s", 3+i, p.status, p.header.Get("Refresh"), place, p.body)
		}
	}
	if p := getFrom(t, looper, ts.URL+heavy(5)); p.status != http.StatusTooManyRequests || p.header.Get("Retry-After") == "" {
		t.Fatalf("the looper's fifth comparison: status %d, want 429 with Retry-After", p.status)
	}

	// The second client comes: it is next, and the looper's waiting ones move back.
	if p := getFrom(t, student, ts.URL+trivial); !queuedAt(p, 1) {
		t.Fatalf("the second client: status %d, Refresh %q, want 202 at place 1:\n%s", p.status, p.header.Get("Refresh"), p.body)
	}
	testwait.For(t, "the looper's next comparison at place 2 behind the second client", func() bool {
		return queuedAt(getFrom(t, looper, ts.URL+heavy(3)), 2)
	})

	gate <- struct{}{} // one of the looper's comparisons ends
	if got := testwait.Recv(t, "the next comparison taking the slot", started); got != canonical(trivial) {
		t.Fatalf("the freed slot went to %s, want the second client's %s", got, canonical(trivial))
	}
	p := getFrom(t, student, ts.URL+trivial) // its page reloads
	if p.status != http.StatusOK || !strings.Contains(p.body, `<svg class="chart" id="chart-mutex-messages-per-entry"`) || p.header.Get("Refresh") != "" {
		t.Fatalf("the second client's reload: status %d, Refresh %q, want 200 with the chart:\n%s", p.status, p.header.Get("Refresh"), p.body)
	}
	close(gate)
	for range 2 {
		if p := testwait.Recv(t, "the looper's held pages", holding); p.status != http.StatusServiceUnavailable {
			t.Errorf("a held comparison the test ended: status %d, want 503", p.status)
		}
	}
}
