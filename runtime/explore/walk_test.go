package explore

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/algorithms/starlarkalg"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/scenarios"
)

// The explorer carries out its transitions with the kernel's transition function
// (sim.Take) on a state of its own, and steps each distinct node state once, keyed by
// the node's Encode. TestWalksMatchTheKernel walks random paths of the search for every
// algorithm, with every kind of transition, while a kernel run takes the same steps on
// real node values, and checks that both agree after each one.

// walkScenarios returns small scenarios with faults for every algorithm.
func walkScenarios(t *testing.T) []*scenarios.Scenario {
	t.Helper()
	var out []*scenarios.Scenario
	for _, spec := range algorithms.All() {
		n := 3
		if spec.Slug == "bully" || spec.Slug == "raymond" {
			n = 4
		}
		var evs []string
		f := spec.Defaults.FirstID // the scenario gives no ids: they are the algorithm's default
		if spec.Family == sim.Mutex {
			for i := 0; i < n; i++ {
				evs = append(evs, fmt.Sprintf(`{"at":0,"do":"request","node":%d}`, f+i),
					fmt.Sprintf(`{"at":%d,"do":"request","node":%d}`, 3+i, f+i))
			}
		} else {
			evs = append(evs, fmt.Sprintf(`{"at":0,"do":"elect","node":%d}`, f), fmt.Sprintf(`{"at":4,"do":"elect","node":%d}`, f+1))
		}
		evs = append(evs, fmt.Sprintf(`{"at":6,"do":"crash","node":%d}`, f+n-1), fmt.Sprintf(`{"at":9,"do":"recover","node":%d}`, f+n-1))
		for _, fifo := range []bool{false, true} {
			doc := fmt.Sprintf(`{"version":2,"algorithm":%q,"nodes":%d,"seed":1,"network":{"delay":[1,2],"fifo":%v},"events":[%s]}`,
				spec.Slug, n, fifo, join(evs))
			sc, err := scenarios.Parse([]byte(doc))
			if err != nil {
				t.Fatalf("%s: %v", spec.Slug, err)
			}
			out = append(out, sc)
		}
	}
	for _, name := range []string{"maekawa-deadlock-free", "bully-heartbeat-crash-then-election", "token-ring-regeneration", "ring-list-p1-p4-crashed"} {
		sc, ok := scenarios.Lookup(name)
		if !ok {
			t.Fatalf("no curated scenario %s", name)
		}
		c := *sc
		if c.Nodes > 4 {
			continue // keep the walks small; the generic ones above cover the algorithm
		}
		out = append(out, &c)
	}
	return out
}

func join(parts []string) string {
	s := ""
	for i, p := range parts {
		if i > 0 {
			s += ","
		}
		s += p
	}
	return s
}

// stepCase is a configuration whose random walks take every kind of transition the
// search has: deliveries, timers, ends of the CS, and each workload event (request,
// release, elect, crash, recover, partition, heal), plus, where it says so, losses and
// drop tokens; timed or not.
type stepCase struct {
	name  string
	cfg   sim.Config
	timed bool // time on even without timers
}

