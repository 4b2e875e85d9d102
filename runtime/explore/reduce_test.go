package explore

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/scenarios"
)

// The reductions must not change any answer: for every configuration of testdata and
// a generated set of small ones (every algorithm, 2 and 3 processes, FIFO or not, with
// and without a crash), the reduced search and the full one agree on the verdict, the
// property, a counterexample's length (it is exactly as short) and the entry bound,
// the reduced search never stores more states, and its counterexample replays in the
// kernel.

// soundnessBound keeps every search of the harness to a fraction of a second; a
// configuration where either search hits it proves nothing and is skipped (and
// counted, so that the harness cannot silently shrink to nothing).
const soundnessBound = 150_000

type soundCase struct {
	name string
	sc   *scenarios.Scenario
}

func soundnessCases(t *testing.T) []soundCase {
	t.Helper()
	var out []soundCase
	files, err := filepath.Glob("testdata/*.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		out = append(out, soundCase{name: strings.TrimSuffix(name, ".json"), sc: load(t, name)})
	}
	for _, spec := range algorithms.All() {
		for _, n := range []int{2, 3} {
			for _, fifo := range []bool{false, true} {
				for _, crash := range []bool{false, true} {
					events := ""
					if crash {
						// The last process may crash at any moment after the start.
						events = fmt.Sprintf(`,"events":[{"at":1,"do":"crash","node":%d}]`, spec.Defaults.FirstID+n-1)
					}
					doc := fmt.Sprintf(`{"version":2,"algorithm":%q,"nodes":%d,"network":{"delay":[1,2],"fifo":%v}%s}`, spec.Slug, n, fifo, events)
					sc, err := scenarios.Parse([]byte(doc))
					if err != nil {
						t.Fatalf("%s: %v", doc, err)
					}
					if sc, _, err = DefaultWorkload(sc); err != nil {
						t.Fatal(err)
					}
					out = append(out, soundCase{name: fmt.Sprintf("%s/n=%d/fifo=%v/crash=%v", spec.Slug, n, fifo, crash), sc: sc})
				}
			}
		}
	}
	return out
}

func TestReductionIsSound(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	compared, reduced := 0, 0
	for _, c := range soundnessCases(t) {
		t.Run(c.name, func(t *testing.T) {
			full := explore(t, c.sc, Options{NoReduce: true, MaxStates: soundnessBound})
			red := explore(t, c.sc, Options{MaxStates: soundnessBound})
			if full.Result == ResultBounded || red.Result == ResultBounded {
				if red.Result == ResultBounded && full.Result != ResultBounded {
					t.Errorf("the reduced search is bounded (%d states) where the full one is not (%d)", red.States, full.States)
				}
				t.Skipf("bounded: full %d states, reduced %d", full.States, red.States)
			}
			compared++
			if len(red.Reduction) > 0 {
				reduced++
			}
			if red.Result != full.Result || red.Property != full.Property {
				t.Fatalf("reduced: %s %s (%s); full: %s %s (%s)", red.Result, red.Property, red.Message, full.Result, full.Property, full.Message)
			}
			// A violation's depth is its counterexample's length: the shortest distance
			// to a bad state, which merging equivalent states keeps. When every property
			// holds, depth is the longest shortest run, and a merged state is as deep as
			// the shallowest state it stands for: it may only shrink. The entry bound is
			// the longest run while a process waits: paths map both ways, so it stays.
			// Partial-order reduction keeps neither lengths: it drops runs, so the
			// deepest state may be found later, and the entry bound is not reported.
			// A timed question answered without time (untimed.go) has the untimed
			// graph's depth, and no entry bound; only an "ok" is answered so.
			por := slices.ContainsFunc(red.Reduction, func(r string) bool { return strings.HasPrefix(r, "partial-order") })
			untimed := slices.Contains(red.Reduction, ReductionUntimed)
			if untimed {
				if red.Result != ResultOK || red.Timed || !full.Timed {
					t.Errorf("answered without time: %s, timed %v (full timed %v)", red.Result, red.Timed, full.Timed)
				}
				por = true
			}
			if (red.Depth > full.Depth && !por) || (red.Result == ResultViolation && red.Depth != full.Depth) {
				t.Errorf("reduced depth %d, full %d", red.Depth, full.Depth)
			}
			if por && red.EntryBound != 0 {
				t.Errorf("an entry bound (%d) from a search with partial-order reduction or without time", red.EntryBound)
			} else if !por && red.EntryBound != full.EntryBound {
				t.Errorf("reduced entry bound %d, full %d", red.EntryBound, full.EntryBound)
			}
			if red.States > full.States {
				t.Errorf("reduced %d states, full %d", red.States, full.States)
			}
			if red.Result == ResultViolation {
				checkReplays(t, red, kernelProperty(red))
				if len(red.Counterexample.Path) != len(full.Counterexample.Path) {
					t.Errorf("reduced counterexample of %d steps, full %d", len(red.Counterexample.Path), len(full.Counterexample.Path))
				}
			}
			t.Logf("%s %s: full %d states, reduced %d (%v)", red.Result, red.Property, full.States, red.States, red.Reduction)
		})
	}
	t.Logf("%d configurations compared, %d of them reduced", compared, reduced)
	if compared < 60 || reduced < 8 {
		t.Errorf("only %d configurations compared (%d reduced): the harness has shrunk", compared, reduced)
	}
}

