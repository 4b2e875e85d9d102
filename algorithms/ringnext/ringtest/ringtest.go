// Package ringtest helps the ring elections' tests: it runs a scenario v1 text through
// the kernel with a given Spec (the registry, and so the scenarios package, cannot be
// used from inside an algorithm's own tests), and answers questions about the trace.
package ringtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/runtime/sim/simtest"
)

// scenario is the part of scenario v1 (docs/scenario.md) the ring scenarios use.
type scenario struct {
	Version   int    `json:"version"`
	Algorithm string `json:"algorithm"`
	Title     string `json:"title"`
	About     string `json:"about"`
	Nodes     int    `json:"nodes"`
	IDs       []int  `json:"ids"`
	Seed      uint64 `json:"seed"`
	Network   *struct {
		Delay []int `json:"delay"`
		FIFO  *bool `json:"fifo"`
	} `json:"network"`
	Params json.RawMessage `json:"params"`
	Events []struct {
		At   int    `json:"at"`
		Do   string `json:"do"`
		Node int    `json:"node"`
	} `json:"events"`
	Until    int             `json:"until"`
	Captions json.RawMessage `json:"captions"` // checked by the scenarios package
}

// Config turns a scenario v1 text into a kernel configuration for spec the way the
// scenarios package does (defaults from the spec, events by id), failing on anything
// it does not understand so a scenario handed on is known to be complete.
func Config(t testing.TB, spec *sim.Spec, text string) sim.Config {
	t.Helper()
	var s scenario
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		t.Fatalf("scenario: %v", err)
	}
	if s.Version != 2 || s.Algorithm != spec.Slug || s.Title == "" || s.About == "" {
		t.Fatalf("scenario: version %d, algorithm %q, title %q: want 2, %q and a title and about", s.Version, s.Algorithm, s.Title, spec.Slug)
	}
	if s.Nodes != 0 && s.Nodes != len(s.IDs) {
		t.Fatalf("scenario: nodes %d but %d ids", s.Nodes, len(s.IDs))
	}
	d := spec.Defaults
	cfg := sim.Config{Spec: spec, IDs: s.IDs, Seed: s.Seed, CS: d.CS, Until: d.Until,
		Network: sim.Network{DelayMin: d.Delay[0], DelayMax: d.Delay[1], FIFO: d.FIFO}}
	if nw := s.Network; nw != nil {
		if len(nw.Delay) == 2 {
			cfg.Network.DelayMin, cfg.Network.DelayMax = nw.Delay[0], nw.Delay[1]
		} else if nw.Delay != nil {
			t.Fatalf("scenario: network.delay %v: want [min, max]", nw.Delay)
		}
		if nw.FIFO != nil {
			cfg.Network.FIFO = *nw.FIFO
		}
	}
	if s.Until > 0 {
		cfg.Until = s.Until
	}
	if raw := bytes.TrimSpace(s.Params); len(raw) > 0 {
		p, err := spec.ParseParams(raw, s.IDs)
		if err != nil {
			t.Fatalf("scenario: %v", err)
		}
		cfg.Params = p
	}
	for k, e := range s.Events {
		do, ok := sim.ParseActionKind(e.Do)
		i := slices.Index(s.IDs, e.Node)
		if !ok || i < 0 {
			t.Fatalf("scenario: events[%d]: do %q node %d", k, e.Do, e.Node)
		}
		cfg.Actions = append(cfg.Actions, sim.Action{At: e.At, Do: do, Node: i, From: -1, To: -1})
	}
	return cfg
}

// Hops renders the messages sent, in order, as "TYPE(payload) from->to" with ids and
// the payload slots spec declares for the type; types in skip (such as ACK) are left out.
func Hops(evs []sim.Event, spec *sim.Spec, ids []int, skip ...string) []string {
	var out []string
	for _, e := range evs {
		if e.Type != sim.EvSend || slices.Contains(skip, e.Msg.Type) {
			continue
		}
		out = append(out, fmt.Sprintf("%s(%s) %d->%d", e.Msg.Type, payload(spec, &e.Msg), ids[e.Msg.From], ids[e.Msg.To]))
	}
	return out
}

