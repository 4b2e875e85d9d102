//go:build unix

package explore

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/teach-dist/playground/runtime/sim"
)

// The explorer's figures (docs/benchmarks.md, "Explorer"):
//
//	go test -run '^$' -bench . -benchtime 1x -cpu 1 ./runtime/explore/
//
// states/s is over wall-clock time, states/cpu-s over the process's CPU time (which
// a busy machine does not inflate); B/state is what the stored states take per state
// (parts, pairs, roots, parents), edge-B/state the edges kept for the liveness check,
// and heap-B/state the live heap after the search, everything included, per state.

func benchExplore(b *testing.B, file string, timed bool) { benchSearch(b, file, timed, true) }

// benchSearch measures one search: full (no reduction), as the earlier table did, or
// with the reductions the algorithm declares.
func benchSearch(b *testing.B, file string, timed, full bool) {
	sc := load(b, file)
	cfg, err := sc.Config()
	if err != nil {
		b.Fatal(err)
	}
	benchExploreConfig(b, cfg, timed, full)
}

func benchExploreConfig(b *testing.B, cfg sim.Config, timed, full bool) {
	for b.Loop() {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		cpu0 := cpuTime()
		start := time.Now()
		x, err := newSearch(cfg, timed, &Options{MaxStates: 1 << 40, MaxMemory: 12 << 30, NoReduce: full, Go: goroutine})
		if err != nil {
			b.Fatal(err)
		}
		x.start = start
		out, err := x.run(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if out.found == nil && out.bound == "" && !x.m.election {
			if _, _, err := x.liveness(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
		wall := time.Since(start).Seconds()
		cpu := cpuTime() - cpu0
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		n := float64(x.st.count)
		b.ReportMetric(n, "states")
		b.ReportMetric(float64(x.transitions), "transitions")
		b.ReportMetric(n/wall, "states/s")
		b.ReportMetric(n/cpu, "states/cpu-s")
		b.ReportMetric(float64(x.st.stateBytes())/n, "B/state")
		b.ReportMetric(float64(x.st.edgeBytes())/n, "edge-B/state")
		b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/n, "heap-B/state")
		runtime.KeepAlive(x)
	}
}

func cpuTime() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

func BenchmarkRicartAgrawala3(b *testing.B) { benchExplore(b, "ricart-agrawala-3.json", false) }
func BenchmarkRicartAgrawala3Anytime(b *testing.B) {
	benchExplore(b, "ricart-agrawala-3-anytime.json", false)
}
func BenchmarkRicartAgrawala3Twice(b *testing.B) {
	benchExplore(b, "ricart-agrawala-3-twice.json", false)
}
func BenchmarkRicartAgrawala4(b *testing.B)  { benchExplore(b, "ricart-agrawala-4.json", false) }
func BenchmarkMaekawa3Deadlock(b *testing.B) { benchExplore(b, "maekawa-basic-3.json", false) }
func BenchmarkMaekawa3DeadlockFree(b *testing.B) {
	benchExplore(b, "maekawa-deadlock-free-3-twice.json", false)
}
func BenchmarkBully4Synchronous(b *testing.B) { benchExplore(b, "bully-synchronous-4.json", true) }

// BenchmarkMaekawa3DeadlockFound is the goal as the user sees it: from the
// scenario to the counterexample, replayed through the kernel, with its link.
func BenchmarkMaekawa3DeadlockFound(b *testing.B) {
	sc := load(b, "maekawa-basic-3.json")
	for b.Loop() {
		res, err := Explore(context.Background(), sc, Options{})
		if err != nil || res.Property != "deadlock" || !res.Counterexample.Replayed {
			b.Fatalf("%v %+v", err, res)
		}
	}
}

// The explorer's target configurations, with the declared reductions (docs/explorer.md,
// "Reductions"). RA N=5 and Maekawa N=7 deadlock-free take minutes on a busy
// machine: run them with -bench 'RicartAgrawala5|Maekawa7DeadlockFree' alone.
func BenchmarkReducedRicartAgrawala3(b *testing.B) {
	benchSearch(b, "ricart-agrawala-3.json", false, false)
}
func BenchmarkReducedRicartAgrawala4FIFO(b *testing.B) {
	benchSearch(b, "ricart-agrawala-4-fifo.json", false, false)
}
func BenchmarkFullRicartAgrawala4FIFO(b *testing.B) {
	benchSearch(b, "ricart-agrawala-4-fifo.json", false, true)
}
func BenchmarkReducedRicartAgrawala5FIFO(b *testing.B) {
	benchSearch(b, "ricart-agrawala-5-fifo.json", false, false)
}
func BenchmarkReducedMaekawa7Deadlock(b *testing.B) { benchSearch(b, "maekawa-7.json", false, false) }
func BenchmarkReducedMaekawa7DeadlockFree(b *testing.B) {
	benchSearch(b, "maekawa-deadlock-free-7.json", false, false)
}

// BenchmarkStorePerState runs every configuration of testdata as `playground explore`
// does (the reductions, one worker) and reports what a stored state costs
// (docs/explorer.md, "Speed and memory"):
//
//	go test -run '^$' -bench StorePerState -benchtime 1x -cpu 1 -timeout 60m ./runtime/explore/
//
// state-B/state is the stored states' parts, pairs, roots and parents; edge-B/state
// the edges kept for the liveness check; interned-B/state the node states, messages
// and memoised steps; B/state all the search counts (Result.Memory).
func BenchmarkStorePerState(b *testing.B) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		b.Run(name, func(b *testing.B) {
			sc := load(b, filepath.Base(f))
			for b.Loop() {
				res, err := Explore(context.Background(), sc, Options{Workers: 1})
				if err != nil {
					b.Fatal(err)
				}
				n := float64(res.States)
				b.ReportMetric(n, "states")
				b.ReportMetric(float64(res.Storage.States)/n, "state-B/state")
				b.ReportMetric(float64(res.Storage.Edges)/n, "edge-B/state")
				b.ReportMetric(float64(res.Storage.Interned)/n, "interned-B/state")
				b.ReportMetric(float64(res.Memory)/n, "B/state")
			}
		})
	}
}
