package web

import (
	"reflect"
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/protocol"
	"github.com/teach-dist/playground/runtime/session"
	"github.com/teach-dist/playground/runtime/sim"
)

// The act frame's network fields and groups decode into the session's command.
func TestParseActNetworkAndPartition(t *testing.T) {
	tests := []struct {
		frame string
		want  session.Command
	}{
		{`{"type":"act","do":"network","delay":[1,3],"fifo":false,"loss":0.1,"hold":true}`,
			session.Command{Kind: session.Act, Do: sim.ActNetwork, Net: sim.NetChange{
				Set: sim.NetDelay | sim.NetFIFO | sim.NetLoss | sim.NetHold, DelayMin: 1, DelayMax: 3, Loss: 0.1, Hold: true}}},
		{`{"type":"act","do":"network","delay":4,"ref":2}`,
			session.Command{Kind: session.Act, Ref: 2, Do: sim.ActNetwork, Net: sim.NetChange{Set: sim.NetDelay, DelayMin: 4, DelayMax: 4}}},
		{`{"type":"act","do":"network","hold":false}`,
			session.Command{Kind: session.Act, Do: sim.ActNetwork, Net: sim.NetChange{Set: sim.NetHold}}},
		{`{"type":"act","do":"partition","groups":[[0,1],[2]]}`,
			session.Command{Kind: session.Act, Do: sim.ActPartition, Groups: [][]int{{0, 1}, {2}}}},
		{`{"type":"act","do":"heal"}`, session.Command{Kind: session.Act, Do: sim.ActHeal}},
	}
	for _, tc := range tests {
		got, ferr := parseFrame([]byte(tc.frame))
		if ferr != nil {
			t.Errorf("%s: %s: %s", tc.frame, ferr.code, ferr.msg)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.frame, got, tc.want)
		}
	}
}

// Bad network and partition frames get an error naming the field.
func TestParseActBadNetworkFieldsNameTheField(t *testing.T) {
	tests := []struct{ frame, code, field string }{
		{`{"type":"act","do":"network"}`, protocol.CodeBadField, "network:"},
		{`{"type":"act","do":"network","delay":[3,1]}`, protocol.CodeBadField, "delay:"},
		{`{"type":"act","do":"network","delay":[1,2,3]}`, protocol.CodeBadField, "delay:"},
		{`{"type":"act","do":"network","delay":"slow"}`, protocol.CodeBadField, "delay:"},
		{`{"type":"act","do":"network","delay":null}`, protocol.CodeBadField, "delay:"},
		{`{"type":"act","do":"network","loss":1.5}`, protocol.CodeBadField, "loss:"},
		{`{"type":"act","do":"network","loss":-1}`, protocol.CodeBadField, "loss:"},
		{`{"type":"act","do":"network","fifo":"on"}`, protocol.CodeBadFrame, "fifo"},
		{`{"type":"act","do":"network","hold":1}`, protocol.CodeBadFrame, "hold"},
		{`{"type":"act","do":"network","speedy":true}`, protocol.CodeBadFrame, "speedy"},
		{`{"type":"act","do":"crash","node":1,"fifo":true}`, protocol.CodeBadField, "fifo:"},
		{`{"type":"act","do":"deliver","msg":1,"delay":2}`, protocol.CodeBadField, "delay:"},
		{`{"type":"act","do":"partition"}`, protocol.CodeBadField, "groups:"},
		{`{"type":"act","do":"partition","groups":[]}`, protocol.CodeBadField, "groups:"},
		{`{"type":"act","do":"partition","groups":[[0,"a"]]}`, protocol.CodeBadFrame, "groups"},
		{`{"type":"act","do":"heal","groups":[[0]]}`, protocol.CodeBadField, "groups:"},
		{`{"type":"act","do":"teleport"}`, protocol.CodeBadField, "network"}, // the allowed list names it
	}
	for _, tc := range tests {
		_, ferr := parseFrame([]byte(tc.frame))
		if ferr == nil {
			t.Errorf("%s: accepted", tc.frame)
			continue
		}
		if ferr.code != tc.code || !strings.Contains(ferr.msg, tc.field) {
			t.Errorf("%s: %s %q, want %s naming %q", tc.frame, ferr.code, ferr.msg, tc.code, tc.field)
		}
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
