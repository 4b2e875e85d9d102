package sandbox

import (
	"fmt"
	"testing"

	"github.com/teach-dist/playground/algorithms/ricartagrawala"
	"github.com/teach-dist/playground/algorithms/starlarkalg"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/runtime/sim/simtest"
)

// benchConfig is runtime/sim's BenchmarkKernel workload: every node asks for the CS 40
// times, delays uniform in [1,5], CS time 1.
func benchConfig(spec *sim.Spec, n int) sim.Config {
	return sim.Config{
		Spec: spec, IDs: simtest.IDs(n), Seed: 1,
		Network: sim.Network{DelayMin: 1, DelayMax: 5},
		CS:      1, Until: sim.MaxTime, Pending: sim.MaxTime,
		Actions:   simtest.RandomActions(1, n, sim.Mutex, simtest.Workload{Requests: 40 * n, Span: 40 * n * 4}),
		MaxEvents: 100_000_000,
	}
}

// BenchmarkKernelSandboxed runs the Ricart-Agrawala workload three ways side by side:
// the Go algorithm, its Starlark template in this process (as a sandbox worker runs
// it), and the template through the sandbox (the server's kernel, each step a call to
// a worker). It reports kernel events per second of wall clock, and the step latency a
// live session of a source sees:
//
//	go test -run '^$' -bench KernelSandboxed -benchtime 3x -cpu 1 ./runtime/sandbox/
func BenchmarkKernelSandboxed(b *testing.B) {
	src, _ := starlarkalg.Template("ricart-agrawala")
	local, err := starlarkalg.Load("ricart-agrawala", src)
	if err != nil {
		b.Fatal(err)
	}
	pool := New(Options{Workers: 1, Nice: -1}) // the worker at the benchmark's own priority
	defer pool.Close()
	remote := loadRemote(b, pool, "ricart-agrawala", src)
	for _, n := range []int{5, 16} {
		for _, v := range []struct {
			name string
			spec *sim.Spec
		}{{"go", &ricartagrawala.Spec}, {"starlark-in-worker", local}, {"starlark-sandboxed", remote}} {
			b.Run(fmt.Sprintf("N=%d/%s", n, v.name), func(b *testing.B) {
				cfg := benchConfig(v.spec, n)
				var events int64
				for b.Loop() {
					s, err := sim.New(cfg, nil)
					if err != nil {
						b.Fatal(err)
					}
					if err := s.Run(); err != nil {
						b.Fatal(err)
					}
					events += int64(s.Steps())
				}
				b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
				b.ReportMetric(b.Elapsed().Seconds()*1e6/float64(events), "µs/event")
			})
		}
	}
}