// kernelProperty is what the kernel reports for a counterexample: a lasso shows as a
// request pending too long.
func kernelProperty(res *Result) string {
	if res.Counterexample.Scenario.Monitors != nil && res.Property != sim.PropMutex && res.Property != sim.PropLeader {
		return sim.PropPending
	}
	return res.Property
}

// The reduced search's figures, pinned like the full ones (explore_test.go): a change
// means a reduction changed, and docs/explorer.md says what each one merges.
func TestReducedPinned(t *testing.T) {
	for _, c := range []struct {
		file      string
		property  string
		states    int64
		depth     int
		reduction []string
	}{
		{file: "ricart-agrawala-3.json", states: 35, depth: 18, reduction: []string{"canonical", "partial-order"}},
		{file: "ricart-agrawala-3-anytime.json", states: 2522, depth: 18, reduction: []string{"canonical", "partial-order"}},
		// FIFO channels: the partial-order reduction on them too (16 714 and 910 without).
		{file: "ricart-agrawala-4-fifo.json", states: 304, depth: 32, reduction: []string{"canonical", "partial-order"}},
		{file: "maekawa-deadlock-free-3-twice.json", states: 884, depth: 31, reduction: []string{"canonical", "partial-order"}},
		{file: "maekawa-7.json", property: sim.PropDeadlock, states: 77998, depth: 21, reduction: []string{"canonical"}},
		// Lamport's clocks capped at the horizon, its deliveries commuting there, and the
		// partial-order reduction on FIFO channels (47 212 states with none, 31 182 with
		// the last alone, 473 without the commuting deliveries).
		{file: "lamport-fifo-3.json", states: 22, depth: 24, reduction: []string{"canonical", "partial-order"}},
		// Requests with different timestamps, the horizon climbing (5 009 in full).
		{file: "lamport-fifo-2-thrice.json", states: 3686, depth: 30, reduction: []string{"canonical", "partial-order"}},
		// Without FIFO: the same shortest violation (1 526 states in full).
		{file: "lamport-non-fifo-3-anytime.json", property: sim.PropMutex, states: 1405, depth: 7, reduction: []string{"canonical"}},
		// The token variant: idle processes inert, the token's clocks capped at the
		// horizon (160, 6 753 and 1 091 816 states in full).
		{file: "ricart-agrawala-token-3.json", states: 60, depth: 12, reduction: []string{"canonical", "partial-order"}},
		{file: "ricart-agrawala-token-3-anytime.json", states: 1837, depth: 15, reduction: []string{"canonical", "partial-order"}},
		// Suzuki-Kasami: idle processes inert (98 and 13 054 states in full).
		{file: "suzuki-kasami-3.json", states: 70, depth: 12, reduction: []string{"canonical", "partial-order"}},
		{file: "suzuki-kasami-3-twice.json", states: 10142, depth: 27, reduction: []string{"canonical", "partial-order"}},
		// Bakery's timed questions, answered without time, its released processes inert
		// and the deliveries it declares commuting taken alone (full, with time: 26 892
		// and 9 354 states; without time and no partial-order reduction: 3 445 and 1 308).
		{file: "bakery-3-two.json", states: 217, depth: 28, reduction: []string{"canonical", ReductionUntimed, "partial-order"}},
		{file: "bakery-3-two-fifo.json", states: 49, depth: 31, reduction: []string{"canonical", ReductionUntimed, "partial-order"}},
	} {
		t.Run(strings.TrimSuffix(c.file, ".json"), func(t *testing.T) {
			res := explore(t, load(t, c.file), Options{})
			if res.Property != c.property || res.States != c.states || res.Depth != c.depth || !slices.Equal(res.Reduction, c.reduction) {
				t.Errorf("%s %q: %d states, depth %d, reduction %v; want %q %d %d %v",
					res.Result, res.Property, res.States, res.Depth, res.Reduction, c.property, c.states, c.depth, c.reduction)
			}
			if c.property != "" {
				checkReplays(t, res, c.property)
			}
		})
	}
}

