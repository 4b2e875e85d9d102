package web

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/teach-dist/playground/internal/testwait"
	"github.com/teach-dist/playground/runtime/explore"
	"github.com/teach-dist/playground/scenarios"
	"github.com/teach-dist/playground/web/ratelimit"
)

// streamExplore posts the Explore action from addr and streams its lines.
func streamExplore(t *testing.T, ts *httptest.Server, id, addr string) <-chan exploreLine {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/api/sessions/"+id+"/explore", nil)
	req.Header.Set("X-Real-IP", addr)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		t.Fatalf("explore from %s: %d", addr, resp.StatusCode)
	}
	lines := make(chan exploreLine, 64)
	go func() {
		defer resp.Body.Close()
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			var l exploreLine
			if json.Unmarshal(sc.Bytes(), &l) == nil {
				lines <- l
			}
		}
	}()
	return lines
}

// nextLine returns the next line of one of these types.
func nextLine(t *testing.T, lines <-chan exploreLine, types ...string) exploreLine {
	t.Helper()
	for {
		l := testwait.Recv(t, "a line of the stream", lines)
		if l.Type == "" {
			t.Fatalf("the stream ended before a %v line", types)
		}
		for _, ty := range types {
			if l.Type == ty {
				return l
			}
		}
	}
}

// One client looping searches on both slots does not keep a second client out: the
// second waits in the queue, is told its place, and is served before the looper's
// next search, so one client cannot keep the explorer from others. The searches are held by a gate.
func TestExploreQueueServesASecondClientBeforeTheLooper(t *testing.T) {
	clientIP, err := ratelimit.ClientIP("X-Real-IP=127.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	srv, ts := newTestServer(t, Options{ClientIP: clientIP, Explore: ExploreLimits{AtOnce: 2}})
	started := make(chan string, 8) // the algorithm of each search the gate lets start
	gate := make(chan struct{})
	srv.exploring.run = func(ctx context.Context, sc *scenarios.Scenario, _ explore.Options) (*explore.Result, error) {
		started <- sc.Algorithm
		select {
		case <-gate:
		case <-ctx.Done():
		}
		return &explore.Result{Result: explore.ResultOK}, nil
	}
	const looper, student = "192.0.2.66", "198.51.100.7"
	var looping []<-chan exploreLine
	for range 2 {
		looping = append(looping, streamExplore(t, ts, openSession(t, ts, "/play/ricart-agrawala?n=3"), looper))
		testwait.Recv(t, "the looper's search starting", started)
	}
	next := streamExplore(t, ts, openSession(t, ts, "/play/ricart-agrawala?n=3"), looper)
	if l := nextLine(t, next, "queued"); l.Position != 1 {
		t.Fatalf("the looper's next search is at %d, want 1", l.Position)
	}
	mine := streamExplore(t, ts, openSession(t, ts, "/play/bully?n=3"), student)
	if l := nextLine(t, mine, "queued"); l.Position != 1 {
		t.Fatalf("the second client is at %d in the queue, want 1 (next)", l.Position)
	}
	if l := nextLine(t, next, "queued"); l.Position != 2 {
		t.Fatalf("the looper's next search is at %d after the second client came, want 2", l.Position)
	}
	gate <- struct{}{} // one of the looper's searches ends
	if alg := testwait.Recv(t, "the next search starting", started); alg != "bully" {
		t.Fatalf("the freed slot went to %s, want the second client's bully", alg)
	}
	nextLine(t, mine, "start")
	close(gate)
	for _, l := range append(looping, next, mine) {
		nextLine(t, l, "result")
	}
}
