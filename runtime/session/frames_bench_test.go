package session

import (
	"testing"

	"github.com/teach-dist/playground/runtime/protocol"
	"github.com/teach-dist/playground/runtime/sim"
)

// benchSub takes every frame and keeps none: the session's own cost of a publish.
type benchSub struct{ n int }

func (c *benchSub) Deliver(protocol.Encoded) bool { c.n++; return true }

func (c *benchSub) Close() {}

// BenchmarkPublish is the session's hot path while a run plays: a step taken, its
// batch encoded, the events frame built once and offered to each viewer; and the
// snapshot a seek or a joining viewer gets. The run is Ricart-Agrawala N=5.
//
//	go test -run '^$' -bench Publish -benchmem ./runtime/session/
func BenchmarkPublish(b *testing.B) {
	b.Run("step", func(b *testing.B) {
		s := playedSession(b, 200)
		viewers := make([]*benchSub, 8)
		for i := range viewers {
			viewers[i] = &benchSub{}
			s.subs = append(s.subs, viewers[i])
		}
		b.ReportAllocs()
		b.ResetTimer()
		for k := range b.N {
			if k%8 == 0 {
				_ = s.command(Command{Kind: Act, Act: sim.ActionJSON{Do: "request", Node: new(s.cfg.IDs[(k/8)%5])}})
				continue
			}
			if err := s.command(Command{Kind: Step}); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		if viewers[0].n == 0 {
			b.Fatal("no frame was published")
		}
	})
	b.Run("snapshot", func(b *testing.B) {
		s := playedSession(b, 200)
		b.ReportAllocs()
		b.ResetTimer()
		n := 0
		for range b.N {
			n += len(s.snapshotFrame().JSON)
		}
		b.ReportMetric(float64(n)/float64(b.N), "bytes/frame")
	})
}
