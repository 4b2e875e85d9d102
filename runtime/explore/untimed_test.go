package explore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
)

// The untimed answer to a timed question (untimed.go) is kept only when it proves
// every property; these tests show it is not kept otherwise, and that the check of the
// waiting components rules out only the cycles time forbids.

// untimedSearch runs the search without time that answers a timed question, to its
// end, as Explore does first: with the partial-order reductions that apply (reduced),
// or over the whole graph.
func untimedSearch(t *testing.T, cfg sim.Config, reduced bool) (*search, outcome) {
	t.Helper()
	x, err := newSearch(cfg, false, &Options{MaxStates: 1 << 21, MaxMemory: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	x.untimed = true
	x.por = reduced && x.porApplies()
	x.spor = reduced && x.sporApplies()
	out, err := x.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !x.timeless() {
		t.Fatal("no timer was set: the search answered no timed question")
	}
	return x, out
}

func configOf(t *testing.T, file string) sim.Config {
	t.Helper()
	cfg, err := load(t, file).Config()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Bakery without time has cycles in which a process waits for ever: the plain check
// finds one (P2 re-reading P0 on every poll while the answer P0 waits for stays in
// flight). Time forbids every one of them, and the check of the waiting
// components says so.
func TestUntimedWaitsRuledOutByTime(t *testing.T) {
	for _, file := range []string{"bakery-3-two.json", "bakery-3-two-fifo.json"} {
		t.Run(file, func(t *testing.T) {
			x, out := untimedSearch(t, configOf(t, file), false)
			if out.found != nil || out.bound != "" {
				t.Fatalf("untimed search: %+v", out)
			}
			plain, _, err := x.liveness(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if plain.found == nil || plain.found.property != PropEntry {
				t.Fatalf("the plain check found %+v; want a process waiting for ever", plain.found)
			}
			fair, err := x.fairWaits(context.Background())
			if err != nil || fair.bound != "" {
				t.Fatalf("waiting components: %v %+v; want every one ruled out by time", err, fair)
			}
		})
	}
}

// poller is a made-up algorithm that never enters: P0, asked, pings P1 every poll and
// P1 answers. With time it waits for ever as surely as without, so no component may be
// ruled out. With guard, P0 also keeps a second timer armed, set again on every answer
// long before it is due, and enters the CS if it ever fires: in every state where P0
// waits the guard is armed and never fires (firing ends the wait), so the cycle ends it
// only by setting it again, which the check must count. P1 keeps no state: a PING
// commutes with anything else it may do (sim.Canon.Commutes), so with the guard armed
// beside it the reduced search takes it alone.
type poller struct {
	self  int
	guard bool
}

func pollerSpec(guard bool) *sim.Spec {
	return &sim.Spec{
		Slug: "poller", Family: sim.Mutex,
		Messages: []sim.MessageType{{Name: "PING"}, {Name: "PONG"}},
		New:      func(self int, _ *sim.Setup) sim.Node { return poller{self: self, guard: guard} },
		Canon: &sim.Canon{Asynchronous: true, Commutes: func(_ sim.Node, m *sim.Message, _ sim.Quiet) bool {
			return m.Type == "PING"
		}},
	}
}

func (p poller) Step(ctx *sim.Context, in *sim.Input) {
	switch {
	case in.Kind == sim.Request, in.Kind == sim.Deliver && in.Msg.Type == "PONG":
		ctx.SetTimer("poll", 2)
		if p.guard {
			ctx.SetTimer("guard", 50)
		}
	case in.Kind == sim.Timer && in.Timer == "guard":
		ctx.Enter()
	case in.Kind == sim.Timer && in.Timer == "poll":
		ctx.Send(1, sim.Message{Type: "PING"})
	case in.Kind == sim.Deliver && in.Msg.Type == "PING":
		ctx.Send(in.Msg.From, sim.Message{Type: "PONG"})
	}
}

func (p poller) Clone() sim.Node           { return p }
func (p poller) Encode(w *sim.StateWriter) {}

// The livelock stays in the reduced graph too: a cycle that time allows is kept
// whether the search takes the commuting PING alone or not.
func TestUntimedKeepsALivelock(t *testing.T) {
	for _, guard := range []bool{false, true} {
		for _, reduced := range []bool{false, true} {
			cfg := sim.Config{Spec: pollerSpec(guard), IDs: []int{0, 1}, CS: 1,
				Network: sim.Network{DelayMin: 1, DelayMax: 2},
				Actions: []sim.Action{{At: 0, Do: sim.ActRequest, Node: 0}}}
			x, out := untimedSearch(t, cfg, reduced)
			if out.found != nil || out.bound != "" {
				t.Fatalf("guard %v, reduced %v: untimed search: %+v", guard, reduced, out)
			}
			if reduced && guard && x.reduced == 0 {
				t.Fatal("the reduced search took no delivery alone: the test shows nothing")
			}
			if _, err := x.fairWaits(context.Background()); !errors.Is(err, errUntimedInconclusive) {
				t.Errorf("guard %v, reduced %v: waiting components: %v; want the cycle kept (time allows it)", guard, reduced, err)
			}
		}
	}
}

// Bakery's waiting components are all ruled out by time in the reduced graph as in
// the whole one: the untimed answer is the same with the reductions as without (a
// broken declaration or a reduction that hid a fair cycle would show here), and the
// reduced graph is smaller.
func TestUntimedReducedAgreesWithWhole(t *testing.T) {
	if testing.Short() {
		t.Skip("short: the whole untimed graphs take seconds")
	}
	for _, file := range []string{"bakery-3.json", "bakery-3-two.json", "bakery-3-two-fifo.json"} {
		t.Run(file, func(t *testing.T) {
			cfg := configOf(t, file)
			var states [2]int
			var verdicts [2]string
			for k, reduced := range []bool{false, true} {
				x, out := untimedSearch(t, cfg, reduced)
				states[k] = x.st.count
				switch {
				case out.found != nil:
					verdicts[k] = "violation " + out.found.property
				case out.bound != "":
					t.Fatalf("reduced %v: bounded: %s", reduced, out.bound)
				default:
					_, err := x.fairWaits(context.Background())
					verdicts[k] = fmt.Sprint("waits: ", err)
				}
			}
			if verdicts[0] != verdicts[1] {
				t.Fatalf("whole graph: %s; reduced: %s", verdicts[0], verdicts[1])
			}
			if states[1] > states[0] {
				t.Errorf("reduced %d states, whole %d", states[1], states[0])
			}
			t.Logf("%s: whole %d states, reduced %d", verdicts[0], states[0], states[1])
		})
	}
}

// guarded is a made-up algorithm whose mutual exclusion rests on time: P1 enters at
// once and stays one unit; P0 enters when its timer fires, five units later. Without
// time the timer may fire first, so the untimed search breaks mutual exclusion; the
// answer must then come from the timed search, where it holds.
type guarded struct{ self int }

func (g guarded) Step(ctx *sim.Context, in *sim.Input) {
	switch {
	case in.Kind == sim.Request && g.self == 1:
		ctx.Enter()
	case in.Kind == sim.Request:
		ctx.SetTimer("wait", 5)
	case in.Kind == sim.Timer:
		ctx.Enter()
	case in.Kind == sim.Release:
		ctx.Exit()
	}
}

func (g guarded) Clone() sim.Node           { return g }
func (g guarded) Encode(w *sim.StateWriter) {}

func TestUntimedViolationFallsBackToTime(t *testing.T) {
	spec := &sim.Spec{Slug: "guarded", Family: sim.Mutex,
		New:   func(self int, _ *sim.Setup) sim.Node { return guarded{self} },
		Canon: &sim.Canon{Asynchronous: true}}
	cfg := sim.Config{Spec: spec, IDs: []int{0, 1}, CS: 1,
		Network: sim.Network{DelayMin: 1, DelayMax: 2},
		Actions: []sim.Action{{At: 0, Do: sim.ActRequest, Node: 0}, {At: 0, Do: sim.ActRequest, Node: 1}}}
	_, out := untimedSearch(t, cfg, true)
	if out.found == nil || out.found.property != sim.PropMutex {
		t.Fatalf("untimed search: %+v; want mutual exclusion broken", out.found)
	}
	res, err := exploreConfig(context.Background(), nil, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Result != ResultOK || !res.Timed || slices.Contains(res.Reduction, ReductionUntimed) {
		t.Errorf("%s, timed %v, reductions %v; want ok from the timed search", res.Result, res.Timed, res.Reduction)
	}
}
