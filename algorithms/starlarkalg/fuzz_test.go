package starlarkalg

import (
	"errors"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
)

// fuzzLimits keep one execution cheap (CI runs 50000): a few thousand steps per handler
// and a short run. The bounds are the same code as the defaults, only smaller.
var fuzzLimits = Limits{
	Source: 16 << 10, LoadSteps: 20_000, Steps: 2_000,
	StateValues: 256, StringBytes: 256, MessageInts: 64, Effects: 256, Grow: 16 << 10,
}

// fuzzConfig draws a small run from bytes: 2 to 5 nodes, delays, and up to 16 actions
// (request, release, crash, recover, elect, drop) at times below the end.
func fuzzConfig(spec *sim.Spec, seed uint64, shape byte, events []byte) sim.Config {
	n := 2 + int(shape%4)
	ids := make([]int, n)
	for i := range ids {
		ids[i] = 3*i + int(shape>>4) // ids need not be 0..n-1
	}
	cfg := sim.Config{Spec: spec, IDs: ids, Seed: seed, Until: 60, CS: int(shape>>2) % 4,
		Network:   sim.Network{DelayMin: int(shape>>6) % 2, DelayMax: 1 + int(shape>>5)%3, FIFO: shape&8 != 0},
		MaxEvents: 4000}
	kinds := []sim.ActionKind{sim.ActRequest, sim.ActRelease, sim.ActCrash, sim.ActRecover, sim.ActElect, sim.ActDrop}
	for k := 0; k+1 < len(events) && k < 32; k += 2 {
		a := sim.Action{At: int(events[k] % 50), Do: kinds[int(events[k+1])%len(kinds)], Node: int(events[k+1]>>3) % n, From: -1, To: -1}
		cfg.Actions = append(cfg.Actions, a)
	}
	return cfg
}

// FuzzLoadAndRun feeds random sources and random runs to the adapter: each must load
// or fail with an *Error, and a loaded one must run to its end or stop with an error,
// never panic and never run unbounded (the step, state and event bounds see to it).
func FuzzLoadAndRun(f *testing.F) {
	for _, slug := range Templates() {
		src, _ := Template(slug)
		f.Add(src, uint64(1), byte(0x13), []byte{1, 0, 5, 8, 9, 2, 12, 3, 20, 4}, []byte(`{}`))
	}
	f.Add(header+body, uint64(7), byte(2), []byte{0, 0, 3, 8}, []byte(`{"x": 1}`))
	f.Add(header+body+"def on_start(ctx, s):\n    while True:\n        pass\n", uint64(2), byte(1), []byte{}, []byte(nil))
	f.Add(header+"def init(setup):\n    return {\"x\": [0] * 100}\n", uint64(3), byte(3), []byte{1, 0}, []byte(nil))
	f.Add(header+body+"def on_release(ctx, s):\n    s.seen = s.seen + s.seen + [1]\n", uint64(4), byte(4), []byte{1, 0, 2, 1, 3, 1, 4, 1}, []byte(nil))
	f.Add(header+"x = list(range(1000000))\n", uint64(5), byte(0), []byte{}, []byte(nil))
	f.Fuzz(func(t *testing.T, src string, seed uint64, shape byte, events []byte, rawParams []byte) {
		spec, err := LoadLimits("fuzz", src, fuzzLimits)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Msg == "" {
				t.Fatalf("load error %v is not a worded *Error", err)
			}
			return
		}
		cfg := fuzzConfig(spec, seed, shape, events)
		if spec.ParseParams != nil {
			p, err := spec.ParseParams(rawParams, cfg.IDs)
			if err != nil {
				if p, err = spec.ParseParams(nil, cfg.IDs); err != nil {
					return // a declared default that does not fit (a node default without ids ...)
				}
			}
			cfg.Params = p
		}
		s, err := sim.New(cfg, func(*sim.Event) {})
		if err != nil {
			return // an action the algorithm's family refuses, or the first step failed
		}
		for s.Steps() < 2000 {
			ok, err := s.Step()
			if err != nil || !ok {
				break
			}
			if s.Steps()%64 == 0 {
				c := s.Clone(nil) // clones and encodings of whatever the script built
				_ = c.Snapshot()
			}
		}
		_ = s.Snapshot()
	})
}
