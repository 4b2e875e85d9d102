package session

import (
	"bytes"
	"testing"

	"github.com/teach-dist/playground/runtime/protocol"

	"github.com/teach-dist/playground/internal/testwait"
)

// A checkpoint taken while the run plays holds everything streamed before it and
// nothing after: the snapshot equals what a viewer attaching at that moment gets, and
// the pending step the pacing held back went out first.
func TestCheckpointIsInOrderWithTheStream(t *testing.T) {
	m := NewManager(2, Options{})
	defer m.Close()
	s, c := start(t, m, `{"version":1,"algorithm":"token-ring","nodes":4,"seed":2}`)
	do(t, s, c, Command{Kind: Speed, Speed: MaxSpeed})
	do(t, s, c, Command{Kind: Play})
	c.next(t, "state")
	c.next(t, "state")
	c.next(t, "events")
	type cp struct {
		hello, snap []byte
		queued      int // frames the viewer had been sent and not yet read
	}
	got := make(chan cp, 1)
	if err := s.Checkpoint(func(h, sn protocol.Encoded) { got <- cp{h.JSON, sn.JSON, len(c.frames)} }); err != nil {
		t.Fatal(err)
	}
	taken := testwait.Recv(t, "the checkpoint", got)
	do(t, s, c, Command{Kind: Pause})
	snap := decode(t, taken.snap)
	// The frames sent before the checkpoint end exactly at its step (the step the
	// pacing held back went out first); every later frame is past it.
	last := -1
	for range taken.queued {
		if f := c.next(t, "events", "state"); f.Type == "events" {
			last = f.Step
		}
	}
	if last != snap.Step {
		t.Fatalf("the stream before the checkpoint ends at step %d, its snapshot is at %d", last, snap.Step)
	}
	for {
		f := c.next(t, "events", "state")
		if f.Type == "events" && f.Batches[0].Step <= snap.Step {
			t.Fatalf("after the checkpoint at step %d came step %d", snap.Step, f.Batches[0].Step)
		}
		if f.Type == "state" && !f.Playing {
			break
		}
	}
	// Rewinding to the checkpoint's step rebuilds the same view.
	do(t, s, c, Command{Kind: Seek, Step: snap.Step})
	again := c.next(t, "snapshot")
	if !bytes.Equal(stripClock(again.raw), stripClock(taken.snap)) {
		t.Fatalf("checkpoint snapshot differs from a rebuilt one:\n%s\n%s", taken.snap, again.raw)
	}
	if !bytes.HasPrefix(taken.hello, []byte(`{"type":"hello"`)) {
		t.Fatalf("hello: %s", taken.hello)
	}
	s.Detach(c)
}

func decode(t *testing.T, b []byte) frame {
	t.Helper()
	c := newSub()
	c.frames <- b
	return c.next(t, "snapshot")
}

func TestCheckpointOfAnEndedSession(t *testing.T) {
	m := NewManager(1, Options{})
	s, _ := start(t, m, ra3)
	m.Close()
	if err := s.Checkpoint(func(_, _ protocol.Encoded) { t.Error("called after the end") }); err != ErrClosed {
		t.Fatalf("err %v, want ErrClosed", err)
	}
}