func payload(spec *sim.Spec, m *sim.Message) string {
	var parts []string
	if mt := spec.MessageType(m.Type); mt != nil {
		if mt.Arg != "" {
			parts = append(parts, fmt.Sprint(m.Arg))
		}
		if mt.Vec != "" {
			parts = append(parts, fmt.Sprint(m.Vec))
		}
	}
	return strings.Join(parts, " ")
}

// FinalLeaders returns, per node index, the last leader recorded since the node last
// came up (-1: none), and whether the node is alive at the end.
func FinalLeaders(evs []sim.Event, n int) (leader []int, alive []bool) {
	leader, alive = make([]int, n), make([]bool, n)
	for i := range leader {
		leader[i], alive[i] = -1, true
	}
	for _, e := range evs {
		switch e.Type {
		case sim.EvLeader:
			leader[e.Node] = e.Leader
		case sim.EvCrash:
			alive[e.Node], leader[e.Node] = false, -1
		case sim.EvRecover:
			alive[e.Node] = true
		}
	}
	return leader, alive
}

// Disagreement describes the first alive node whose final leader is not want ("" if
// every alive node follows want).
func Disagreement(evs []sim.Event, ids []int, want int) string {
	leader, alive := FinalLeaders(evs, len(ids))
	for i := range leader {
		if alive[i] && leader[i] != want {
			return fmt.Sprintf("P%d ends with leader %d, want %d", ids[i], leader[i], want)
		}
	}
	return ""
}

// Timers counts the firings of the named timer.
func Timers(evs []sim.Event, name string) int {
	c := 0
	for _, e := range evs {
		if e.Type == sim.EvTimer && e.Name == name {
			c++
		}
	}
	return c
}

// Rand is what the helpers draw from: a *rand.Rand of math/rand/v2, which this package
// cannot import (algorithms/ stays free of randomness outside tests).
type Rand interface {
	IntN(n int) int
	Perm(n int) []int
}

// RandomRing returns n distinct ids in a random ring order.
func RandomRing(r Rand, n int) []int {
	return r.Perm(10 * n)[:n]
}

// PromiseActions draws a workload inside what the ring elections promise: crashes
// happen before any election and nobody fails during one. Elections start anywhere
// at any time, several at once. Some crashed processes come back once the elections
// have settled, one at a time (a recovery starts an election); recovering in the middle
// of an election is not covered: the announcement may have passed the process while it
// was down. A last election by a live process, once everything has settled, makes sure
// the crashes are noticed. up says who is alive at the end. A round takes well under
// 1000 time units for N <= 12 and delays <= 5: three trips round the ring, each
// skipping at most 11 crashed processes at a time-out of at most 11.
func PromiseActions(r Rand, n int) (acts []sim.Action, up []bool) {
	up = make([]bool, n)
	for i := range up {
		up[i] = true
	}
	settled := 1000
	for _, i := range r.Perm(n)[:r.IntN(n)] { // at most n-1 crash
		acts = append(acts, sim.Action{At: 0, Do: sim.ActCrash, Node: i})
		if r.IntN(3) == 0 {
			acts = append(acts, sim.Action{At: settled, Do: sim.ActRecover, Node: i})
			settled += 1000
		} else {
			up[i] = false
		}
	}
	for k := 1 + r.IntN(5); k > 0; k-- {
		acts = append(acts, sim.Action{At: 1 + r.IntN(100), Do: sim.ActElect, Node: r.IntN(n)})
	}
	acts = append(acts, sim.Action{At: settled, Do: sim.ActElect, Node: slices.Index(up, true)})
	return acts, up
}

// HighestUp is the highest id among the processes up.
func HighestUp(ids []int, up []bool) int {
	h := -1
	for i := range ids {
		if up[i] {
			h = max(h, ids[i])
		}
	}
	return h
}

// Run runs cfg to the end and returns the run (for Quiescent and the nodes' final
// states) and its events.
func Run(t testing.TB, cfg sim.Config) (*sim.Sim, []sim.Event) {
	t.Helper()
	return simtest.RunSim(t, cfg)
}

