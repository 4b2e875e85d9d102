package starlarkalg

import (
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
)

// BenchmarkStep is the cost of one handler call as the kernel makes it, by what the
// handler does: nothing, fire a rule, update a variable, max of two ints, call a
// function of its own (docs/benchmarks.md, "Algorithms in Starlark").
func BenchmarkStep(b *testing.B) {
	for _, c := range []struct{ name, body string }{
		{"pass", "def on_request(ctx, s):\n    pass\n"},
		{"rule", "def on_request(ctx, s):\n    ctx.rule(\"T-1\")\n"},
		{"attr", "def on_request(ctx, s):\n    s.count = s.count + 1\n"},
		{"max", "def on_request(ctx, s):\n    s.count = max(s.count, 3) + 1\n"},
		{"call", "def f(s):\n    return 1\ndef on_request(ctx, s):\n    f(s)\n"},
	} {
		b.Run(c.name, func(b *testing.B) {
			spec, err := Load("bench", header+"def init(setup):\n    return {\"count\": 0, \"seen\": []}\n"+c.body)
			if err != nil {
				b.Fatal(err)
			}
			setup := &sim.Setup{IDs: []int{0, 1, 2}}
			nd := spec.New(0, setup)
			ctx := sim.NewContext(0, setup.IDs)
			in := &sim.Input{Kind: sim.Request}
			for b.Loop() {
				ctx.Reset(0)
				nd.Step(ctx, in)
			}
		})
	}
}
