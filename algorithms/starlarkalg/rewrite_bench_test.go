//go:build unix

package starlarkalg

import (
	"fmt"
	"syscall"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/runtime/sim/simtest"
)

// BenchmarkRewrites measures what inlining and keyword calls save (inline.go,
// kwcall.go): the Ricart-Agrawala template loaded with them and as written, run in
// turn on BenchmarkKernelRicartAgrawala's workload, one run of each per iteration, so
// that both see the same load of a shared machine:
//
//	go test -run '^$' -bench Rewrites -benchtime 20x -count 3 -cpu 1 ./algorithms/starlarkalg/
func BenchmarkRewrites(b *testing.B) {
	src, _ := Template("ricart-agrawala")
	rewritten, err := Load("ricart-agrawala", src)
	if err != nil {
		b.Fatal(err)
	}
	plain := DefaultLimits
	plain.AsWritten = true
	written, err := LoadLimits("ricart-agrawala", src, plain)
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{5, 16} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			var events [2]int64
			var cpu [2]float64
			for b.Loop() {
				for k, spec := range []*sim.Spec{written, rewritten} {
					cfg := sim.Config{Spec: spec, IDs: simtest.IDs(n), Seed: 1,
						Network: sim.Network{DelayMin: 1, DelayMax: 5}, CS: 1, Until: sim.MaxTime, Pending: sim.MaxTime,
						Actions:   simtest.RandomActions(1, n, sim.Mutex, simtest.Workload{Requests: 40 * n, Span: 40 * n * 4}),
						MaxEvents: 100_000_000}
					c0 := ProcessCPU()
					s, err := sim.New(cfg, nil)
					if err != nil {
						b.Fatal(err)
					}
					if err := s.Run(); err != nil {
						b.Fatal(err)
					}
					cpu[k] += ProcessCPU() - c0
					events[k] += int64(s.Steps())
				}
			}
			if events[0] != events[1] {
				b.Fatalf("the two runs differ: %d and %d events", events[0], events[1])
			}
			b.ReportMetric(float64(events[0])/cpu[0], "as-written-events/cpu-s")
			b.ReportMetric(float64(events[1])/cpu[1], "rewritten-events/cpu-s")
			b.ReportMetric(cpu[0]/cpu[1], "speed-up")
		})
	}
}

// ProcessCPU is the process's CPU time in seconds, user and system (which a busy
// machine inflates far less than the wall clock); the benchmarks of both test packages
// report rates by it.
func ProcessCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}
