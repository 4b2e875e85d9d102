package causal_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/teach-dist/playground/algorithms/bully"
	"github.com/teach-dist/playground/algorithms/ricartagrawala"
	"github.com/teach-dist/playground/runtime/causal"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/runtime/sim/simtest"
)

// Three processes, the classic picture: P0 sends m1 to P1 and then does something of
// its own; P1 receives m1 and sends m2 to P2; P2 times out before m2 arrives.
// Rules, drops and global events get no clock.
func TestClocksOfAHandMadeTrace(t *testing.T) {
	events := []causal.Event{
		{Type: "rule", Node: 0},            // 0: annotation only
		{Type: "send", Node: 0, Msg: 1},    // 1: P0 [1 0 0]
		{Type: "request", Node: 0},         // 2: P0 [2 0 0]
		{Type: "timer", Node: 2},           // 3: P2 [0 0 1]
		{Type: "deliver", Node: 1, Msg: 1}, // 4: P1 [1 1 0]
		{Type: "rule", Node: 1},            // 5
		{Type: "send", Node: 1, Msg: 2},    // 6: P1 [1 2 0]
		{Type: "send", Node: 1, Msg: 3},    // 7: P1 [1 3 0]
		{Type: "drop", Node: 1, Msg: 3},    // 8: lost: no clock, no delivery
		{Type: "violation", Node: -1},      // 9
		{Type: "deliver", Node: 2, Msg: 2}, // 10: P2 [1 2 2]: m2 was sent at [1 2 0]
		{Type: "crash", Node: 0},           // 11: P0 [3 0 0]
		{Type: "recover", Node: 0},         // 12: P0 [4 0 0]: the line goes on
		{Type: "partition", Node: -1},      // 13
	}
	want := []struct {
		proc    int
		lamport int
		vector  []int
	}{
		{-1, 0, nil},
		{0, 1, []int{1, 0, 0}},
		{0, 2, []int{2, 0, 0}},
		{2, 1, []int{0, 0, 1}},
		{1, 2, []int{1, 1, 0}},
		{-1, 0, nil},
		{1, 3, []int{1, 2, 0}},
		{1, 4, []int{1, 3, 0}},
		{-1, 0, nil},
		{-1, 0, nil},
		{2, 4, []int{1, 2, 2}},
		{0, 3, []int{3, 0, 0}},
		{0, 4, []int{4, 0, 0}},
		{-1, 0, nil},
	}
	got := causal.Compute(3, events)
	for i, w := range want {
		g := got[i]
		if g.Process != w.proc || g.Lamport != w.lamport || !slices.Equal(g.Vector, w.vector) {
			t.Errorf("event %d (%s at %d): got process %d, Lamport %d, vector %v; want %d, %d, %v",
				i, events[i].Type, events[i].Node, g.Process, g.Lamport, g.Vector, w.proc, w.lamport, w.vector)
		}
	}

	pairs := []struct {
		a, b   int
		before bool // a -> b
		conc   bool
	}{
		{1, 4, true, false},  // send m1 -> its delivery
		{1, 10, true, false}, // transitively through P1
		{2, 4, false, true},  // P0's request is concurrent with P1 receiving m1
		{3, 10, true, false}, // process order at P2
		{3, 4, false, true},  // P2's timer knows nothing of P1
		{7, 10, false, true}, // the lost message carries nothing
		{4, 1, false, false}, // not backwards
		{12, 11, false, false},
		{11, 12, true, false}, // a recovery follows its crash
		{0, 1, false, false},  // a rule has no clock
		{4, 4, false, false},  // not strict with itself
	}
	for _, p := range pairs {
		if hb := causal.HappenedBefore(got[p.a], got[p.b]); hb != p.before {
			t.Errorf("HappenedBefore(%d, %d) = %v, want %v", p.a, p.b, hb, p.before)
		}
		if c := causal.Concurrent(got[p.a], got[p.b]); c != p.conc {
			t.Errorf("Concurrent(%d, %d) = %v, want %v", p.a, p.b, c, p.conc)
		}
	}
}

