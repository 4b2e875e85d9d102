package sim_test

import (
	"slices"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
)

// A violation names the processes it is about as data (indexes in the event, ids in
// the trace), and a deadlock with a wait-for cycle carries the cycle, closed on its
// first process: what a page needs to draw it.
func TestViolationData(t *testing.T) {
	cycle := cfgOf(&pingSpec, []int{10, 20, 30}, &params{
		Mode: []string{modeHang, modeHang},
		Peer: []int{-1, -1, 0},
		Wait: [][]int{{1}, {0}},
	}, 1)
	cycle.Actions = []sim.Action{req(0, 0), req(0, 1)}
	noCycle := cfgOf(&pingSpec, []int{10, 20, 30}, &params{
		Mode: []string{modeHang, modeHang, modeHang},
		Wait: [][]int{{-1, 7, 1}, {0}, {2}},
	}, 1)
	noCycle.Actions = []sim.Action{req(0, 0), req(0, 1), crash(1, 1)}
	leaders := cfgOf(&electSpec, []int{10, 20, 30, 40}, &params{}, 1)
	leaders.Actions = []sim.Action{elect(0, 0), elect(0, 1)}
	tests := []struct {
		name         string
		cfg          sim.Config
		nodes, cycle []int
	}{
		{"deadlock with a cycle", cycle, []int{0, 1}, []int{0, 1, 0}},
		{"deadlock without a cycle: those waiting", noCycle, []int{0}, nil},
		{"two self-leaders", leaders, []int{0, 1}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			evs := runEvents(t, tc.cfg)
			i := slices.IndexFunc(evs, func(ev sim.Event) bool { return ev.Type == sim.EvViolation })
			if i < 0 {
				t.Fatal("no violation")
			}
			if ev := evs[i]; !slices.Equal(ev.Nodes, tc.nodes) || !slices.Equal(ev.Cycle, tc.cycle) {
				t.Fatalf("%s: nodes %v cycle %v, want %v and %v", ev.Detail, ev.Nodes, ev.Cycle, tc.nodes, tc.cycle)
			}
		})
	}
}
