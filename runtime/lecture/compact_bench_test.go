package lecture

import (
	"bytes"
	"compress/flate"
	"testing"

	"github.com/teach-dist/playground/runtime/protocol"
	"github.com/teach-dist/playground/runtime/session"
)

// raFrames is a Ricart-Agrawala run of 8 processes, all asking, stepped 200 times:
// its events frames in protocol 1 and compact.
func raFrames(b *testing.B) (v1, compact [][]byte) {
	b.Helper()
	m := session.NewManager(4, session.Options{})
	defer m.Close()
	doc := `{"version":1,"algorithm":"ricart-agrawala","nodes":8,"seed":3,"cs":2,"events":[` +
		`{"at":0,"do":"request","node":0},{"at":0,"do":"request","node":3},{"at":1,"do":"request","node":5},{"at":2,"do":"request","node":7},` +
		`{"at":3,"do":"request","node":1},{"at":4,"do":"request","node":2},{"at":5,"do":"request","node":4},{"at":6,"do":"request","node":6}]}`
	sess, err := m.Start(setup(b, doc))
	if err != nil {
		b.Fatal(err)
	}
	c := newCollector()
	if err := sess.Attach(c); err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	for range 200 {
		_ = sess.Do(c, session.Command{Kind: session.Step})
	}
	_ = sess.Checkpoint(func(protocol.Encoded, protocol.Encoded) { close(done) })
	<-done
	cz := protocol.NewCompactor()
	for len(c.c) > 0 {
		f := <-c.c
		fr, err := protocol.Decode(f)
		if err != nil {
			b.Fatal(err)
		}
		out := cz.Encode(fr, f)
		if _, ok := fr.(*protocol.Events); ok {
			v1, compact = append(v1, f), append(compact, out)
		}
	}
	return v1, compact
}

// BenchmarkDeflate is what permessage-deflate would make of each events frame, as
// gorilla/websocket does it (no context kept between messages, a sync flush whose
// last 4 bytes are left off): the bytes on the wire and the CPU to compress one
// frame, at level 1 (gorilla's default) and 6. A PreparedMessage would compress once
// for every follower, so the CPU is per frame, not per follower.
func BenchmarkDeflate(b *testing.B) {
	v1, compact := raFrames(b)
	for _, enc := range []struct {
		name   string
		frames [][]byte
	}{{"protocol1", v1}, {"compact", compact}} {
		for _, level := range []int{1, 6} {
			b.Run(enc.name+"/level"+string(rune('0'+level)), func(b *testing.B) {
				var buf bytes.Buffer
				w, _ := flate.NewWriter(&buf, level)
				raw, out := 0, 0
				b.ResetTimer()
				for i := range b.N {
					f := enc.frames[i%len(enc.frames)]
					buf.Reset()
					w.Reset(&buf)
					_, _ = w.Write(f)
					_ = w.Flush()
					raw += len(f)
					out += buf.Len() - 4
				}
				b.ReportMetric(float64(raw)/float64(b.N), "B/frame")
				b.ReportMetric(float64(out)/float64(b.N), "deflated-B/frame")
			})
		}
	}
}

// BenchmarkCompact is the server's cost of a compact frame: encoding one events frame
// and checking it by expanding it, once per frame for all its compact followers.
func BenchmarkCompact(b *testing.B) {
	v1, _ := raFrames(b)
	frames := make([]protocol.Frame, len(v1))
	for i, f := range v1 {
		fr, err := protocol.Decode(f)
		if err != nil {
			b.Fatal(err)
		}
		frames[i] = fr
	}
	b.ResetTimer()
	var c *protocol.Compactor
	for i := range b.N {
		k := i % len(frames)
		if k == 0 {
			c = protocol.NewCompactor() // the run again from its start: a view to fit
			c.Encode(&protocol.Snapshot{Clock: protocol.Clock{Seq: -1}}, nil)
		}
		c.Encode(frames[k], v1[k])
	}
}
