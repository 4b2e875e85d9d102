package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

type streamedBatch struct {
	Step   int
	T      int
	Events []json.RawMessage
}

type timelineDoc struct {
	Horizon       int
	Step          int
	Interventions int
	Truncated     bool
	Batches       []streamedBatch
}

// The timeline is the trace cut into the batches the WebSocket streams, each with its
// step: a viewer who followed the run live got exactly these batches, even across a
// seek back and an intervention that rewrote the future.
func TestSessionTimelineIsTheStreamedBatches(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	id := openSession(t, ts, "/play/ricart-agrawala?n=3&seed=4")
	c := dial(t, ts, id)
	c.next("hello")
	c.next("snapshot")
	var live []streamedBatch // the batches of the timeline as it finally is
	take := func() int {
		t.Helper()
		f := c.next("events")
		var doc struct {
			Horizon int
			Batches []streamedBatch
		}
		if err := json.Unmarshal([]byte(f.raw), &doc); err != nil {
			t.Fatal(err)
		}
		live = append(live, doc.Batches...)
		return doc.Horizon
	}
	c.send(`{"type":"act","do":"request","node":1}`)
	take()
	c.send(`{"type":"act","do":"request","node":0}`)
	take()
	for range 6 {
		c.send(`{"type":"step"}`)
		take()
	}
	// Back to step 3 and a new request there: the old steps 4 to 7 are gone.
	c.send(`{"type":"seek","step":3}`)
	c.next("snapshot")
	kept := live[:0]
	for _, b := range live {
		if b.Step <= 3 {
			kept = append(kept, b)
		}
	}
	live = kept
	c.send(`{"type":"act","do":"request","node":2}`)
	if h := take(); h != 3 {
		t.Fatalf("after an intervention at step 3 the horizon is %d", h)
	}
	horizon := 0
	for range 5 {
		c.send(`{"type":"step"}`)
		horizon = take()
	}

	tl := checkTimeline(t, ts.URL, id, live)
	if tl.Horizon != horizon || tl.Step != horizon || tl.Interventions != 3 || tl.Truncated {
		t.Fatalf("horizon %d, step %d, interventions %d, truncated %v; want %d, %d, 3, false",
			tl.Horizon, tl.Step, tl.Interventions, tl.Truncated, horizon, horizon)
	}
	if p := get(t, browser(t), ts.URL+"/api/sessions/nope/timeline"); p.status != http.StatusNotFound {
		t.Fatalf("unknown session: %d", p.status)
	}
}

// checkTimeline fetches the session's timeline and checks it against the batches a
// viewer was streamed (after the initialisation) and against the session's trace.
func checkTimeline(t *testing.T, base, id string, live []streamedBatch) timelineDoc {
	t.Helper()
	p := get(t, browser(t), base+"/api/sessions/"+id+"/timeline")
	if p.status != http.StatusOK || !strings.HasPrefix(p.header.Get("Content-Type"), "application/json") {
		t.Fatalf("status %d, type %q: %s", p.status, p.header.Get("Content-Type"), p.body)
	}
	var tl timelineDoc
	if err := json.Unmarshal([]byte(p.body), &tl); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, p.body)
	}

	// Its events, in order, are the session's trace.
	var joined strings.Builder
	for _, b := range tl.Batches {
		for _, ev := range b.Events {
			joined.Write(ev)
			joined.WriteByte('\n')
		}
	}
	trace := get(t, browser(t), base+"/api/sessions/"+id+"/trace")
	if joined.String() != trace.body {
		t.Fatalf("the timeline's events are not the trace:\ntimeline:\n%s\ntrace:\n%s", joined.String(), trace.body)
	}

	// Step 0 is the initialisation; then every batch streamed live, with its step.
	if len(tl.Batches) == 0 || tl.Batches[0].Step != 0 {
		t.Fatalf("the first batch is not step 0: %+v", tl.Batches)
	}
	rest := tl.Batches[1:]
	if len(rest) != len(live) {
		t.Fatalf("%d batches after the initialisation, %d were streamed", len(rest), len(live))
	}
	for i, b := range live {
		got, _ := json.Marshal(rest[i])
		want, _ := json.Marshal(b)
		if string(got) != string(want) {
			t.Fatalf("batch %d:\n timeline %s\n streamed %s", i+1, got, want)
		}
	}
	return tl
}

// In hold mode the user's deliveries are steps: the timeline numbers them as the
// session does, also after a seek back and a different pick.
func TestSessionTimelineInHoldMode(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	id := openSession(t, ts, "/play/ricart-agrawala?n=3&seed=5&hold=true")
	c := dial(t, ts, id)
	c.next("hello")
	c.next("snapshot")
	var live []streamedBatch
	take := func() {
		t.Helper()
		f := c.next("events")
		var doc struct{ Batches []streamedBatch }
		if err := json.Unmarshal([]byte(f.raw), &doc); err != nil {
			t.Fatal(err)
		}
		live = append(live, doc.Batches...)
	}
	c.send(`{"type":"act","do":"request","node":0}`)
	take()
	for _, m := range []int{2, 1, 3} {
		c.send(fmt.Sprintf(`{"type":"act","do":"deliver","msg":%d}`, m))
		take()
	}
	checkTimeline(t, ts.URL, id, live)
	c.send(`{"type":"seek","step":1}`)
	c.next("snapshot")
	kept := live[:0]
	for _, b := range live {
		if b.Step <= 1 {
			kept = append(kept, b)
		}
	}
	live = kept
	c.send(`{"type":"act","do":"deliver","msg":1}`)
	take()
	tl := checkTimeline(t, ts.URL, id, live)
	if tl.Horizon != 2 || tl.Interventions != 3 {
		t.Fatalf("horizon %d, interventions %d; want 2, 3", tl.Horizon, tl.Interventions)
	}
}