// RuleParams adds "restart": false and "check": false to a params object that does not
// set them: a test of one rule leaves the restart timer and the check's bookkeeping out,
// and the rules' own tests (CR-10, DT-2 ...) set them.
func RuleParams(t testing.TB, params string) string {
	t.Helper()
	m := map[string]json.RawMessage{}
	if p := strings.TrimSpace(params); p != "" && p != "null" {
		if err := json.Unmarshal([]byte(p), &m); err != nil {
			return params // let the decoder report it
		}
	}
	for _, k := range []string{"restart", "check"} {
		if _, ok := m[k]; !ok {
			m[k] = json.RawMessage("false")
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// HighestCrashedAnyStarter is the lecture's case for every ring election: the highest
// id (the leader) has crashed and any one live process starts the election. For each
// seed 1..seeds, on the ring ring(seed), FIFO and not, and every starter, the run must
// end quiet with no violation and every live process following the highest live id.
func HighestCrashedAnyStarter(t *testing.T, spec *sim.Spec, params any, seeds uint64, ring func(seed uint64) []int) {
	t.Helper()
	for _, fifo := range []bool{true, false} {
		for seed := uint64(1); seed <= seeds; seed++ {
			ids := ring(seed)
			h := slices.Index(ids, slices.Max(ids))
			up := make([]bool, len(ids))
			for i := range up {
				up[i] = i != h
			}
			for s := range ids {
				if s == h {
					continue
				}
				cfg := sim.Config{Spec: spec, IDs: ids, Seed: seed, Params: params, Until: spec.Defaults.Until,
					Network: sim.Network{DelayMin: 1, DelayMax: 3, FIFO: fifo},
					Actions: []sim.Action{
						{At: 0, Do: sim.ActCrash, Node: h, From: -1, To: -1},
						{At: 1, Do: sim.ActElect, Node: s, From: -1, To: -1},
					}}
				sm, evs := Run(t, cfg)
				where := fmt.Sprintf("fifo %t, seed %d, ring %v, P%d starts", fifo, seed, ids, ids[s])
				if !sm.Quiescent() {
					t.Fatalf("%s: still busy at the end", where)
				}
				for _, e := range evs {
					if e.Type == sim.EvViolation {
						t.Fatalf("%s: %s: %s", where, e.Property, e.Detail)
					}
				}
				if d := Disagreement(evs, ids, HighestUp(ids, up)); d != "" {
					t.Fatalf("%s: %s", where, d)
				}
			}
		}
	}
}

// OneMoreCrashDuringTheElection is 003's safety ("the elected process is the largest
// non-crashed one") under one more crash: the highest id has crashed, any one live
// process starts the election at time 1, and one more live process (the starter, the
// would-be winner, anyone) crashes at any time from 1 until the run without it settles.
// Every run must end quiet, with every live process following the highest live id. It
// returns how many runs it made and how many failed, with the first failure.
func OneMoreCrashDuringTheElection(t *testing.T, spec *sim.Spec, params any, n int, seeds uint64, fifo bool) (runs, failed int, first string) {
	t.Helper()
	ids := simtest.IDs(n)
	h := n - 1
	for seed := uint64(1); seed <= seeds; seed++ {
		for s := range h {
			base := []sim.Action{
				{At: 0, Do: sim.ActCrash, Node: h, From: -1, To: -1},
				{At: 1, Do: sim.ActElect, Node: s, From: -1, To: -1},
			}
			cfg := sim.Config{Spec: spec, IDs: ids, Seed: seed, Params: params, Until: spec.Defaults.Until,
				Network: sim.Network{DelayMin: 1, DelayMax: 3, FIFO: fifo}, Actions: base}
			_, evs := Run(t, cfg)
			end := 0
			for _, e := range evs {
				if e.Type == sim.EvLeader {
					end = e.T
				}
			}
			for c := range h {
				for at := 1; at <= end; at++ {
					cfg.Actions = append(slices.Clone(base), sim.Action{At: at, Do: sim.ActCrash, Node: c, From: -1, To: -1})
					sm, evs := Run(t, cfg)
					runs++
					up := make([]bool, n)
					for i := range up {
						up[i] = i != h && i != c
					}
					where := fmt.Sprintf("seed %d, P%d starts, P%d crashes at %d", seed, ids[s], ids[c], at)
					bad := ""
					if !sm.Quiescent() {
						bad = "still busy at the end"
					} else if v := simtest.Violations(evs); len(v) > 0 {
						bad = fmt.Sprint(v)
					} else {
						bad = Disagreement(evs, ids, HighestUp(ids, up))
					}
					if bad != "" {
						failed++
						if first == "" {
							first = where + ": " + bad
						}
					}
				}
			}
		}
	}
	return runs, failed, first
}
