package session

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/protocol"
	"github.com/teach-dist/playground/runtime/sim"
)

// A tell from the playground: ids in; the APP goes out at once, arrives a step later
// as a delivery of its own that no rule follows (the algorithm never sees it), and is
// recorded as an intervention with node indexes.
func TestTellFromThePlayground(t *testing.T) {
	m := NewManager(2, Options{})
	defer m.Close()
	s, c := start(t, m, `{"version":1,"algorithm":"ricart-agrawala","nodes":3,"ids":[10,20,30],"seed":2}`)
	do(t, s, c, Command{Kind: Act, Act: sim.ActionJSON{Do: "tell", Node: new(10), To: new(30)}})
	f := c.next(t, "events", "error")
	if f.Type != "events" || !strings.Contains(string(f.raw), `"type":"send","node":10,"msg":{"id":1,"type":"APP","from":10,"to":30}`) {
		t.Fatalf("tell: %s", f.raw)
	}
	evs := stepAll(t, s, c)
	var types []string
	for _, e := range evs {
		var ev struct{ Type string }
		if err := json.Unmarshal(e, &ev); err != nil {
			t.Fatal(err)
		}
		types = append(types, ev.Type)
	}
	if got := strings.Join(types, " "); got != "deliver" {
		t.Fatalf("after the tell the run did %q, want only the APP's delivery", got)
	}
	r, err := s.Recipe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Interventions) != 1 {
		t.Fatalf("interventions %+v", r.Interventions)
	}
	if a := r.Interventions[0].Action; a.Do != sim.ActTell || a.Node != 0 || a.To != 2 {
		t.Fatalf("recorded %+v, want tell from index 0 to index 2", a)
	}
	for _, tc := range []struct {
		cmd  Command
		want string
	}{
		{Command{Kind: Act, Act: sim.ActionJSON{Do: "tell", Node: new(10), To: new(99)}}, "to: 99 is not a node id"},
		{Command{Kind: Act, Act: sim.ActionJSON{Do: "tell", Node: new(99), To: new(10)}}, "node: 99 is not a node id"},
		{Command{Kind: Act, Act: sim.ActionJSON{Do: "tell", Node: new(20), To: new(20)}}, "to: P20 would tell itself"},
	} {
		do(t, s, c, tc.cmd)
		f := c.next(t, "error")
		if f.Code != protocol.CodeBadField || !strings.Contains(f.Error, tc.want) {
			t.Errorf("%+v: %s, want bad-field naming %q", tc.cmd, f.raw, tc.want)
		}
	}
	do(t, s, c, act(sim.ActCrash, 20))
	c.next(t, "events")
	do(t, s, c, Command{Kind: Act, Act: sim.ActionJSON{Do: "tell", Node: new(20), To: new(10)}})
	if f := c.next(t, "error"); f.Code != protocol.CodeRefused || !strings.Contains(f.Error, "P20 is crashed") {
		t.Errorf("a tell from a crashed process: %s", f.raw)
	}
}
