package sandbox

import (
	"errors"
	"testing"
	"time"

	"github.com/teach-dist/playground/algorithms/starlarkalg"
	"github.com/teach-dist/playground/runtime/sim"
)

// fuzzPool is the fuzz target's one pool, small so that an input that hits the memory
// bound costs little (a worker may hold 128 MiB). Its calls have the default time,
// at the server's own priority: a template's call must not miss its deadline on a
// busy machine, or the check that the pool still serves would fail for nothing.
var fuzzPool = New(Options{Workers: 1, Memory: 128 << 20, CallTimeout: 2 * time.Second, Nice: -1})

// fuzzBombs are sources that hit the sandbox's bounds or the interpreter's: one huge
// builtin call, many uncharged lists, minutes of CPU, at load and in a handler.
var fuzzBombs = []string{
	"z = zip(*([range(65536)] * 100000))\n",
	"keep = [list(range(65536)) for i in range(3500)]\n",
	"big = list(range(65536)) * 15\nspin = [max(big) for i in range(50000)]\n",
	"big = list(range(65536)) * 15\n\ndef on_request(ctx, s):\n    for i in range(50000):\n        max(big)\n",
	"def on_request(ctx, s):\n    keep = [list(range(65536)) for i in range(3500)]\n",
}

const fuzzHeader = `title = "Fuzz"
family = "mutex"
rules = [rule("F-1", lines = ["do it"], says = "does it")]
messages = [message("PING", "PING")]

def init(setup):
    return {}
`

// fuzzRun is a small run of spec: three processes, requests and releases drawn from
// events, at most 20 steps.
func fuzzRun(t *testing.T, spec *sim.Spec, seed uint64, events []byte) {
	cfg := sim.Config{Spec: spec, IDs: []int{0, 1, 2}, Seed: seed, Until: 40, MaxEvents: 400,
		Network: sim.Network{DelayMin: 1, DelayMax: 2}}
	for k := 0; k+1 < len(events) && k < 16; k += 2 {
		do := sim.ActRequest
		if events[k+1]&1 == 1 {
			do = sim.ActRelease
		}
		cfg.Actions = append(cfg.Actions, sim.Action{At: int(events[k] % 20), Do: do, Node: int(events[k+1]>>1) % 3, From: -1, To: -1})
	}
	if spec.ParseParams != nil {
		p, err := spec.ParseParams(nil, cfg.IDs)
		if err != nil {
			return // a declared default that does not fit
		}
		cfg.Params = p
	}
	s, err := sim.New(cfg, func(*sim.Event) {})
	if err != nil {
		return // an action the family refuses, or the first step failed
	}
	for s.Steps() < 20 {
		ok, err := s.Step()
		if err != nil {
			var se *starlarkalg.Error
			if !errors.As(err, &se) || se.Msg == "" {
				t.Fatalf("a step failed with %v, not a worded *starlarkalg.Error", err)
			}
			return
		}
		if !ok {
			return
		}
	}
	_ = s.Snapshot()
}

// FuzzSandboxSource loads random sources through a sandbox pool and runs each a few
// steps: whatever a source does (bombs included), the calling process goes on, a
// failure is a worded *starlarkalg.Error, and the pool still runs a template after it.
func FuzzSandboxSource(f *testing.F) {
	for _, slug := range starlarkalg.Templates() {
		src, _ := starlarkalg.Template(slug)
		f.Add(src, uint64(1), []byte{1, 0, 1, 2, 6, 1})
	}
	for _, bomb := range fuzzBombs {
		f.Add(fuzzHeader+bomb, uint64(2), []byte{1, 0})
	}
	f.Add(fuzzHeader+"def on_request(ctx, s)\n    pass\n", uint64(3), []byte{1, 0}) // a syntax error
	f.Add("rules = [", uint64(4), []byte(nil))
	f.Add("", uint64(5), []byte(nil))
	central, _ := starlarkalg.Template("central")
	template, err := fuzzPool.Load("central", central)
	if err != nil {
		f.Fatalf("the template does not load in the sandbox: %v", err)
	}
	f.Fuzz(func(t *testing.T, src string, seed uint64, events []byte) {
		spec, err := fuzzPool.Load("fuzz", src)
		if err != nil {
			var se *starlarkalg.Error
			if !errors.As(err, &se) || se.Msg == "" {
				t.Fatalf("load error %v is not a worded *starlarkalg.Error", err)
			}
		} else {
			fuzzRun(t, spec, seed, events)
		}
		// The pool serves again (a worker that died was replaced): the template runs.
		s, err := sim.New(sim.Config{Spec: template, IDs: []int{0, 1, 2}, Seed: 1, Until: 20,
			Network: sim.Network{DelayMin: 1, DelayMax: 1}, Params: mustParams(t, template),
			Actions: []sim.Action{{At: 1, Do: sim.ActRequest, Node: 0, From: -1, To: -1}}}, func(*sim.Event) {})
		if err != nil {
			t.Fatalf("the template after %q: %v", src, err)
		}
		for range 3 {
			if _, err := s.Step(); err != nil {
				t.Fatalf("the template's step after %q: %v", src, err)
			}
		}
	})
}

func mustParams(t *testing.T, spec *sim.Spec) any {
	t.Helper()
	p, err := spec.ParseParams(nil, []int{0, 1, 2})
	if err != nil {
		t.Fatalf("the template's default params: %v", err)
	}
	return p
}
