package web

import (
	"reflect"
	"strings"
	"testing"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/runtime/session"
	"github.com/teach-dist/playground/runtime/sim"
)

// The act frame's network fields and groups decode into the session's command, which
// the kernel's decoder turns into the action (ids 0, 1, 2 are indexes 0, 1, 2).
func TestParseActNetworkAndPartition(t *testing.T) {
	spec, _ := algorithms.Lookup("ricart-agrawala")
	ids := []int{0, 1, 2}
	act := func(do sim.ActionKind) sim.Action { return sim.Action{Do: do, From: -1, To: -1} }
	tests := []struct {
		frame string
		ref   int64
		want  sim.Action
	}{
		{`{"type":"act","do":"network","delay":[1,3],"fifo":false,"loss":0.1,"hold":true}`, 0,
			sim.Action{Do: sim.ActNetwork, From: -1, To: -1, Net: sim.NetChange{
				Set: sim.NetDelay | sim.NetFIFO | sim.NetLoss | sim.NetHold, DelayMin: 1, DelayMax: 3, Loss: 0.1, Hold: true}}},
		{`{"type":"act","do":"network","delay":4,"ref":2}`, 2,
			sim.Action{Do: sim.ActNetwork, From: -1, To: -1, Net: sim.NetChange{Set: sim.NetDelay, DelayMin: 4, DelayMax: 4}}},
		{`{"type":"act","do":"network","hold":false}`, 0,
			sim.Action{Do: sim.ActNetwork, From: -1, To: -1, Net: sim.NetChange{Set: sim.NetHold}}},
		{`{"type":"act","do":"partition","groups":[[0,1],[2]]}`, 0,
			sim.Action{Do: sim.ActPartition, From: -1, To: -1, Groups: [][]int{{0, 1}, {2}}}},
		{`{"type":"act","do":"heal"}`, 0, act(sim.ActHeal)},
	}
	for _, tc := range tests {
		got, ferr := parseFrame([]byte(tc.frame))
		if ferr != nil {
			t.Errorf("%s: %s: %s", tc.frame, ferr.code, ferr.msg)
			continue
		}
		if got.Kind != session.Act || got.Ref != tc.ref {
			t.Errorf("%s: command %+v", tc.frame, got)
		}
		a, err := got.Act.Action(spec, ids)
		if err != nil || !reflect.DeepEqual(a, tc.want) {
			t.Errorf("%s:\n got %+v (%v)\nwant %+v", tc.frame, a, err, tc.want)
		}
	}
}

// Bad network and partition frames get an error naming the field.
func TestParseActBadNetworkFieldsNameTheField(t *testing.T) {
	tests := []struct{ frame, code, field string }{
		{`{"type":"act","do":"network"}`, session.CodeBadField, "network:"},
		{`{"type":"act","do":"network","delay":[3,1]}`, session.CodeBadField, "delay:"},
		{`{"type":"act","do":"network","delay":[1,2,3]}`, session.CodeBadField, "delay:"},
		{`{"type":"act","do":"network","delay":"slow"}`, session.CodeBadField, "delay:"},
		{`{"type":"act","do":"network","delay":null}`, session.CodeBadField, "delay:"},
		{`{"type":"act","do":"network","loss":1.5}`, session.CodeBadField, "loss:"},
		{`{"type":"act","do":"network","loss":-1}`, session.CodeBadField, "loss:"},
		{`{"type":"act","do":"network","fifo":"on"}`, session.CodeBadFrame, "fifo"},
		{`{"type":"act","do":"network","hold":1}`, session.CodeBadFrame, "hold"},
		{`{"type":"act","do":"network","speedy":true}`, session.CodeBadFrame, "speedy"},
		{`{"type":"act","do":"crash","node":1,"fifo":true}`, session.CodeBadField, "fifo:"},
		{`{"type":"act","do":"deliver","msg":1,"delay":2}`, session.CodeBadField, "delay:"},
		{`{"type":"act","do":"partition"}`, session.CodeBadField, "groups:"},
		{`{"type":"act","do":"partition","groups":[]}`, session.CodeBadField, "groups:"},
		{`{"type":"act","do":"partition","groups":[[0,"a"]]}`, session.CodeBadFrame, "groups"},
		{`{"type":"act","do":"heal","groups":[[0]]}`, session.CodeBadField, "groups:"},
		{`{"type":"act","do":"teleport"}`, session.CodeBadField, "network"}, // the allowed list names it
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
		if f := c.next("error"); f.Code != session.CodeBadField || f.Ref != 9 || !strings.Contains(f.Error, tc.want) {
			t.Errorf("%s: %s", tc.frame, f.raw)
		}
	}
	c.send(`{"type":"act","do":"heal"}`)
	if f := c.next("events", "error"); !strings.Contains(f.raw, `"type":"heal"`) {
		t.Fatalf("heal: %s", f.raw)
	}
}
