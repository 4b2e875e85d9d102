package cost

import (
	"math"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/runtime/sim/simtest"
)

// A long contended run: what the panel replays when the run is far along.
func benchConfig(b *testing.B) sim.Config {
	b.Helper()
	const n = 8
	cfg := config(b, "ricart-agrawala", n, 1, [2]int{1, 3},
		simtest.RandomActions(1, n, sim.Mutex, simtest.Workload{Requests: 3000, Span: 20000})...)
	cfg.Until = 0
	cfg.MaxEvents = 250_000
	return cfg
}

// BenchmarkReplayOnly is the kernel's replay alone, the baseline of the next one.
func BenchmarkReplayOnly(b *testing.B) {
	cfg := benchConfig(b)
	events := 0
	for b.Loop() {
		events = 0
		if _, err := sim.Replay(cfg, nil, math.MaxInt, func(*sim.Event) { events++ }); err != nil && err != sim.ErrEventLimit {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(events), "events")
}

// BenchmarkReplayWithMetrics is what GET /api/sessions/{id}/metrics costs.
func BenchmarkReplayWithMetrics(b *testing.B) {
	cfg := benchConfig(b)
	for b.Loop() {
		if _, err := Replay(cfg, nil, math.MaxInt); err != nil {
			b.Fatal(err)
		}
	}
}