// stepCases returns, for every algorithm, its walk scenarios (requests or elections,
// a crash and a recovery) and variants with each fault and with time; with
// starlark, the same for the algorithm's Starlark template instead of the Go one.
func stepCases(t *testing.T, starlark bool) []stepCase {
	t.Helper()
	var out []stepCase
	for _, sc := range walkScenarios(t) {
		cfg, err := sc.Config()
		if err != nil {
			t.Fatal(err)
		}
		if starlark {
			src, ok := starlarkalg.Template(sc.Algorithm)
			if !ok {
				continue
			}
			spec, err := starlarkalg.Load(sc.Algorithm, src)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Spec, cfg.Params = spec, nil
			if spec.ParseParams != nil {
				if cfg.Params, err = spec.ParseParams(sc.Params, cfg.IDs); err != nil {
					t.Fatal(err)
				}
			}
		}
		name := fmt.Sprintf("%s/n=%d/fifo=%v", sc.Algorithm, len(cfg.IDs), cfg.Network.FIFO)
		if sc.Title != "" {
			name = sc.Algorithm + "/" + sc.Title
		}
		out = append(out, stepCase{name: name, cfg: cfg})
		if cfg.Network.FIFO || sc.Title != "" {
			continue // the faults once per algorithm
		}
		n := len(cfg.IDs)
		with := func(what string, change func(c *sim.Config)) {
			c := cfg
			c.Actions = append([]sim.Action(nil), cfg.Actions...)
			change(&c)
			out = append(out, stepCase{name: name + "/" + what, cfg: c})
		}
		with("loss", func(c *sim.Config) { c.Network.Loss = 0.2 })
		with("drop", func(c *sim.Config) {
			c.Actions = append(c.Actions, sim.Action{At: 1, Do: sim.ActDrop, From: -1, To: 0})
		})
		with("partition", func(c *sim.Config) {
			rest := make([]int, 0, n-1)
			for i := 1; i < n; i++ {
				rest = append(rest, i)
			}
			c.Actions = append(c.Actions, sim.Action{At: 2, Do: sim.ActPartition, Groups: [][]int{{0}, rest}, From: -1, To: -1},
				sim.Action{At: 5, Do: sim.ActHeal, From: -1, To: -1})
		})
		if cfg.Spec.Family == sim.Mutex {
			with("release-events", func(c *sim.Config) {
				c.CS = 0
				for i := range n {
					c.Actions = append(c.Actions, sim.Action{At: 2, Do: sim.ActRelease, Node: i, From: -1, To: -1})
				}
			})
		}
		out = append(out, stepCase{name: name + "/timed", cfg: cfg, timed: true})
	}
	return out
}

// newWalkSearch is the search a walk of c takes: with time when c says so or the
// algorithm sets timers (as a search restarts timed), with canonical forms or not.
func newWalkSearch(t *testing.T, c stepCase, full bool) *search {
	t.Helper()
	timed := c.timed
	for {
		x, err := newSearch(c.cfg, timed, &Options{NoReduce: full})
		if err != nil {
			t.Fatal(err)
		}
		x.initial(newState(x.m), nil)
		if x.it.sawTimer.Load() && !timed {
			timed = true
			continue
		}
		return x
	}
}

// TestWalksMatchTheKernel: the explorer's successors are the kernel's. On random walks
// of every algorithm, Go and Starlark, with each fault and with time (stepCases), each
// transition of the search is also carried out on a kernel run in hold mode, as a
// counterexample is (a delivery or a loss picks the held message with the same
// content, a timer is a fire event, the end of a CS a release, a workload event the
// action itself), and after each one both must agree on every process (up, in the CS,
// waiting, leader, node state, armed timers, side of the partition), on the messages
// in flight, and on a broken mutual exclusion. The kernel's nodes are real values,
// never replaced by the explorer's interned ones: so this also checks that Encode
// writes all that matters (the explorer steps each distinct encoding once).
func TestWalksMatchTheKernel(t *testing.T) {
	for _, starlark := range []bool{false, true} {
		seeds := uint64(60)
		if starlark {
			seeds = 4
		}
		for _, c := range stepCases(t, starlark) {
			t.Run(fmt.Sprintf("starlark=%v/%s", starlark, c.name), func(t *testing.T) {
				x := newWalkSearch(t, c, true)
				for seed := uint64(1); seed <= seeds; seed++ {
					walkWithKernel(t, x, seed, 200)
				}
			})
		}
	}
}

