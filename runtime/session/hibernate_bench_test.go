package session

import (
	"fmt"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
)

// BenchmarkWake is what a student coming back to a run at rest waits for: the replay
// that rebuilds it. The run is Ricart-Agrawala N=5 with a request every few steps, as
// the load tool's workload makes it.
//
//	go test -run '^$' -bench Wake -benchmem ./runtime/session/
func BenchmarkWake(b *testing.B) {
	for _, steps := range []int{1_000, 10_000, 50_000} {
		b.Run(fmt.Sprintf("steps=%d", steps), func(b *testing.B) {
			s := playedSession(b, steps)
			b.ResetTimer()
			for range b.N {
				s.putToRest()
				if !s.resting {
					b.Fatal("the run did not rest")
				}
				s.wake()
			}
			b.ReportMetric(float64(s.lastSeq+1), "events")
		})
	}
}

// playedSession drives a session (its goroutine not started) for about steps steps.
func playedSession(b *testing.B, steps int) *Session {
	b.Helper()
	setup := setupOf(b, `{"version":1,"algorithm":"ricart-agrawala","nodes":5,"seed":3}`)
	s, err := newSession("bench", setup, Options{MaxEvents: 1 << 30})
	if err != nil {
		b.Fatal(err)
	}
	for k := 0; s.sim.Steps() < steps; k++ {
		if k%8 == 0 {
			// Ask the next process in; refused while it is already waiting or inside.
			_ = s.command(Command{Kind: Act, Act: sim.ActionJSON{Do: "request", Node: new(s.cfg.IDs[(k/8)%5])}})
			continue
		}
		if err := s.command(Command{Kind: Step}); err != nil {
			b.Fatal(err)
		}
	}
	return s
}
