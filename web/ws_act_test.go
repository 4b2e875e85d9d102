package web

import (
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/protocol"
)

// Over a real socket: the tell reaches the run and comes back as the send of an APP
// message; a process the run does not have is refused by name.
func TestWSActTell(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	c := dial(t, ts, openSession(t, ts, "/play/central?n=3"))
	c.next("snapshot")
	c.send(`{"type":"act","do":"tell","node":0,"to":2,"ref":1}`)
	f := c.next("events", "error")
	if f.Type != "events" || !strings.Contains(f.raw, `"type":"send","node":0,"msg":{"id":1,"type":"APP","from":0,"to":2}`) {
		t.Fatalf("tell: %s", f.raw)
	}
	c.send(`{"type":"act","do":"tell","node":0,"to":7,"ref":2}`)
	if f := c.next("error"); f.Code != protocol.CodeBadField || f.Ref != 2 || !strings.Contains(f.Error, "to: 7") {
		t.Fatalf("tell to a process that does not exist: %s", f.raw)
	}
}

// Over a real socket: the network change and the partition reach the run and come
// back as events; ids unknown to the run are refused by name; the session carries on.
func TestWSActNetworkAndPartition(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	c := dial(t, ts, openSession(t, ts, "/play/ricart-agrawala?n=3"))
	c.next("snapshot")
	c.send(`{"type":"act","do":"network","hold":true,"fifo":true,"ref":1}`)
	f := c.next("events", "error")
	if f.Type != "events" || !strings.Contains(f.raw, `"network":{"delay":[1,3],"fifo":true,"loss":0,"hold":true}`) {
		t.Fatalf("network: %s", f.raw)
	}
	c.send(`{"type":"act","do":"request","node":0}`)
	if f := c.next("events"); !strings.Contains(f.raw, `"arrive":{"1":-1,"2":-1}`) {
		t.Fatalf("hold on: messages should be held: %s", f.raw)
	}
	c.send(`{"type":"act","do":"deliver","msg":2}`)
	if f := c.next("events", "error"); f.Type != "events" || f.Step != 1 {
		t.Fatalf("deliver: %s", f.raw)
	}
	c.send(`{"type":"act","do":"partition","groups":[[0,1],[2]]}`)
	if f := c.next("events", "error"); !strings.Contains(f.raw, `"type":"partition","groups":[[0,1],[2]]`) {
		t.Fatalf("partition: %s", f.raw)
	}
	for _, tc := range []struct{ frame, want string }{
		{`{"type":"act","do":"partition","groups":[[0],[7]],"ref":9}`, "groups[1][0]: 7"},
		{`{"type":"act","do":"partition","groups":[[0,1],[1]],"ref":9}`, "in two groups"},
	} {
		c.send(tc.frame)
		if f := c.next("error"); f.Code != protocol.CodeBadField || f.Ref != 9 || !strings.Contains(f.Error, tc.want) {
			t.Errorf("%s: %s", tc.frame, f.raw)
		}
	}
	c.send(`{"type":"act","do":"heal"}`)
	if f := c.next("events", "error"); !strings.Contains(f.raw, `"type":"heal"`) {
		t.Fatalf("heal: %s", f.raw)
	}
}