// walkWithKernel takes up to steps random transitions of x from its initial state, on
// the search and on a kernel run alike, comparing them after each.
func walkWithKernel(t *testing.T, x *search, seed uint64, steps int) {
	t.Helper()
	var mutex []string // the kernel's mutual exclusion violations during the step
	k, err := sim.New(x.kernelConfig(), func(ev *sim.Event) {
		if ev.Type == sim.EvViolation && ev.Property == sim.PropMutex {
			mutex = append(mutex, ev.Detail)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	s := newState(x.m)
	var start []pstep
	x.initial(s, &start)
	for j := range start {
		kernelStep(t, x, k, &start[j])
	}
	if d := kernelDiff(x, s, k); d != "" {
		t.Fatalf("seed %d, at the start: %s", seed, d)
	}
	rng := rand.New(rand.NewPCG(seed, 11))
	var trs []trans
	for step := 1; step <= steps; step++ {
		trs = x.enumerate(s, trs)
		if len(trs) == 0 {
			return
		}
		tr := trs[rng.IntN(len(trs))]
		p := x.describe(s, tr)
		f := x.apply(s, tr)
		mutex = mutex[:0]
		kernelStep(t, x, k, &p)
		if d := kernelDiff(x, s, k); d != "" {
			t.Fatalf("seed %d, step %d (%s): %s", seed, step, p.words, d)
		}
		var want []string
		if f != nil && f.property == sim.PropMutex {
			want = []string{f.detail}
		}
		if fmt.Sprint(want) != fmt.Sprint(mutex) {
			t.Fatalf("seed %d, step %d (%s): the explorer finds %v, the kernel %v", seed, step, p.words, want, mutex)
		}
		if f != nil {
			return
		}
	}
}

// kernelStep carries out path step p on kernel run k, as kernelEvents does.
func kernelStep(t *testing.T, x *search, k *sim.Sim, p *pstep) {
	t.Helper()
	var a sim.Action
	switch p.kind {
	case tTick:
		return
	case tDeliver, tLose, tDrop:
		held, ok := x.held(k, p)
		if !ok {
			t.Fatalf("%s: the kernel holds no such message", p.words)
		}
		a = sim.Action{Do: sim.ActDeliver, Msg: held.ID, From: -1, To: -1}
		if p.kind != tDeliver {
			a.Do = sim.ActDrop
		}
	case tTimer:
		a = sim.Action{Do: sim.ActFire, Node: p.node, Timer: p.timer, From: -1, To: -1}
	case tRelease:
		a = sim.Action{Do: sim.ActRelease, Node: p.node, From: -1, To: -1}
	case tEvent:
		if p.act.Do == sim.ActDrop {
			return // a token of the search's: the kernel's drops are the losses it allows
		}
		a = p.act
		a.At = 0
	}
	err := k.Apply(a)
	var refused *sim.ActionError
	switch {
	case p.kind == tEvent && p.skip:
		if !errors.As(err, &refused) {
			t.Fatalf("%s: the search skips it, the kernel answers %v", p.words, err)
		}
	case err != nil:
		t.Fatalf("%s: %v", p.words, err)
	}
}

// kernelDiff says how state s of the search and kernel run k differ ("" if they do
// not).
func kernelDiff(x *search, s *state, k *sim.Sim) string {
	for i := range s.nodes {
		nd := &s.nodes[i]
		name := x.m.name(i)
		if nd.alive != k.Alive(i) {
			return fmt.Sprintf("%s up: search %v, kernel %v", name, nd.alive, k.Alive(i))
		}
		if !nd.alive {
			continue
		}
		if nd.inCS != k.InCS(i) || nd.pending != k.Waiting(i) || int(nd.leader) != k.Leader(i) || int(s.group(i)) != k.Group(i) {
			return fmt.Sprintf("%s in the CS, waiting, leader, group: search %v %v %d %d, kernel %v %v %d %d", name,
				nd.inCS, nd.pending, nd.leader, s.group(i), k.InCS(i), k.Waiting(i), k.Leader(i), k.Group(i))
		}
		if got, want := x.it.nodes[i].v.at(nd.id).enc, string(sim.EncodeState(k.Node(i))); got != want {
			return fmt.Sprintf("%s is\n  %s\nin the search, but the kernel's is\n  %s", name, got, want)
		}
		var timers []string
		for _, tm := range s.timers {
			if int(tm.node) == i {
				timers = append(timers, x.it.timerName(uint32(tm.name)))
			}
		}
		slices.Sort(timers)
		if !slices.Equal(timers, k.Armed(i)) {
			return fmt.Sprintf("%s's timers: search %v, kernel %v", name, timers, k.Armed(i))
		}
	}
	var got, want []string
	for _, f := range s.msgs {
		m := x.it.message(f.msg).m
		got = append(got, x.msgWords(&m))
	}
	for _, f := range k.InFlight() {
		want = append(want, x.msgWords(&f.Msg))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		return fmt.Sprintf("in flight: search %v, kernel %v", got, want)
	}
	return ""
}
