package web

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/teach-dist/playground/internal/testwait"
	"github.com/teach-dist/playground/runtime/cost"
)

// A scripted Ricart-Agrawala run: P1 asks, the run goes on until it is quiet. The
// metrics up to the end show 2(N-1) messages for the one entry, beside the formula;
// at step 0 nothing is measured yet; ?step= picks the step; errors name the parameter.
func TestSessionMetricsMeasureTheRun(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	id := openSession(t, ts, "/play/ricart-agrawala?n=4&seed=2")
	c := dial(t, ts, id)
	c.next("hello")
	c.next("snapshot")
	c.send(`{"type":"act","do":"request","node":1}`)
	last := 0
	for f := c.next("events"); f.Type == "events"; f = c.next("events", "state") {
		last = f.Step
		c.send(`{"type":"step"}`)
	}

	var res cost.Result
	getJSON(t, ts.URL+"/api/sessions/"+id+"/metrics", &res)
	if res.Algorithm != "ricart-agrawala" || res.N != 4 || res.Step != last || res.Entries != 1 || res.Exits != 1 {
		t.Fatalf("step %d (want %d), %d entries, %d exits: %+v", res.Step, last, res.Entries, res.Exits, res)
	}
	per := res.Get(cost.PerEntry)
	if per == nil || per.Mean == nil || *per.Mean != 6 || len(per.Theory) == 0 || per.Theory[0].Formula != "2(N-1)" || *per.Theory[0].Value != 6 {
		t.Fatalf("messages per entry %+v, want 6 beside 2(N-1) = 6", per)
	}
	if res.Ordering == nil || res.Ordering.Verdict != cost.OrderNothing {
		t.Errorf("ordering %+v: one request has nothing to be ordered against", res.Ordering)
	}

	var start cost.Result
	getJSON(t, ts.URL+"/api/sessions/"+id+"/metrics?step=0", &start)
	if start.Step != 0 || start.Entries != 0 || start.Get(cost.PerEntry).Mean != nil {
		t.Errorf("at step 0: %+v", start)
	}
	var mid cost.Result
	getJSON(t, ts.URL+"/api/sessions/"+id+"/metrics?step="+strconv.Itoa(last-1), &mid)
	if mid.Step != last-1 || mid.Messages > res.Messages {
		t.Errorf("at step %d: step %d, %d messages", last-1, mid.Step, mid.Messages)
	}

	if p := get(t, browser(t), ts.URL+"/api/sessions/"+id+"/metrics?step=-2"); p.status != http.StatusBadRequest || !strings.Contains(p.body, "step") {
		t.Errorf("bad step: %d %s", p.status, p.body)
	}
	if p := get(t, browser(t), ts.URL+"/api/sessions/nope/metrics"); p.status != http.StatusNotFound {
		t.Errorf("unknown session: %d", p.status)
	}
}

// An election session reports election metrics and no ordering.
func TestSessionMetricsForAnElection(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	id := openSession(t, ts, "/s/bully-best-case")
	c := dial(t, ts, id)
	c.next("hello")
	c.next("snapshot")
	for range 200 {
		c.send(`{"type":"step"}`)
		if f := c.next("events", "state"); f.Type == "state" {
			break
		}
	}
	var res cost.Result
	getJSON(t, ts.URL+"/api/sessions/"+id+"/metrics", &res)
	em := res.Get(cost.ElectionMessages)
	if res.Ordering != nil || em == nil || em.Mean == nil || *em.Mean != 7 || len(res.Elections) != 1 {
		t.Fatalf("election metrics %+v (elections %+v), want 7 messages = N-1", em, res.Elections)
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	p := get(t, browser(t), url)
	if p.status != http.StatusOK || !strings.HasPrefix(p.header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET %s: %d %q %s", url, p.status, p.header.Get("Content-Type"), p.body)
	}
	if err := json.Unmarshal([]byte(p.body), v); err != nil {
		t.Fatalf("GET %s: %v\n%s", url, err, p.body)
	}
}

// A session put to rest is counted, and goes on from its step when its viewer acts.
func TestRestingSessionsAreCountedAndWake(t *testing.T) {
	srv, ts := newTestServer(t, Options{HibernateAfter: 20 * time.Millisecond})
	id := openSession(t, ts, "/play/ricart-agrawala?n=3")
	c := dial(t, ts, id)
	c.next("snapshot")
	c.send(`{"type":"act","do":"request","node":1}`)
	c.next("events")
	c.send(`{"type":"step"}`)
	before := c.next("events")
	testwait.For(t, "the session went to rest", func() bool { return metric(t, srv, "playground_sessions_resting") == 1 })
	c.send(`{"type":"step"}`)
	after := c.next("events")
	if after.Batches == nil || after.Step != before.Step+1 {
		t.Fatalf("woken at step %d after step %d: %s", after.Step, before.Step, after.raw)
	}
}
