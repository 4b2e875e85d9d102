package web

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/teach-dist/playground/internal/testwait"
	"github.com/teach-dist/playground/runtime/lecture"
	"github.com/teach-dist/playground/runtime/protocol"
)

// compactStream is a follower of the compact frames (proto=2): each frame is expanded
// as the page does, and checked for order like a protocol-1 stream.
type compactStream struct {
	t    *testing.T
	c    *wsClient
	x    *protocol.Expander
	last uint64
}

func (rig *lectureRig) followCompact(t *testing.T, after uint64) *wsClient {
	t.Helper()
	path := "/ws/lecture/" + rig.code + "?proto=2"
	if after > 0 {
		path += fmt.Sprintf("&after=%d", after)
	}
	return dialPath(t, rig.ts, path, nil)
}

// next reads one frame of the stream and expands it: nil for the checkpoint's table.
func (s *compactStream) next() (uint64, []byte) {
	s.t.Helper()
	_ = s.c.conn.SetReadDeadline(time.Now().Add(testwait.Limit))
	_, b, err := s.c.conn.ReadMessage()
	if err != nil {
		s.t.Fatalf("read: %v", err)
	}
	if b[0] != '[' {
		s.t.Fatalf("a compact follower got a protocol-1 frame: %s", b)
	}
	n, v1, err := s.x.Expand(b)
	if err != nil {
		s.t.Fatalf("%s: %v", b, err)
	}
	return n, v1
}

// catchUp reads a checkpoint: the table, hello, snapshot and the lecture's state, one
// number for all.
func (s *compactStream) catchUp() {
	s.t.Helper()
	n, table := s.next()
	if table != nil {
		s.t.Fatalf("a compact checkpoint starts with %s, not the table", table)
	}
	for _, want := range []string{"hello", "snapshot", "lecture"} {
		m, v1 := s.next()
		if m != n || !strings.Contains(string(v1[:min(len(v1), 40)]), `"type":"`+want+`"`) {
			s.t.Fatalf("checkpoint %d: %s where %s was due", n, v1, want)
		}
	}
	s.last = n
}

// take reads n frames, each numbered one more than the last: their protocol-1 bytes
// without the number.
func (s *compactStream) take(n int) []string {
	s.t.Helper()
	var out []string
	for len(out) < n {
		m, v1 := s.next()
		if m != s.last+1 {
			s.t.Fatalf("frame %d after %d (a gap or a duplicate): %s", m, s.last, v1)
		}
		s.last = m
		out = append(out, unstamped(string(v1)))
	}
	return out
}

func unstamped(raw string) string { return "{" + raw[strings.IndexByte(raw, ',')+1:] }

// A follower of the compact frames sees exactly the frames of a protocol-1 follower
// (cmd/lectureload measures the bytes); when its connection drops it resumes after the last
// frame it took, with no gap and no repeat; a late joiner starts from a checkpoint
// that carries the table of strings. A version the server does not speak is refused.
func TestLectureCompactFollowerMatchesProtocol1AndResumes(t *testing.T) {
	rig := startLecture(t, Options{Lecture: lecture.Options{Refresh: 24}}, "/play/ricart-agrawala?n=6")
	plain := newStream(t, rig.follow(t, 0))
	plain.catchUp()
	compact := &compactStream{t: t, c: rig.followCompact(t, 0), x: protocol.NewExpander()}
	compact.catchUp()
	rig.waitFollowers(t, 2)

	same := func(what string, n int, others ...*compactStream) {
		t.Helper()
		want := plain.take(n)
		for _, s := range others {
			got := s.take(n)
			for i := range want {
				if w := unstamped(want[i].raw); got[i] != w {
					t.Fatalf("%s, frame %d:\ncompact %s\nplain   %s", what, i, got[i], w)
				}
			}
		}
	}
	rig.drive(t, `{"type":"act","do":"request","node":0}`, `{"type":"act","do":"request","node":3}`)
	rig.drive(t, steps(12)...)
	same("following", 14, compact)

	// The connection drops; the run goes on; the follower resumes after its last frame.
	compact.c.conn.Close()
	rig.drive(t, `{"type":"act","do":"request","node":5}`)
	rig.drive(t, steps(6)...)
	compact.c = rig.followCompact(t, compact.last)
	same("resumed", 7, compact)

	// Past two checkpoint refreshes a late joiner starts from the latest one.
	rig.drive(t, `{"type":"act","do":"request","node":1}`)
	rig.drive(t, steps(50)...)
	same("following on", 51, compact)
	l, _ := rig.srv.lectures.ByCode(rig.code)
	testwait.For(t, "the lecture's checkpoint catching up with the run", func() bool { return l.CatchUpLen() < 24 })
	late := &compactStream{t: t, c: rig.followCompact(t, 0), x: protocol.NewExpander()}
	late.catchUp()
	late.take(int(compact.last - late.last))
	rig.drive(t, `{"type":"act","do":"request","node":2}`)
	rig.drive(t, steps(8)...)
	same("joined late", 9, compact, late)

	// A protocol this server does not speak: a clear error, then the close.
	bad := dialPath(t, rig.ts, "/ws/lecture/"+rig.code+"?proto=3", nil)
	e := bad.lnext("error")
	if !strings.Contains(e.raw, `"code":"bad-field"`) || !strings.HasPrefix(e.Error, "proto:") {
		t.Fatalf("proto=3: %s", e.raw)
	}
}
