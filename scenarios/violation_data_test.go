package scenarios

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
)

// A violation carries, besides its words, the processes it is about (and a deadlock its
// wait-for cycle) as data, so a page can draw it: the trace writes them as ids.
func TestViolationsCarryTheirProcessesAsData(t *testing.T) {
	type data struct {
		Property string `json:"property"`
		Nodes    []int  `json:"nodes"`
		Cycle    []int  `json:"cycle"`
	}
	tests := []struct {
		name string
		want data // the first violation of the run
	}{
		// The notes' Maekawa deadlock with three processes (ids 1..3): P1 waits for P2's
		// vote, P2 for P3's, P3 for P1's.
		{"maekawa-deadlock", data{sim.PropDeadlock, []int{1, 2, 3}, []int{1, 2, 3, 1}}},
		// Lamport's algorithm on a channel that reorders: P0 enters while P1 is inside.
		{"lamport-non-fifo", data{sim.PropMutex, []int{0, 1}, nil}},
		// The crashed token holder leaves P2 and P5 waiting, with nobody to wait for.
		{"ricart-agrawala-token-crash-deadlock", data{sim.PropDeadlock, []int{2, 5}, nil}},
		// Two Bully processes end up with different leaders.
		{"bully-async-two-leaders", data{sim.PropLeader, []int{0, 2}, nil}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runCurated(t, tc.name)
			enc := sim.NewEncoder(mustSpec(t, tc.name), r.ids)
			for i := range r.events {
				ev := &r.events[i]
				if ev.Type != sim.EvViolation {
					continue
				}
				line := enc.Append(nil, ev)
				var got data
				if err := json.NewDecoder(bytes.NewReader(line)).Decode(&got); err != nil {
					t.Fatalf("%s: %v", line, err)
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("first violation %s, want %+v", line, tc.want)
				}
				return
			}
			t.Fatalf("no violation in %s: %v", tc.name, r.violations())
		})
	}
}

// The cycle a deadlock carries is the one its words name, and each process in it waits
// for the next: the cycle closes on its first process.
func TestDeadlockCycleIsClosedAndNamedInItsDetail(t *testing.T) {
	r := runCurated(t, "maekawa-deadlock")
	for _, ev := range r.events {
		if ev.Type != sim.EvViolation || ev.Property != sim.PropDeadlock {
			continue
		}
		if len(ev.Cycle) < 3 || ev.Cycle[0] != ev.Cycle[len(ev.Cycle)-1] {
			t.Fatalf("cycle %v is not closed on its first process", ev.Cycle)
		}
		want := "wait-for cycle"
		for k, i := range ev.Cycle {
			if k > 0 {
				want += " ->"
			}
			want += " P" + itoa(r.id(i))
		}
		if ev.Detail != want {
			t.Fatalf("detail %q, want %q from the cycle %v", ev.Detail, want, ev.Cycle)
		}
		return
	}
	t.Fatal("maekawa-deadlock reports no deadlock")
}

func mustSpec(t *testing.T, name string) *sim.Spec {
	t.Helper()
	sc, ok := Lookup(name)
	if !ok {
		t.Fatalf("no curated scenario %q", name)
	}
	return sc.Spec()
}
