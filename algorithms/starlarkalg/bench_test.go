//go:build unix

package starlarkalg_test

import (
	"fmt"
	"runtime"
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

// BenchmarkKernelRicartAgrawala runs the same workload with the Go algorithm and with
// its Starlark template, side by side, with and without encoding the trace as JSON
// lines (as runtime/sim's BenchmarkKernel does), and reports kernel events per second of wall
// clock and of the process's CPU time (which a busy machine does not inflate):
//
//	go test -run '^$' -bench KernelRicartAgrawala -cpu 1 ./algorithms/starlarkalg/
func BenchmarkKernelRicartAgrawala(b *testing.B) {
	star := loadTemplate(b, "ricart-agrawala")
	for _, n := range []int{5, 16} {
		for _, v := range []struct {
			name string
			spec *sim.Spec
		}{{"go", ricartagrawala.Spec()}, {"starlark", star}} {
			for _, mode := range []string{"no-trace", "json-trace"} {
				b.Run(fmt.Sprintf("N=%d/%s/%s", n, mode, v.name), func(b *testing.B) {
					cfg := benchConfig(v.spec, n)
					var steps int64
					var buf []byte
					cpu0 := starlarkalg.ProcessCPU()
					for i := 0; i < b.N; i++ {
						var sink sim.Sink
						if mode == "json-trace" {
							enc := sim.NewEncoder(cfg.Spec, cfg.IDs)
							sink = func(ev *sim.Event) { buf = enc.AppendLine(buf[:0], ev) }
						}
						s, err := sim.New(cfg, sink)
						if err != nil {
							b.Fatal(err)
						}
						if err := s.Run(); err != nil {
							b.Fatal(err)
						}
						steps += int64(s.Steps())
					}
					cpu := starlarkalg.ProcessCPU() - cpu0
					sec := b.Elapsed().Seconds()
					b.ReportMetric(float64(steps)/sec, "events/s")
					b.ReportMetric(float64(steps)/cpu, "events/cpu-s")
					b.ReportMetric(cpu*1e9/float64(steps), "cpu-ns/event")
				})
			}
		}
	}
}

// BenchmarkKernelRicartAgrawalaRatio runs the workload of BenchmarkKernelRicartAgrawala
// (no trace) with the Go algorithm and with the template in turn, and reports both
// rates and their ratio. On a loaded machine the load changes from second to second,
// and the sub-benchmarks above run one side for seconds before the other; alternating
// lets both sides see the same load. Each turn starts on a collected heap (so neither
// side's garbage is collected in the other's time) and runs the workload reps times
// in a row, enough for the template's allocations to trigger about ten collections:
// each side pays for the collections its own garbage causes, all but the last one's.
//
//	go test -run '^$' -bench KernelRicartAgrawalaRatio -benchtime 5x -count 4 -cpu 1 ./algorithms/starlarkalg/
func BenchmarkKernelRicartAgrawalaRatio(b *testing.B) {
	star := loadTemplate(b, "ricart-agrawala")
	for _, c := range []struct{ n, reps int }{{5, 150}, {16, 20}} {
		b.Run(fmt.Sprintf("N=%d", c.n), func(b *testing.B) {
			sides := []struct {
				cfg    sim.Config
				events int64
				cpu    float64
			}{{cfg: benchConfig(ricartagrawala.Spec(), c.n)}, {cfg: benchConfig(star, c.n)}}
			for b.Loop() {
				for k := range sides {
					side := &sides[k]
					runtime.GC()
					cpu0 := starlarkalg.ProcessCPU()
					for range c.reps {
						s, err := sim.New(side.cfg, nil)
						if err != nil {
							b.Fatal(err)
						}
						if err := s.Run(); err != nil {
							b.Fatal(err)
						}
						side.events += int64(s.Steps())
					}
					side.cpu += starlarkalg.ProcessCPU() - cpu0
				}
			}
			goRate, starRate := float64(sides[0].events)/sides[0].cpu, float64(sides[1].events)/sides[1].cpu
			b.ReportMetric(goRate, "go-events/cpu-s")
			b.ReportMetric(starRate, "starlark-events/cpu-s")
			b.ReportMetric(goRate/starRate, "go/starlark")
		})
	}
}
