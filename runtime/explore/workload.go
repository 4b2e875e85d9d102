package explore

import (
	"fmt"
	"slices"

	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/scenarios"
)

// MaxRequests bounds WithRequests: the states grow very fast with each round.
const MaxRequests = 4

// WithRequests returns a copy of a mutual exclusion scenario whose requests are
// replaced: every process asks k times, first at time 0 (the start) and then at time
// 1, which in an untimed search means whenever it is free again.
func WithRequests(sc *scenarios.Scenario, k int) (*scenarios.Scenario, error) {
	if sc.Spec() == nil || sc.Spec().Family != sim.Mutex {
		return nil, &InputError{Field: "requests", Reason: fmt.Sprintf("%s is not a mutual exclusion algorithm", sc.Algorithm)}
	}
	if k < 1 || k > MaxRequests {
		return nil, &InputError{Field: "requests", Reason: fmt.Sprintf("%d is out of range (1 to %d)", k, MaxRequests)}
	}
	c := *sc
	c.Events = nil
	for _, e := range sc.Events {
		if e.Do != "request" {
			c.Events = append(c.Events, e)
		}
	}
	ids := idsOf(sc)
	for r := 0; r < k; r++ {
		for _, id := range ids {
			c.Events = append(c.Events, scenarios.Event{At: min(r, 1), Do: "request", Node: &id})
		}
	}
	slices.SortStableFunc(c.Events, func(a, b scenarios.Event) int { return a.At - b.At })
	c.Captions = nil
	return &c, nil
}

// DefaultWorkload gives a scenario with no workload something to explore: in a
// mutual exclusion algorithm every process asks once, at the start; in an election
// the process with the lowest id calls one. It returns the scenario unchanged (and "")
// when it has requests or elections of its own, and otherwise says what it added.
func DefaultWorkload(sc *scenarios.Scenario) (*scenarios.Scenario, string, error) {
	spec := sc.Spec()
	if spec == nil {
		return nil, "", &InputError{Field: "algorithm", Reason: fmt.Sprintf("%q is unknown", sc.Algorithm)}
	}
	for _, e := range sc.Events {
		if e.Do == "request" || e.Do == "elect" {
			return sc, "", nil
		}
	}
	if spec.Family == sim.Mutex {
		c, err := WithRequests(sc, 1)
		return c, "every process asks for the CS once, at the start", err
	}
	ids := idsOf(sc)
	low := slices.Min(ids)
	c := *sc
	c.Events = append([]scenarios.Event{{At: 0, Do: "elect", Node: &low}}, sc.Events...)
	slices.SortStableFunc(c.Events, func(a, b scenarios.Event) int { return a.At - b.At })
	c.Captions = nil
	return &c, fmt.Sprintf("P%d calls an election at the start", low), nil
}

func idsOf(sc *scenarios.Scenario) []int {
	if sc.IDs != nil {
		return slices.Clone(sc.IDs)
	}
	n := sc.Nodes
	if n == 0 {
		n = sc.Spec().Defaults.Nodes
	}
	return sc.Spec().Defaults.IDs(n)
}
