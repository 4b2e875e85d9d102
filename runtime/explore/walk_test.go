package explore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/scenarios"
)

// The explorer steps each distinct node state once and memoises the result, keyed by
// the node's Encode. That is only right if Encode writes everything that matters: two
// node values that encode alike must behave alike. TestEncodeIsComplete walks random
// paths of the search for every algorithm while also stepping the real node values
// (never replaced by the interned representative) and checks that both agree on the
// next encoding and on every effect.

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

func TestEncodeIsComplete(t *testing.T) {
	for _, sc := range walkScenarios(t) {
		cfg, err := sc.Config()
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("%s/fifo=%v", sc.Algorithm, cfg.Network.FIFO)
		t.Run(name, func(t *testing.T) {
			for seed := uint64(1); seed <= 200; seed++ {
				walk(t, cfg, seed, 300)
			}
		})
	}
}

// walk takes up to steps random transitions of the search from the initial state.
func walk(t *testing.T, cfg sim.Config, seed uint64, steps int) {
	t.Helper()
	timed := false
	var x *search
	for {
		var err error
		x, err = newSearch(cfg, timed, &Options{NoReduce: true})
		if err != nil {
			t.Fatal(err)
		}
		s := newState(x.m)
		x.initial(s, nil)
		if x.it.sawTimer.Load() && !timed {
			timed = true
			continue
		}
		break
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	s := newState(x.m)
	// The real nodes: built and stepped independently of the interner.
	real := make([]sim.Node, x.m.n)
	for i := range real {
		real[i] = x.m.spec.New(i, &x.m.setup)
		ctx := sim.NewContext(i, x.m.ids)
		real[i].Step(ctx, &sim.Input{Kind: sim.Init})
	}
	x.initial(s, nil)
	// Events at time 0 ran inside initial; replay them on the real nodes.
	for _, k := range x.m.start {
		a := x.m.events[k].act
		realAct(t, x, real, &a)
	}
	check := func(step int, what string) {
		t.Helper()
		for i := range real {
			if !s.nodes[i].alive {
				continue
			}
			got := string(sim.EncodeState(real[i]))
			if want := x.it.nodes[i].v.at(s.nodes[i].id).enc; got != want {
				t.Fatalf("seed %d, step %d (%s): %s is\n  %s\nbut the explorer has\n  %s", seed, step, what, x.m.name(i), got, want)
			}
		}
	}
	check(0, "start")
	var trs []trans
	for step := 1; step <= steps; step++ {
		trs = x.enumerate(s, trs)
		if len(trs) == 0 {
			return
		}
		tr := trs[rng.IntN(len(trs))]
		p := x.describe(s, tr)
		i, in, ok := inputOf(x, s, tr)
		var want []sim.Effect
		if ok {
			if in.Kind == sim.Recover {
				real[i] = x.m.spec.New(i, &x.m.setup)
			}
			ctx := sim.NewContext(i, x.m.ids)
			up := make([]bool, len(real))
			for k := range up {
				up[k] = s.nodes[k].alive
			}
			ctx.SetUp(up) // the perfect failure detector sees the state's crashes
			real[i].Step(ctx, &in)
			want = slices.Clone(ctx.Effects())
		}
		var r stepResult
		if ok {
			id := s.nodes[i].id
			if in.Kind == sim.Recover {
				id = x.it.fresh[i]
			}
			arg := uint32(0)
			switch tr.kind {
			case tDeliver:
				arg = s.msgs[tr.a].msg
			case tTimer:
				arg = uint32(s.timers[tr.a].name)
			}
			x.it.setUp(s.nodes)
			r = x.it.step(i, id, in.Kind, arg)
		}
		if x.apply(s, tr) != nil {
			return // a violation: the walk has nothing more to check beyond it
		}
		if ok {
			compareEffects(t, x, seed, step, p.words, want, r.effs)
		}
		check(step, p.words)
	}
}

// realAct applies a workload event to the real nodes (start events).
func realAct(t *testing.T, x *search, real []sim.Node, a *sim.Action) {
	t.Helper()
	kind, ok := map[sim.ActionKind]sim.InputKind{sim.ActRequest: sim.Request, sim.ActRelease: sim.Release, sim.ActElect: sim.Elect, sim.ActRecover: sim.Recover}[a.Do]
	if !ok {
		return
	}
	if kind == sim.Recover {
		real[a.Node] = x.m.spec.New(a.Node, &x.m.setup)
	}
	real[a.Node].Step(sim.NewContext(a.Node, x.m.ids), &sim.Input{Kind: kind})
}

// inputOf says which node tr steps and with what input (ok false: no node steps).
func inputOf(x *search, s *state, tr trans) (int, sim.Input, bool) {
	switch tr.kind {
	case tDeliver:
		m := x.it.message(s.msgs[tr.a].msg).m
		if !s.nodes[m.To].alive || s.group(m.From) != s.group(m.To) {
			return 0, sim.Input{}, false
		}
		return m.To, sim.Input{Kind: sim.Deliver, Msg: m.Clone()}, true
	case tTimer:
		tm := s.timers[tr.a]
		return int(tm.node), sim.Input{Kind: sim.Timer, Timer: x.it.timerName(uint32(tm.name))}, true
	case tRelease:
		return int(tr.a), sim.Input{Kind: sim.Release}, true
	case tEvent:
		a := &x.m.events[tr.a].act
		if !x.applies(s, a) {
			return 0, sim.Input{}, false
		}
		kind, ok := map[sim.ActionKind]sim.InputKind{sim.ActRequest: sim.Request, sim.ActRelease: sim.Release, sim.ActElect: sim.Elect, sim.ActRecover: sim.Recover}[a.Do]
		return a.Node, sim.Input{Kind: kind}, ok
	}
	return 0, sim.Input{}, false
}

func compareEffects(t *testing.T, x *search, seed uint64, step int, what string, want []sim.Effect, got []eff) {
	t.Helper()
	var w []string
	for _, e := range want {
		switch e.Kind {
		case sim.Send:
			m := e.Msg
			w = append(w, "send "+x.msgWords(&m))
		case sim.SetTimer:
			w = append(w, fmt.Sprintf("set %s %d", e.Timer, max(e.After, 0)))
		case sim.CancelTimer:
			w = append(w, "cancel "+e.Timer)
		case sim.EnterCS:
			w = append(w, "enter")
		case sim.ExitCS:
			w = append(w, "exit")
		case sim.DeclareLeader:
			w = append(w, fmt.Sprintf("leader %d", e.Leader))
		}
	}
	var g []string
	for _, e := range got {
		switch e.kind {
		case effSend:
			m := x.it.message(e.a).m
			g = append(g, "send "+x.msgWords(&m))
		case effSetTimer:
			g = append(g, fmt.Sprintf("set %s %d", x.it.timerName(e.a), e.after))
		case effCancelTimer:
			g = append(g, "cancel "+x.it.timerName(e.a))
		case effEnter:
			g = append(g, "enter")
		case effExit:
			g = append(g, "exit")
		case effLeader:
			g = append(g, fmt.Sprintf("leader %d", int32(e.a)))
		}
	}
	if !slices.Equal(w, g) {
		t.Fatalf("seed %d, step %d (%s): the real node did\n  %v\nbut the memoised step of a node that encodes the same did\n  %v", seed, step, what, w, g)
	}
}
