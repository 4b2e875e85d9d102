// Package simtest is the algorithms' tests' kit: one process driven by hand for the
// one-test-per-rule tests (Fixture, Want, EveryRuleHasATest), params tables
// (ParseTable), whole runs with random workloads for seed sweeps, and questions about
// the recorded trace (docs/adding-an-algorithm.md, step 7).
package simtest

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
)

// Run runs cfg to the end and returns every event; it fails the test, naming the seed,
// if the run returns an error.
func Run(t testing.TB, cfg sim.Config) []sim.Event {
	t.Helper()
	_, evs := RunSim(t, cfg)
	return evs
}

// RunSim is Run that also returns the run, for what is asked of its end (Quiescent,
// the nodes' final states).
func RunSim(t testing.TB, cfg sim.Config) (*sim.Sim, []sim.Event) {
	t.Helper()
	var rec sim.Recorder
	s, err := sim.New(cfg, rec.Sink())
	if err != nil {
		t.Fatalf("seed %d: %v", cfg.Seed, err)
	}
	if err := s.Run(); err != nil {
		t.Fatalf("seed %d: %v", cfg.Seed, err)
	}
	return s, rec.Events
}

// Trace runs cfg and returns its trace v1 JSON lines.
func Trace(t testing.TB, cfg sim.Config) []byte {
	t.Helper()
	var b []byte
	s, err := sim.New(cfg, sim.NewEncoder(cfg.Spec, cfg.IDs).Lines(&b))
	if err != nil {
		t.Fatalf("seed %d: %v", cfg.Seed, err)
	}
	if err := s.Run(); err != nil {
		t.Fatalf("seed %d: %v", cfg.Seed, err)
	}
	return b
}

// IDs returns 0..n-1.
func IDs(n int) []int {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = i
	}
	return ids
}

// Workload describes a random workload for a seed sweep.
type Workload struct {
	Requests int // how many CS requests (mutex) or elections (election), spread over Span
	Span     int // requests start in [0, Span)
	Crashes  int // how many crashes; each node crashes at most once
	Recover  bool
}

// RandomActions draws a workload from the seed: requests (or elections) at random
// nodes and times, plus crashes (and recoveries) if asked. The same seed gives the
// same actions.
func RandomActions(seed uint64, n int, family sim.Family, w Workload) []sim.Action {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	var acts []sim.Action
	do := sim.ActRequest
	if family == sim.Election {
		do = sim.ActElect
	}
	for k := 0; k < w.Requests; k++ {
		acts = append(acts, sim.Action{At: r.IntN(max(w.Span, 1)), Do: do, Node: r.IntN(n)})
	}
	crashed := map[int]bool{}
	for k := 0; k < w.Crashes && len(crashed) < n-1; k++ {
		i := r.IntN(n)
		if crashed[i] {
			continue
		}
		crashed[i] = true
		at := r.IntN(max(w.Span, 1))
		acts = append(acts, sim.Action{At: at, Do: sim.ActCrash, Node: i})
		if w.Recover {
			acts = append(acts, sim.Action{At: at + 1 + r.IntN(max(w.Span, 1)), Do: sim.ActRecover, Node: i})
		}
	}
	return acts
}

// Count returns how many events of type t the trace holds.
func Count(evs []sim.Event, t sim.EventType) int {
	c := 0
	for i := range evs {
		if evs[i].Type == t {
			c++
		}
	}
	return c
}

// CountMsgs returns how many messages of this type were sent.
func CountMsgs(evs []sim.Event, msgType string) int {
	c := 0
	for i := range evs {
		if evs[i].Type == sim.EvSend && evs[i].Msg.Type == msgType {
			c++
		}
	}
	return c
}

// Violations returns the violation events, as "property: detail".
func Violations(evs []sim.Event) []string {
	var out []string
	for i := range evs {
		if evs[i].Type == sim.EvViolation {
			out = append(out, evs[i].Property+": "+evs[i].Detail)
		}
	}
	return out
}

// Rules returns the rule labels node fired, in order.
func Rules(evs []sim.Event, node int) []string {
	var out []string
	for i := range evs {
		if evs[i].Type == sim.EvRule && evs[i].Node == node {
			out = append(out, evs[i].Rule)
		}
	}
	return out
}

// Unserved lists requests of nodes alive at the end that never entered the CS.
func Unserved(evs []sim.Event, n int) []string {
	pending := make([]int, n)
	alive := make([]bool, n)
	for i := range alive {
		alive[i] = true
		pending[i] = -1
	}
	for i := range evs {
		e := &evs[i]
		switch e.Type {
		case sim.EvRequest:
			pending[e.Node] = e.T
		case sim.EvEnter:
			pending[e.Node] = -1
		case sim.EvCrash:
			alive[e.Node] = false
			pending[e.Node] = -1
		case sim.EvRecover:
			alive[e.Node] = true
		}
	}
	var out []string
	for i := range pending {
		if alive[i] && pending[i] >= 0 {
			out = append(out, fmt.Sprintf("node index %d asked at t=%d", i, pending[i]))
		}
	}
	return out
}
