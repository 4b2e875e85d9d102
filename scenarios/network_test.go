package scenarios

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/runtime/sim"
)

// The network event: every field optional, at least one, each validated by name.
func TestNetworkEventDecodes(t *testing.T) {
	tests := []struct {
		event string
		want  sim.NetChange
	}{
		{`{"at":3,"do":"network","delay":[1,3],"fifo":false,"loss":0.1,"hold":true}`,
			sim.NetChange{Set: sim.NetDelay | sim.NetFIFO | sim.NetLoss | sim.NetHold, DelayMin: 1, DelayMax: 3, Loss: 0.1, Hold: true}},
		{`{"at":3,"do":"network","delay":4}`, sim.NetChange{Set: sim.NetDelay, DelayMin: 4, DelayMax: 4}},
		{`{"at":3,"do":"network","fifo":true}`, sim.NetChange{Set: sim.NetFIFO, FIFO: true}},
		{`{"at":3,"do":"network","loss":0}`, sim.NetChange{Set: sim.NetLoss}},
		{`{"at":3,"do":"network","hold":false}`, sim.NetChange{Set: sim.NetHold}},
	}
	for _, tc := range tests {
		doc := `{"version":1,"algorithm":"ricart-agrawala","nodes":3,"events":[` + tc.event + `]}`
		sc, err := Parse([]byte(doc))
		if err != nil {
			t.Fatalf("%s: %v", tc.event, err)
		}
		cfg, err := sc.Config()
		if err != nil {
			t.Fatal(err)
		}
		a := cfg.Actions[0]
		if a.Do != sim.ActNetwork || a.At != 3 || a.Net != tc.want {
			t.Errorf("%s: action %+v, want network at 3 with %+v", tc.event, a, tc.want)
		}
		// Encoding the scenario gives the same event back.
		var buf bytes.Buffer
		if err := sc.Encode(&buf); err != nil {
			t.Fatal(err)
		}
		again, err := Parse(buf.Bytes())
		if err != nil {
			t.Fatalf("%s: encoded scenario does not decode: %v", tc.event, err)
		}
		cfg2, _ := again.Config()
		if cfg2.Actions[0].Net != tc.want {
			t.Errorf("%s: round trip gives %+v", tc.event, cfg2.Actions[0].Net)
		}
	}
}

func TestBadNetworkEventsNameTheField(t *testing.T) {
	tests := []struct{ event, field string }{
		{`{"at":1,"do":"network"}`, "events[0]:"},
		{`{"at":1,"do":"network","delay":[3,1]}`, "events[0].delay:"},
		{`{"at":1,"do":"network","delay":[1,2,3]}`, "events[0].delay:"},
		{`{"at":1,"do":"network","delay":[]}`, "events[0].delay:"},
		{`{"at":1,"do":"network","delay":"slow"}`, "events[0].delay:"},
		{`{"at":1,"do":"network","delay":[-1,2]}`, "events[0].delay:"},
		{`{"at":1,"do":"network","loss":2}`, "events[0].loss:"},
		{`{"at":1,"do":"network","loss":-0.5}`, "events[0].loss:"},
		{`{"at":1,"do":"network","fifo":"yes"}`, "fifo"},
		{`{"at":1,"do":"network","hold":1}`, "hold"},
		{`{"at":1,"do":"network","node":1,"fifo":true}`, "events[0].node:"},
		{`{"at":1,"do":"crash","node":1,"loss":0.5}`, "events[0].loss:"},
		{`{"at":1,"do":"heal","hold":true}`, "events[0].hold:"},
		{`{"at":1,"do":"network","fifo":true,"groups":[[0]]}`, "events[0].groups:"},
	}
	for _, tc := range tests {
		doc := `{"version":1,"algorithm":"ricart-agrawala","nodes":3,"events":[{"at":0,"do":"request","node":0},` + tc.event + `]}`
		doc = strings.Replace(doc, "events[0]", "events[1]", 1)
		_, err := Parse([]byte(doc))
		want := strings.Replace(tc.field, "events[0]", "events[1]", 1)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error naming %s", tc.event, err, want)
		}
	}
	// A bad delay in the network of the scenario is still named as such.
	if _, err := Parse([]byte(`{"version":1,"algorithm":"ricart-agrawala","network":{"delay":"x"}}`)); err == nil || !strings.Contains(err.Error(), "network.delay:") {
		t.Errorf("network.delay: %v", err)
	}
}

