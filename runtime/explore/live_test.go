package explore

import (
	"context"
	"slices"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
)

// spin is a made-up algorithm for the liveness check. P1 and P2 play ping-pong for
// ever (the same two states again and again). P0 asks P1 for the CS; P1 grants it,
// or, when deaf, ignores the request. With a grant, P0's entry is not bounded: the
// network may keep delivering the ping-pong and never the ASK. Deaf, P0 can never
// enter although something always happens: a deadlock that is "only a cycle".
type spin struct {
	deaf    bool
	waiting bool
}

func spinSpec(deaf bool) *sim.Spec {
	return &sim.Spec{
		Slug: "spin", Family: sim.Mutex,
		Messages: []sim.MessageType{{Name: "PING"}, {Name: "PONG"}, {Name: "ASK"}, {Name: "GRANT"}},
		New:      func(int, *sim.Setup) sim.Node { return &spin{deaf: deaf} },
	}
}

func (n *spin) Step(ctx *sim.Context, in *sim.Input) {
	switch in.Kind {
	case sim.Init:
		if ctx.Self() == 1 {
			ctx.Send(2, sim.Message{Type: "PING"})
		}
	case sim.Request:
		n.waiting = true
		ctx.Send(1, sim.Message{Type: "ASK"})
	case sim.Release:
		ctx.Exit()
	case sim.Deliver:
		switch in.Msg.Type {
		case "PING":
			ctx.Send(1, sim.Message{Type: "PONG"})
		case "PONG":
			ctx.Send(2, sim.Message{Type: "PING"})
		case "ASK":
			if !n.deaf {
				ctx.Send(0, sim.Message{Type: "GRANT"})
			}
		case "GRANT":
			n.waiting = false
			ctx.Enter()
		}
	}
}

func (n *spin) Clone() sim.Node { c := *n; return &c }

func (n *spin) Encode(w *sim.StateWriter) { w.Bool("waiting", n.waiting) }

func spinConfig(deaf bool) sim.Config {
	return sim.Config{
		Spec: spinSpec(deaf), IDs: []int{0, 1, 2}, CS: 1,
		Network: sim.Network{DelayMin: 1, DelayMax: 1},
		Actions: []sim.Action{{At: 0, Do: sim.ActRequest, Node: 0}},
	}
}

// livenessOf runs the search and the liveness check on a configuration.
func livenessOf(t *testing.T, cfg sim.Config) (*search, outcome, int) {
	t.Helper()
	x, err := newSearch(cfg, false, &Options{MaxStates: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	out, err := x.run(context.Background())
	if err != nil || out.found != nil || out.bound != "" {
		t.Fatalf("search: %v %+v", err, out)
	}
	out, bound, err := x.liveness(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return x, out, bound
}

func TestLivenessUnboundedEntryIsALasso(t *testing.T) {
	x, out, _ := livenessOf(t, spinConfig(false))
	if out.found == nil || out.found.property != PropEntry || out.waiter != 0 {
		t.Fatalf("%+v", out)
	}
	path, err := x.replayPath(out.states, -1)
	if err != nil {
		t.Fatal(err)
	}
	// The cycle is the ping-pong, with P0 waiting throughout.
	cycle := path[len(path)-out.repeat:]
	var words []string
	for _, p := range cycle {
		words = append(words, p.words)
	}
	slices.Sort(words)
	if !slices.Equal(words, []string{"deliver PING P1 -> P2", "deliver PONG P2 -> P1"}) {
		t.Fatalf("cycle %q", words)
	}
	checkLassoReplays(t, x, out, path)
}

func TestLivenessCycleWithoutExitIsADeadlock(t *testing.T) {
	x, out, _ := livenessOf(t, spinConfig(true))
	if out.found == nil || out.found.property != sim.PropDeadlock || out.kernel != PropEntry {
		t.Fatalf("%+v", out)
	}
	path, err := x.replayPath(out.states, -1)
	if err != nil {
		t.Fatal(err)
	}
	checkLassoReplays(t, x, out, path)
}

// checkLassoReplays turns a lasso into kernel events (the cycle three times) and
// checks that the kernel's pending monitor reports the waiting process.
func checkLassoReplays(t *testing.T, x *search, out outcome, path []pstep) {
	t.Helper()
	cyc := path[len(path)-out.repeat:]
	path = append(path, cyc...)
	path = append(path, cyc...)
	evs, _, err := x.kernelEvents(path, true)
	if err != nil {
		t.Fatal(err)
	}
	cfg := x.kernelConfig()
	last := 0
	for _, e := range evs {
		a := sim.Action{At: e.At, From: -1, To: -1, Msg: e.Msg}
		a.Do, _ = sim.ParseActionKind(e.Do)
		if e.Node != nil {
			a.Node = *e.Node // ids are the indexes here
		}
		cfg.Actions = append(cfg.Actions, a)
		last = e.At
	}
	cfg.Until, cfg.Pending = last+1, last-1 // P0 asked at time 1
	if !reported(recordRun(t, cfg), sim.PropPending) {
		t.Fatalf("the kernel does not report P0 waiting on the lasso")
	}
}

func TestLivenessBoundWithoutCycles(t *testing.T) {
	// No ping-pong: P0's ASK is the only thing to deliver, then the GRANT.
	cfg := spinConfig(false)
	cfg.Spec.New = func(int, *sim.Setup) sim.Node { return &quiet{} }
	_, out, bound := livenessOf(t, cfg)
	if out.found != nil || bound != 2 {
		t.Fatalf("bound %d, %+v", bound, out)
	}
}

// quiet is spin without the ping-pong.
type quiet struct{ spin }

func (n *quiet) Step(ctx *sim.Context, in *sim.Input) {
	if in.Kind != sim.Init {
		n.spin.Step(ctx, in)
	}
}

func (n *quiet) Clone() sim.Node { c := *n; return &c }

// The sweep for graphs without cycles gives the bound the depth-first search gives.
func TestForwardBoundIsTheSearchBound(t *testing.T) {
	for _, file := range []string{"ricart-agrawala-3.json", "ricart-agrawala-3-anytime.json", "suzuki-kasami-3-twice.json", "maekawa-deadlock-free-3.json"} {
		cfg, err := load(t, file).Config()
		if err != nil {
			t.Fatal(err)
		}
		x, err := newSearch(cfg, false, &Options{MaxStates: 1 << 20, MaxMemory: 1 << 30, NoReduce: true})
		if err != nil {
			t.Fatal(err)
		}
		if out, err := x.run(context.Background()); err != nil || out.found != nil {
			t.Fatalf("%s: %v %+v", file, err, out)
		}
		fwd, _ := x.forwardOnly(context.Background())
		if !fwd {
			t.Fatalf("%s: a cycle", file)
		}
		pend := make([]uint16, x.st.count)
		s := newState(x.m)
		for k := range pend {
			if err := x.load(k, s); err != nil {
				t.Fatal(err)
			}
			for i := range s.nodes {
				if s.nodes[i].alive && s.nodes[i].pending {
					pend[k] |= 1 << i
				}
			}
		}
		_, sweep, _ := x.forwardBound(context.Background(), pend)
		_, search, _ := x.waitCycles(context.Background(), pend)
		if sweep != search || sweep == 0 {
			t.Errorf("%s: sweep %d, search %d", file, sweep, search)
		}
	}
}
