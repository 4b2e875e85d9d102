package sim_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
)

// Every kind of action, as written (ids 10, 20, 30), decodes to the kernel's action
// and writes back to the same JSON. A new kind needs a row here.
func TestActionJSON_EveryKindRoundTrips(t *testing.T) {
	ids := []int{10, 20, 30}
	tests := []struct {
		spec *sim.Spec
		doc  string
		want sim.Action
	}{
		{&pingSpec, `{"at":3,"do":"request","node":20}`, sim.Action{At: 3, Do: sim.ActRequest, Node: 1, From: -1, To: -1}},
		{&pingSpec, `{"at":0,"do":"release","node":10}`, sim.Action{Do: sim.ActRelease, From: -1, To: -1}},
		{&pingSpec, `{"at":0,"do":"crash","node":30}`, sim.Action{Do: sim.ActCrash, Node: 2, From: -1, To: -1}},
		{&pingSpec, `{"at":0,"do":"recover","node":30}`, sim.Action{Do: sim.ActRecover, Node: 2, From: -1, To: -1}},
		{&electSpec, `{"at":0,"do":"elect","node":20}`, sim.Action{Do: sim.ActElect, Node: 1, From: -1, To: -1}},
		{&pingSpec, `{"at":0,"do":"drop","msg":4}`, sim.Action{Do: sim.ActDrop, Msg: 4, From: -1, To: -1}},
		{&pingSpec, `{"at":0,"do":"drop","from":30,"type":"PONG"}`, sim.Action{Do: sim.ActDrop, From: 2, To: -1, Type: "PONG"}},
		{&pingSpec, `{"at":0,"do":"partition","groups":[[10],[30,20]]}`, sim.Action{Do: sim.ActPartition, From: -1, To: -1, Groups: [][]int{{0}, {2, 1}}}},
		{&pingSpec, `{"at":0,"do":"heal"}`, sim.Action{Do: sim.ActHeal, From: -1, To: -1}},
		{&pingSpec, `{"at":0,"do":"deliver","msg":2}`, sim.Action{Do: sim.ActDeliver, Msg: 2, From: -1, To: -1}},
		{&pingSpec, `{"at":0,"do":"network","delay":[1,4],"fifo":true}`, sim.Action{Do: sim.ActNetwork, From: -1, To: -1,
			Net: sim.NetChange{Set: sim.NetDelay | sim.NetFIFO, DelayMin: 1, DelayMax: 4, FIFO: true}}},
		{&pingSpec, `{"at":0,"do":"fire","node":10,"name":"t"}`, sim.Action{Do: sim.ActFire, From: -1, To: -1, Timer: "t"}},
		{&pingSpec, `{"at":0,"do":"tell","node":10,"to":30}`, sim.Action{Do: sim.ActTell, From: -1, To: 2}},
	}
	covered := map[string]bool{}
	for _, tc := range tests {
		var j sim.ActionJSON
		if err := json.Unmarshal([]byte(tc.doc), &j); err != nil {
			t.Fatalf("%s: %v", tc.doc, err)
		}
		covered[j.Do] = true
		a, err := j.Action(tc.spec, ids)
		if err != nil || !reflect.DeepEqual(a, tc.want) {
			t.Errorf("%s: %+v, %v; want %+v", tc.doc, a, err, tc.want)
			continue
		}
		back, err := sim.ActionJSONOf(&a, ids)
		if err != nil {
			t.Fatalf("%s: %v", tc.doc, err)
		}
		if b, _ := json.Marshal(back); string(b) != tc.doc {
			t.Errorf("%s written back as %s", tc.doc, b)
		}
	}
	for _, name := range sim.ActionNames() {
		if !covered[name] {
			t.Errorf("no round trip for %q", name)
		}
	}
}

// Decoding names the field at fault: a field the kind does not take, one it needs, an
// unknown id, and what the kernel's check refuses.
func TestActionJSON_ErrorsNameTheField(t *testing.T) {
	tests := []struct{ doc, field, says string }{
		{`{"do":"jump"}`, "do", "allowed: request, release"},
		{`{"do":"heal","node":10}`, "node", `"heal" takes no node`},
		{`{"do":"crash","node":10,"msg":2}`, "msg", "msg belongs to drop and deliver only"},
		{`{"do":"crash","node":10,"to":20}`, "to", "to belongs to drop and tell only"},
		{`{"do":"heal","groups":[[10]]}`, "groups", "groups belong to partition only"},
		{`{"do":"crash","node":10,"hold":true}`, "hold", "hold belongs to network only"},
		{`{"do":"crash"}`, "node", `"crash" needs a node`},
		{`{"do":"crash","node":11}`, "node", "11 is not a node id (ids: 10 20 30)"},
		{`{"do":"partition","groups":[[10],[40]]}`, "groups[1][0]", "40 is not a node id"},
		{`{"do":"partition","groups":[[10],[10]]}`, "groups[1][0]", "10 is in two groups"},
		{`{"do":"partition"}`, "groups", "at least one group"},
		{`{"do":"partition","groups":[[]]}`, "groups[0]", "is empty"},
		{`{"do":"partition","groups":[[10],[]]}`, "groups[1]", "is empty"},
		{`{"do":"drop"}`, "msg", "or a filter"},
		{`{"do":"drop","type":"NOPE"}`, "type", `"NOPE" is not a message of test-ping`},
		{`{"do":"deliver"}`, "msg", "held message"},
		{`{"do":"tell","node":10}`, "to", "tell needs the id of the process to tell"},
		{`{"do":"tell","node":10,"to":10}`, "to", "P10 would tell itself"},
		{`{"do":"fire","node":10}`, "name", "fire needs the name"},
		{`{"do":"elect","node":10}`, "do", `"elect" needs an election algorithm; test-ping is mutual exclusion (allowed: request`},
		{`{"do":"network"}`, "", "network: give at least one of delay, fifo, loss, hold"},
		{`{"do":"network","delay":[1,2,3]}`, "delay", "expected a number or [min, max]"},
		{`{"do":"network","loss":2}`, "loss", "between 0 and 1"},
	}
	for _, tc := range tests {
		var j sim.ActionJSON
		if err := json.Unmarshal([]byte(tc.doc), &j); err != nil {
			t.Fatalf("%s: %v", tc.doc, err)
		}
		_, err := j.Action(&pingSpec, []int{10, 20, 30})
		var fe *sim.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(fe.Reason, tc.says) {
			t.Errorf("%s: %v, want field %q saying %q", tc.doc, err, tc.field, tc.says)
		}
	}
}

// A delay that is not a number or [min, max] fails in its own decoder, naming delay.
func TestDelay_DecodesANumberOrAPair(t *testing.T) {
	for doc, want := range map[string]sim.Delay{`2`: {2, 2}, `[2]`: {2}, `[1,3]`: {1, 3}} {
		var d sim.Delay
		if err := json.Unmarshal([]byte(doc), &d); err != nil || !reflect.DeepEqual(d, want) {
			t.Errorf("%s: %v, %v; want %v", doc, d, err, want)
		}
	}
	for _, doc := range []string{`"slow"`, `null`, `{}`} {
		var j sim.ActionJSON
		err := json.Unmarshal([]byte(`{"do":"network","delay":`+doc+`}`), &j)
		var fe *sim.FieldError
		if !errors.As(err, &fe) || fe.Field != "delay" {
			t.Errorf("delay %s: %v, want a *FieldError naming delay", doc, err)
		}
	}
}