// A scheduled network event changes the run: hold from t=0 keeps every message in
// the network, so nobody enters the CS.
func TestNetworkEventChangesTheRun(t *testing.T) {
	base := `{"version":1,"algorithm":"ricart-agrawala","nodes":3,"seed":4,"until":60,"events":[{"at":0,"do":"request","node":0}`
	plain, err := Parse([]byte(base + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	held, err := Parse([]byte(base + `,{"at":0,"do":"network","hold":true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if a := trace(t, plain); !bytes.Contains(a, []byte(`"type":"enter"`)) {
		t.Fatalf("seed %d: without the event nobody entered", plain.Seed)
	}
	b := trace(t, held)
	if bytes.Contains(b, []byte(`"type":"enter"`)) || bytes.Contains(b, []byte(`"type":"deliver"`)) {
		t.Fatalf("seed %d: with hold on from t=0 a message was delivered", held.Seed)
	}
	if !bytes.Equal(b, trace(t, held)) {
		t.Fatalf("seed %d: the same scenario gave two traces", held.Seed)
	}
}

// Links carry network events: a kernel change written as an event (the link codec
// converts kernel actions with sim.ActionJSONOf) reads back as the same change.
func TestNetworkEventRoundTrips(t *testing.T) {
	c := sim.NetChange{Set: sim.NetDelay | sim.NetLoss | sim.NetHold, DelayMin: 2, DelayMax: 5, Loss: 0.25}
	ids := []int{0, 1, 2}
	e, err := sim.ActionJSONOf(&sim.Action{Do: sim.ActNetwork, Net: c}, ids)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(e)
	if string(b) != `{"at":0,"do":"network","delay":[2,5],"loss":0.25,"hold":false}` {
		t.Fatalf("event %s", b)
	}
	spec, _ := algorithms.Lookup("ricart-agrawala")
	got, err := e.Action(spec, ids)
	if err != nil || got.Net != c {
		t.Fatalf("back: %+v, %v; want %+v", got.Net, err, c)
	}
}

// A link carries network events and the user's picks in hold mode: decoded, it gives
// the same interventions, so the replay is the same run.
func TestNetworkEventsTravelInALink(t *testing.T) {
	sc, err := Parse([]byte(`{"version":1,"algorithm":"ricart-agrawala","nodes":3,"seed":1}`))
	if err != nil {
		t.Fatal(err)
	}
	on, fifo, loss := true, false, 0.1
	two := 2
	l := Link{Scenario: sc, Step: 2, Interventions: []Intervention{
		{Step: 0, Event: Event{Do: "network", Hold: &on}},
		{Step: 0, Event: Event{Do: "request", Node: new(int)}},
		{Step: 0, Event: Event{Do: "deliver", Msg: 2}},
		{Step: 1, Event: Event{Do: "network", Delay: Delay{2, 5}, FIFO: &fifo, Loss: &loss}},
		{Step: 1, Event: Event{Do: "partition", Groups: [][]int{{0, 1}, {two}}}},
	}}
	code, err := EncodeLink(l)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeLink(code)
	if err != nil {
		t.Fatal(err)
	}
	cfg, ivs, err := back.Run()
	if err != nil {
		t.Fatal(err)
	}
	if len(ivs) != 5 || ivs[0].Action.Net != (sim.NetChange{Set: sim.NetHold, Hold: true}) ||
		ivs[3].Action.Net != (sim.NetChange{Set: sim.NetDelay | sim.NetFIFO | sim.NetLoss, DelayMin: 2, DelayMax: 5, Loss: 0.1}) {
		t.Fatalf("decoded interventions %+v", ivs)
	}
	var a, b []byte
	if _, err := sim.Replay(cfg, ivs, back.Step, sim.NewEncoder(cfg.Spec, cfg.IDs).Lines(&a)); err != nil {
		t.Fatal(err)
	}
	cfg0, ivs0, err := l.Run()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sim.Replay(cfg0, ivs0, l.Step, sim.NewEncoder(cfg0.Spec, cfg0.IDs).Lines(&b)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) || !bytes.Contains(a, []byte(`"type":"deliver","node":2,"msg":{"id":2`)) {
		t.Fatalf("replay of the decoded link differs, or lacks the pick:\n%s\n%s", a, b)
	}
}
