package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/teach-dist/playground/algorithms/ricartagrawala"
	"github.com/teach-dist/playground/algorithms/starlarkalg"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/runtime/sim/simtest"
	"github.com/teach-dist/playground/scenarios"
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
		}{{"go", ricartagrawala.Spec()}, {"starlark-in-worker", local}, {"starlark-sandboxed", remote}} {
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

// BenchmarkKernelInWorker runs the Ricart-Agrawala workload with the Go algorithm in
// this process and with its template inside a worker (Pool.Run: the whole run in the
// worker, its trace written back), one after the other in each iteration so that both
// see the same load, and reports both rates and their ratio (go/worker: lower is
// better; the target is at most 10):
//
//	go test -run '^$' -bench KernelInWorker -benchtime 5x -cpu 1 ./runtime/sandbox/
func BenchmarkKernelInWorker(b *testing.B) {
	src, _ := starlarkalg.Template("ricart-agrawala")
	pool := New(Options{Workers: 1, Nice: -1})
	defer pool.Close()
	for _, n := range []int{5, 16} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			cfg := benchConfig(ricartagrawala.Spec(), n)
			sc := benchScenario(b, cfg, src)
			var goTime, workerTime time.Duration
			var goEvents, workerEvents int64
			for b.Loop() {
				t0 := time.Now()
				s, err := sim.New(cfg, nil)
				if err == nil {
					err = s.Run()
				}
				if err != nil {
					b.Fatal(err)
				}
				goTime += time.Since(t0)
				goEvents += int64(s.Steps())
				t0 = time.Now()
				var lines lineCounter
				if err := pool.Run(context.Background(), sc, &lines); err != nil {
					b.Fatal(err)
				}
				workerTime += time.Since(t0)
				workerEvents += lines.n
			}
			goRate, workerRate := float64(goEvents)/goTime.Seconds(), float64(workerEvents)/workerTime.Seconds()
			b.ReportMetric(goRate, "go-events/s")
			b.ReportMetric(workerRate, "worker-events/s")
			b.ReportMetric(goRate/workerRate, "go/worker")
		})
	}
}

// benchScenario is cfg as a scenario whose source is src.
func benchScenario(b *testing.B, cfg sim.Config, src string) *scenarios.Scenario {
	b.Helper()
	events := make([]sim.ActionJSON, len(cfg.Actions))
	for k := range cfg.Actions {
		var err error
		if events[k], err = sim.ActionJSONOf(&cfg.Actions[k], cfg.IDs); err != nil {
			b.Fatal(err)
		}
	}
	fifo := cfg.Network.FIFO
	cs := cfg.CS
	sc := &scenarios.Scenario{Version: 1, Algorithm: "ricart-agrawala", Source: src, Nodes: len(cfg.IDs), IDs: cfg.IDs,
		Seed: cfg.Seed, Network: &scenarios.Network{Delay: sim.Delay{cfg.Network.DelayMin, cfg.Network.DelayMax}, FIFO: &fifo},
		CS: &cs, Until: sim.MaxTime, Monitors: &scenarios.Monitors{Pending: sim.MaxTime}, Events: events}
	if err := sc.Validate(); err != nil {
		b.Fatal(err)
	}
	return sc
}

// lineCounter counts the trace's lines (its events) and keeps nothing.
type lineCounter struct{ n int64 }

func (c *lineCounter) Write(b []byte) (int, error) {
	c.n += int64(bytes.Count(b, []byte{'\n'}))
	return len(b), nil
}
