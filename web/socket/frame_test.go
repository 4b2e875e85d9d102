package socket

import (
	"reflect"
	"strings"
	"testing"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/runtime/protocol"
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
		got, ferr := ParseFrame([]byte(tc.frame))
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
		{`{"type":"act","do":"partition","groups":[[]]}`, protocol.CodeBadField, "groups[0]:"},
		{`{"type":"act","do":"crash","node":1,"node":2}`, protocol.CodeBadField, "node: is given twice"},
		{`{"type":"act","type":"step"}`, protocol.CodeBadField, "type: is given twice"},
		{`{"type":"act","do":"teleport"}`, protocol.CodeBadField, "network"}, // the allowed list names it
	}
	for _, tc := range tests {
		_, ferr := ParseFrame([]byte(tc.frame))
		if ferr == nil {
			t.Errorf("%s: accepted", tc.frame)
			continue
		}
		if ferr.code != tc.code || !strings.Contains(ferr.msg, tc.field) {
			t.Errorf("%s: %s %q, want %s naming %q", tc.frame, ferr.code, ferr.msg, tc.code, tc.field)
		}
	}
}

// The act frame {"do":"tell","node":<id>,"to":<id>} decodes into the session's
// command; a tell without both ids, or a to on another action, names the field.
func TestParseActTell(t *testing.T) {
	got, ferr := ParseFrame([]byte(`{"type":"act","do":"tell","node":3,"to":1,"ref":4}`))
	if ferr != nil {
		t.Fatalf("%s: %s", ferr.code, ferr.msg)
	}
	want := session.Command{Kind: session.Act, Ref: 4, Act: sim.ActionJSON{Do: "tell", Node: new(3), To: new(1)}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	for _, tc := range []struct{ frame, code, field string }{
		{`{"type":"act","do":"tell","node":3}`, protocol.CodeBadField, "to:"},
		{`{"type":"act","do":"tell","to":3}`, protocol.CodeBadField, "node"},
		{`{"type":"act","do":"tell","node":3,"to":"P1"}`, protocol.CodeBadFrame, "to"},
		{`{"type":"act","do":"crash","node":3,"to":1}`, protocol.CodeBadField, "to:"},
		{`{"type":"act","do":"tell","node":3,"to":1,"groups":[[0]]}`, protocol.CodeBadField, "groups:"},
	} {
		_, ferr := ParseFrame([]byte(tc.frame))
		if ferr == nil {
			t.Errorf("%s: accepted", tc.frame)
			continue
		}
		if ferr.code != tc.code || !strings.Contains(ferr.msg, tc.field) {
			t.Errorf("%s: %s %q, want %s naming %q", tc.frame, ferr.code, ferr.msg, tc.code, tc.field)
		}
	}
}
