package sim_test

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/teach-dist/playground/algorithms/ricartagrawala"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/runtime/sim/simtest"
)

// benchConfig is a busy Ricart-Agrawala run: every node asks for the CS again and again.
func benchConfig(n int) sim.Config {
	return sim.Config{
		Spec: ricartagrawala.Spec(), IDs: simtest.IDs(n), Seed: 1,
		Network: sim.Network{DelayMin: 1, DelayMax: 5},
		CS:      1, Until: sim.MaxTime, Pending: sim.MaxTime,
		Actions:   simtest.RandomActions(1, n, sim.Mutex, simtest.Workload{Requests: 40 * n, Span: 40 * n * 4}),
		MaxEvents: 100_000_000,
	}
}

// BenchmarkKernel reports kernel events (steps: deliveries, timers, workload actions)
// per second for Ricart-Agrawala, with and without encoding the trace as JSON lines.
func BenchmarkKernel(b *testing.B) {
	for _, n := range []int{16, 64} {
		for _, mode := range []string{"no-trace", "json-trace"} {
			b.Run(fmt.Sprintf("ricart-agrawala/N=%d/%s", n, mode), func(b *testing.B) {
				cfg := benchConfig(n)
				var steps, traceEvents int64
				var buf []byte
				var ms0, ms1 runtime.MemStats
				runtime.ReadMemStats(&ms0)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					var sink sim.Sink
					if mode == "json-trace" {
						enc := sim.NewEncoder(cfg.Spec, cfg.IDs)
						sink = func(ev *sim.Event) {
							buf = enc.AppendLine(buf[:0], ev)
						}
					}
					s, err := sim.New(cfg, sink)
					if err != nil {
						b.Fatal(err)
					}
					if err := s.Run(); err != nil {
						b.Fatal(err)
					}
					steps += int64(s.Steps())
					traceEvents += int64(s.Totals().Messages) // for the log line only
				}
				b.StopTimer()
				runtime.ReadMemStats(&ms1)
				sec := b.Elapsed().Seconds()
				b.ReportMetric(float64(steps)/sec, "events/s")
				b.ReportMetric(sec*1e9/float64(steps), "ns/event")
				b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(steps), "allocs/event")
				b.ReportMetric(float64(steps)/float64(b.N), "events/run")
			})
		}
	}
}

type heapItem struct {
	t   int
	seq int64
}

type bareHeap []heapItem

func (h bareHeap) Len() int { return len(h) }
func (h bareHeap) Less(i, j int) bool {
	if h[i].t != h[j].t {
		return h[i].t < h[j].t
	}
	return h[i].seq < h[j].seq
}
func (h bareHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *bareHeap) Push(x any)   { *h = append(*h, x.(heapItem)) }
func (h *bareHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}

// BenchmarkBareHeap is the yardstick: one container/heap pop plus one push, at the
// queue sizes the kernel runs with (up to N(N-1) messages in flight).
func BenchmarkBareHeap(b *testing.B) {
	for _, n := range []int{16, 64} {
		b.Run(fmt.Sprintf("size=%d", n*(n-1)), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			h := make(bareHeap, 0, n*n)
			var seq int64
			for i := 0; i < n*(n-1); i++ {
				heap.Push(&h, heapItem{t: r.IntN(5), seq: seq})
				seq++
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				it := heap.Pop(&h).(heapItem)
				heap.Push(&h, heapItem{t: it.t + 1 + int(seq%5), seq: seq})
				seq++
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