// ParseTrace maps ids to positions: scenario ids need not be 0..n-1.
func TestParseTraceMapsIDsToPositions(t *testing.T) {
	trace := `{"seq":0,"t":0,"type":"send","node":7,"msg":{"id":1,"type":"REQUEST","from":7,"to":3,"ts":1}}
{"seq":1,"t":2,"type":"deliver","node":3,"msg":{"id":1,"type":"REQUEST","from":7,"to":3,"ts":1}}
{"seq":2,"t":2,"type":"rule","node":3,"rule":"RH1"}
{"seq":3,"t":2,"type":"violation","property":"pending","detail":"x"}
`
	evs, err := causal.ParseTrace([]byte(trace), []int{3, 7})
	if err != nil {
		t.Fatal(err)
	}
	want := []causal.Event{{"send", 1, 1}, {"deliver", 0, 1}, {"rule", 0, 0}, {"violation", -1, 0}}
	if !slices.Equal(evs, want) {
		t.Fatalf("got %v, want %v", evs, want)
	}
	if _, err := causal.ParseTrace([]byte(`{"type":"send","node":9}`), []int{3, 7}); err == nil {
		t.Fatal("an unknown id was accepted")
	}
	if _, err := causal.ParseTrace([]byte("{"), []int{3, 7}); err == nil {
		t.Fatal("a broken line was accepted")
	}
}

// On whole runs, the vector clocks order two events exactly when a path of process
// order and message edges leads from one to the other (Lamport's definition), and
// the Lamport clock grows along every such path.
func TestClocksAgreeWithHappenedBeforeOnRuns(t *testing.T) {
	cases := []struct {
		name string
		cfg  sim.Config
	}{
		{"ricart-agrawala", sim.Config{Spec: ricartagrawala.Spec(), IDs: simtest.IDs(4), Seed: 3,
			Network: sim.Network{DelayMin: 1, DelayMax: 4, Loss: 0.1}, CS: 2, Until: 200,
			Actions: simtest.RandomActions(3, 4, sim.Mutex, simtest.Workload{Requests: 5, Span: 40, Crashes: 1, Recover: true})}},
		{"bully", sim.Config{Spec: bully.Spec(), IDs: []int{4, 9, 2, 7, 5}, Seed: 8,
			Network: sim.Network{DelayMin: 1, DelayMax: 3}, Until: 300,
			Actions: simtest.RandomActions(8, 5, sim.Election, simtest.Workload{Requests: 2, Span: 30, Crashes: 2})}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raw := simtest.Run(t, c.cfg)
			evs := make([]causal.Event, len(raw))
			for i := range raw {
				evs[i] = causal.FromSim(&raw[i])
			}
			n := len(c.cfg.IDs)
			clocks := causal.Compute(n, evs)
			reach := closure(n, evs)
			checked := 0
			for a := range evs {
				for b := range evs {
					if clocks[a].Process < 0 || clocks[b].Process < 0 {
						continue
					}
					want := reach[a][b]
					if got := causal.HappenedBefore(clocks[a], clocks[b]); got != want {
						t.Fatalf("seed %d: events %d (%s) and %d (%s): HappenedBefore %v, paths say %v",
							c.cfg.Seed, a, evs[a].Type, b, evs[b].Type, got, want)
					}
					if want && clocks[a].Lamport >= clocks[b].Lamport {
						t.Fatalf("seed %d: %d -> %d but Lamport %d >= %d", c.cfg.Seed, a, b, clocks[a].Lamport, clocks[b].Lamport)
					}
					checked++
				}
			}
			if checked < 1000 {
				t.Fatalf("seed %d: only %d pairs of process events: the run is too short to say anything", c.cfg.Seed, checked)
			}
		})
	}
}

// closure builds happened-before from its definition: process order and send ->
// deliver edges, closed transitively (the trace is in order, so one pass suffices).
func closure(n int, evs []causal.Event) [][]bool {
	reach := make([][]bool, len(evs))
	last := make([]int, n)
	for i := range last {
		last[i] = -1
	}
	sendAt := map[int64]int{}
	for i := range reach {
		reach[i] = make([]bool, len(evs))
	}
	for i, ev := range evs {
		if !causal.IsProcessEvent(ev.Type) || ev.Node < 0 {
			continue
		}
		preds := []int{}
		if p := last[ev.Node]; p >= 0 {
			preds = append(preds, p)
		}
		if ev.Type == "deliver" {
			if s, ok := sendAt[ev.Msg]; ok {
				preds = append(preds, s)
			}
		}
		for _, p := range preds {
			for k := range i {
				if reach[k][p] {
					reach[k][i] = true
				}
			}
			reach[p][i] = true
		}
		if ev.Type == "send" {
			sendAt[ev.Msg] = i
		}
		last[ev.Node] = i
	}
	return reach
}

func ExampleHappenedBefore() {
	clocks := causal.Compute(2, []causal.Event{
		{Type: "send", Node: 0, Msg: 1},
		{Type: "deliver", Node: 1, Msg: 1},
	})
	fmt.Println(clocks[0].Vector, clocks[1].Vector, causal.HappenedBefore(clocks[0], clocks[1]))
	// Output: [1 0] [1 1] true
}