// A wrong declaration is caught, not trusted: claiming every Ricart-Agrawala process
// inert (a waiting one is not: a reply changes it) stops the search with an error
// naming the algorithm.
func TestWrongInertDeclarationIsCaught(t *testing.T) {
	cfg, err := load(t, "ricart-agrawala-3.json").Config()
	if err != nil {
		t.Fatal(err)
	}
	spec := *cfg.Spec
	canon := *spec.Canon
	canon.Inert = func(sim.Node) bool { return true }
	spec.Canon = &canon
	cfg.Spec = &spec
	x, err := newSearch(cfg, false, &Options{MaxStates: 1 << 20, MaxMemory: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	if !x.por {
		t.Fatal("no partial-order reduction")
	}
	_, err = x.run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "ricart-agrawala") || !strings.Contains(err.Error(), "declared inert") {
		t.Fatalf("error %v, want one saying the inert declaration is wrong", err)
	}
}

// A wrong Commutes declaration stops the search with an error naming the delivery
// and the step it does not commute with: lastWriter's P2 keeps the sender of the last
// VALUE it got, so two VALUEs give different states in the two orders, though the
// algorithm declares that every delivery commutes.
func TestWrongCommutesDeclarationIsCaught(t *testing.T) {
	cfg := sim.Config{Spec: lastWriterSpec(), IDs: []int{0, 1, 2}, CS: 1,
		Network: sim.Network{DelayMin: 1, DelayMax: 1},
		Actions: []sim.Action{{At: 0, Do: sim.ActRequest, Node: 0}, {At: 0, Do: sim.ActRequest, Node: 1}}}
	x, err := newSearch(cfg, false, &Options{MaxStates: 1 << 20, MaxMemory: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	if !x.por {
		t.Fatal("no partial-order reduction")
	}
	_, err = x.run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "declared to commute") || !strings.Contains(err.Error(), "deliver VALUE P") {
		t.Fatalf("error %v, want one saying a VALUE does not commute with the other", err)
	}
}

// lastWriter: P0 and P1, asked, each send P2 a VALUE; P2 keeps the last sender.
type lastWriter struct{ last int }

func lastWriterSpec() *sim.Spec {
	return &sim.Spec{
		Slug: "last-writer", Family: sim.Mutex,
		Messages: []sim.MessageType{{Name: "VALUE"}},
		New:      func(int, *sim.Setup) sim.Node { return &lastWriter{last: -1} },
		Canon:    &sim.Canon{Commutes: func(sim.Node, *sim.Message, sim.Quiet) bool { return true }},
	}
}

func (n *lastWriter) Step(ctx *sim.Context, in *sim.Input) {
	switch in.Kind {
	case sim.Request:
		ctx.Send(2, sim.Message{Type: "VALUE"})
	case sim.Deliver:
		n.last = in.Msg.From
	}
}

func (n *lastWriter) Clone() sim.Node           { c := *n; return &c }
func (n *lastWriter) Encode(w *sim.StateWriter) { w.Int("last", n.last) }

// echo is a made-up algorithm that shows why a counterexample is searched again
// without partial-order reduction. P0 asks: it pings P1 and the echo server P2. P1
// enters the CS on the ping and pings P0 back, and P0 enters on that: mutual
// exclusion breaks in three steps. P2 only answers (inert), so the reduced search
// delivers to it first, alone, and finds the violation one step later.
type echo struct{ self int }

func echoSpec() *sim.Spec {
	return &sim.Spec{
		Slug: "echo", Family: sim.Mutex,
		Messages: []sim.MessageType{{Name: "PING"}, {Name: "PONG"}},
		New:      func(self int, _ *sim.Setup) sim.Node { return echo{self} },
		Canon: &sim.Canon{
			Node:  func(n sim.Node, _ bool) sim.Node { return n },
			Inert: func(n sim.Node) bool { return n.(echo).self == 2 },
		},
	}
}

func (echo) Step(ctx *sim.Context, in *sim.Input) {
	switch {
	case in.Kind == sim.Request:
		ctx.Send(1, sim.Message{Type: "PING"})
		ctx.Send(2, sim.Message{Type: "PING"})
	case in.Kind == sim.Deliver && in.Msg.Type == "PING" && ctx.Self() == 2:
		ctx.Send(in.Msg.From, sim.Message{Type: "PONG"})
	case in.Kind == sim.Deliver && in.Msg.Type == "PING":
		ctx.Enter()
		if ctx.Self() == 1 {
			ctx.Send(0, sim.Message{Type: "PING"})
		}
	}
}

func (echo) Clone() sim.Node           { return echo{} }
func (echo) Encode(w *sim.StateWriter) {}

func TestPartialOrderLosesTheShortestRun(t *testing.T) {
	cfg := sim.Config{Spec: echoSpec(), IDs: []int{0, 1, 2}, CS: 1,
		Network: sim.Network{DelayMin: 1, DelayMax: 1},
		Actions: []sim.Action{{At: 0, Do: sim.ActRequest, Node: 0}}}
	depth := func(noPOR bool) (int, int64) {
		x, err := newSearch(cfg, false, &Options{MaxStates: 1 << 20, MaxMemory: 1 << 30, noPOR: noPOR})
		if err != nil {
			t.Fatal(err)
		}
		out, err := x.run(context.Background())
		if err != nil || out.found == nil || out.found.property != sim.PropMutex {
			t.Fatalf("noPOR %v: %v %+v", noPOR, err, out)
		}
		path, err := x.replayPath(x.chain(out.last), out.via)
		if err != nil {
			t.Fatal(err)
		}
		return len(path), x.reduced
	}
	reduced, used := depth(false)
	shortest, _ := depth(true)
	if used == 0 || shortest != 3 || reduced != 4 {
		t.Errorf("with partial-order reduction (%d states by one step) %d steps, without %d; want 4 and 3", used, reduced, shortest)
	}
}

// The partial-order reduction on FIFO channels, state by state: at the start of
// Ricart-Agrawala with three processes on FIFO channels every process has a REQUEST
// at the head of each channel into it, and none of those deliveries lets anyone
// enter, so every process's closure is itself and the search takes P0's two
// deliveries alone. Once P0 has taken P1's (and deferred it: P0 asked first), its
// channel from P1 is empty and P1 may still send on it, so P1 joins P0's set: the two
// take their deliveries together (P1 from P0 and P2, P0 from P2); P1's and P2's,
// whose channels all hold a message, are sets of their own and come first (two
// steps each against three).
func TestFIFOReductionTakesAClosedSetOfProcesses(t *testing.T) {
	cfg, err := load(t, "ricart-agrawala-3.json").Config()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Network.FIFO = true
	cfg.Spec = noCanon(cfg.Spec) // the FIFO reduction alone
	x, err := newSearch(cfg, false, &Options{MaxStates: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if !x.spor || x.por {
		t.Fatalf("spor %v, por %v", x.spor, x.por)
	}
	s := newState(x.m)
	x.initial(s, nil)
	trs := x.enumerate(s, nil)
	if len(trs) != 6 {
		t.Fatalf("%d transitions at the start, want 6 deliveries", len(trs))
	}
	if !x.sporState(s) {
		t.Fatal("the start does not allow the reduction")
	}
	if got := x.sporSets(s, trs); !slices.Equal(got, []uint16{0b001, 0b010, 0b100}) {
		t.Fatalf("sets at the start %03b, want each process alone", got)
	}
	set, ok := x.sporSet(s, trs, 0b001)
	if !ok || len(set) != 2 {
		t.Fatalf("P0's set: %v %v", set, ok)
	}
	receivers := func(st *state, set []trans) []int {
		var to []int
		for _, tr := range set {
			if tr.kind != tDeliver {
				t.Fatalf("the set holds %+v", tr)
			}
			to = append(to, x.it.message(st.msgs[tr.a].msg).m.To)
		}
		slices.Sort(to)
		return to
	}
	if got := receivers(s, set); !slices.Equal(got, []int{0, 0}) {
		t.Fatalf("P0's set delivers to %v", got)
	}
	next := newState(x.m)
	next.copyFrom(s)
	fromP1 := slices.IndexFunc(set, func(tr trans) bool { return x.it.message(s.msgs[tr.a].msg).m.From == 1 })
	x.apply(next, set[fromP1])
	trs = x.enumerate(next, nil)
	if got := x.sporSets(next, trs); !slices.Equal(got, []uint16{0b010, 0b100, 0b011}) {
		t.Fatalf("sets after P0 took P1's REQUEST %03b, want P1 alone, P2 alone, then P0 with P1", got)
	}
	joint, ok := x.sporSet(next, trs, 0b011)
	if !ok {
		t.Fatal("P0 and P1 together are not taken")
	}
	if got := receivers(next, joint); !slices.Equal(got, []int{0, 1, 1}) {
		t.Fatalf("P0 and P1's set delivers to %v, want P0 once (P2's REQUEST) and P1 twice", got)
	}
}

// noCanon is spec without its declarations.
func noCanon(spec *sim.Spec) *sim.Spec {
	c := *spec
	c.Canon = nil
	return &c
}
