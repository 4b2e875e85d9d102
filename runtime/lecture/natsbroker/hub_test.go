package natsbroker

import (
	"fmt"
	"testing"

	"github.com/teach-dist/playground/runtime/lecture"
	"github.com/teach-dist/playground/runtime/protocol"
)

// hubWith is a hub with a checkpoint at 0 and frames 1..n.
func hubWith(n int) *lecture.Hub {
	h := &lecture.Hub{}
	h.Checkpoint(0, [][]byte{protocol.Stamp(0, []byte(`{"type":"hello"}`))})
	for i := range n {
		h.Put(uint64(i+1), protocol.Stamp(uint64(i+1), frame(i)))
	}
	return h
}

// A newcomer gets what lecture.Memory would give it: the frames after the number it
// has when the log has them all, else the checkpoint and the log.
func TestHubCatchUpAsMemoryDoes(t *testing.T) {
	h := hubWith(6)
	for _, c := range []struct {
		name  string
		after uint64
		want  []uint64
	}{
		{"in the log", 4, []uint64{5, 6}},
		{"up to date", 6, nil},
		{"from scratch", 0, []uint64{0, 1, 2, 3, 4, 5, 6}},
		{"ahead of the stream", 99, []uint64{0, 1, 2, 3, 4, 5, 6}},
	} {
		s := &sink{cap: 100}
		sub, err := h.Follow(c.after, s)
		if err != nil {
			t.Fatal(err)
		}
		if got := seqs(t, s.take()); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
		sub.Cancel()
	}
	if h.Followers() != 0 {
		t.Fatal("cancelled followers are still attached")
	}
}

// Frames out of order are not the hub's to take: the mirror fetches what is missing.
func TestHubTakesOnlyTheNextFrame(t *testing.T) {
	h := hubWith(3)
	s := &sink{cap: 100}
	if _, err := h.Follow(3, s); err != nil {
		t.Fatal(err)
	}
	h.Put(3, protocol.Stamp(3, frame(9))) // a repeat
	h.Put(5, protocol.Stamp(5, frame(9))) // after a gap
	if got := s.take(); len(got) != 0 || h.Last() != 3 {
		t.Fatalf("took %q, last %d", got, h.Last())
	}
	if h.Checkpoint(2, nil) {
		t.Fatal("took a checkpoint for a number that is not the last")
	}
}

// Loading the presenter's server's state gives the followers exactly the frames they
// lacked, in order.
func TestHubLoadDeliversOnlyTheMissingFrames(t *testing.T) {
	h := hubWith(3)
	s := &sink{cap: 100}
	if _, err := h.Follow(3, s); err != nil {
		t.Fatal(err)
	}
	owner := hubWith(7)
	owner.Checkpoint(7, [][]byte{protocol.Stamp(7, []byte(`{"type":"hello"}`))})
	owner.Put(8, protocol.Stamp(8, frame(7)))
	// The owner's checkpoint is past what the follower has (3): it cannot resume.
	h.Load(owner.Snapshot())
	if s.reason() != lecture.Slow {
		t.Fatalf("a follower left behind by the checkpoint was not let go (closed %d)", s.reason())
	}

	h = hubWith(3)
	s = &sink{cap: 100}
	if _, err := h.Follow(3, s); err != nil {
		t.Fatal(err)
	}
	h.Load(hubWith(7).Snapshot())
	if got := seqs(t, s.take()); fmt.Sprint(got) != "[4 5 6 7]" || s.reason() != 0 {
		t.Fatalf("got %v (closed %d)", got, s.reason())
	}
	late := &sink{cap: 100}
	if _, err := h.Follow(0, late); err != nil {
		t.Fatal(err)
	}
	if got := seqs(t, late.take()); fmt.Sprint(got) != "[0 1 2 3 4 5 6 7]" {
		t.Fatalf("a late joiner after a load: %v", got)
	}
}

// A slow follower is dropped; the others get everything.
func TestHubSlowFollowerIsDropped(t *testing.T) {
	h := hubWith(0)
	slow, fast := &sink{cap: 3}, &sink{cap: 100}
	for _, s := range []*sink{slow, fast} {
		if _, err := h.Follow(0, s); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 10 {
		h.Put(uint64(i+1), protocol.Stamp(uint64(i+1), frame(i)))
	}
	if slow.reason() != lecture.Slow || fast.reason() != 0 || len(fast.take()) != 11 || h.Followers() != 1 {
		t.Fatalf("slow closed %d, fast closed %d, %d followers", slow.reason(), fast.reason(), h.Followers())
	}
}

// Closed, a hub lets its followers go with the reason and refuses newcomers with the
// matching error.
func TestHubCloseSaysWhy(t *testing.T) {
	for _, c := range []struct {
		why lecture.Reason
		err error
	}{{lecture.Ended, lecture.ErrEnded}, {lecture.Unreachable, lecture.ErrUnreachable}} {
		h := hubWith(2)
		s := &sink{cap: 100}
		if _, err := h.Follow(0, s); err != nil {
			t.Fatal(err)
		}
		h.Close(c.why)
		if s.reason() != c.why {
			t.Fatalf("closed %d, want %d", s.reason(), c.why)
		}
		if _, err := h.Follow(0, &sink{cap: 100}); err != c.err {
			t.Fatalf("joining a closed hub: %v, want %v", err, c.err)
		}
		if st := h.Snapshot(); len(st.Log) != 2 || st.Ended != (c.why == lecture.Ended) {
			t.Fatalf("after close the hub holds %+v", st)
		}
	}
}
