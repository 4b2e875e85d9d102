package web

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// The session's trace is exactly the events its viewers were streamed, interventions
// included, up to the horizon; ?step= cuts it short; a bad step or an unknown session
// gets an error naming it.
func TestSessionTraceIsWhatWasStreamed(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	id := openSession(t, ts, "/play/ricart-agrawala?n=3&seed=4")
	c := dial(t, ts, id)
	c.next("hello")
	c.next("snapshot")
	var streamed bytes.Buffer
	c.send(`{"type":"act","do":"request","node":1}`)
	for f := c.next("events"); f.Type == "events"; f = c.next("events", "state") {
		for _, b := range f.Batches {
			for _, ev := range b.Events {
				streamed.Write(ev)
				streamed.WriteByte('\n')
			}
		}
		c.send(`{"type":"step"}`)
	}
	c.send(`{"type":"seek","step":3}`)
	c.next("snapshot")

	p := get(t, browser(t), ts.URL+"/api/sessions/"+id+"/trace")
	if p.status != http.StatusOK || !strings.HasPrefix(p.header.Get("Content-Type"), "application/x-ndjson") {
		t.Fatalf("status %d, type %q: %s", p.status, p.header.Get("Content-Type"), p.body)
	}
	// The page starts at step 0, whose events came in the snapshot: the stream is the tail.
	if !strings.HasSuffix(p.body, streamed.String()) || len(p.body) == streamed.Len() {
		t.Fatalf("the trace is not the init events followed by the stream:\ntrace:\n%s\nstreamed:\n%s", p.body, streamed.String())
	}

	short := get(t, browser(t), ts.URL+"/api/sessions/"+id+"/trace?step=2")
	if !strings.HasPrefix(p.body, short.body) || len(short.body) >= len(p.body) {
		t.Fatalf("?step=2 is not a prefix of the whole trace:\n%s", short.body)
	}
	last := strings.Split(strings.TrimSpace(short.body), "\n")
	var ev struct{ Type string }
	if err := json.Unmarshal([]byte(last[len(last)-1]), &ev); err != nil || ev.Type == "" {
		t.Fatalf("last line is not an event: %q", last[len(last)-1])
	}

	if p := get(t, browser(t), ts.URL+"/api/sessions/"+id+"/trace?step=x"); p.status != http.StatusBadRequest || !strings.Contains(p.body, "step") {
		t.Fatalf("bad step: %d %s", p.status, p.body)
	}
	if p := get(t, browser(t), ts.URL+"/api/sessions/nope/trace"); p.status != http.StatusNotFound {
		t.Fatalf("unknown session: %d", p.status)
	}
	if d := get(t, browser(t), ts.URL+"/api/sessions/"+id+"/trace?download=1"); !strings.Contains(d.header.Get("Content-Disposition"), "ricart-agrawala-trace.jsonl") {
		t.Fatalf("download: %q", d.header.Get("Content-Disposition"))
	}
}
