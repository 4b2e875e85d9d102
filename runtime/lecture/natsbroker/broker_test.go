package natsbroker

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/teach-dist/playground/internal/testwait"
	"github.com/teach-dist/playground/runtime/lecture"
	"github.com/teach-dist/playground/runtime/protocol"
)

const code = "KXT49P"

// pair is two servers' brokers on one NATS; a runs a lecture.
func pair(t *testing.T) (a, b *Broker, st *stream) {
	t.Helper()
	return pairBeat(t, 50*time.Millisecond)
}

func pairBeat(t *testing.T, beat time.Duration) (a, b *Broker, st *stream) {
	t.Helper()
	ns := startNATS(t)
	a, b = connectBeat(t, ns, beat), connectBeat(t, ns, beat)
	s, err := a.Open(code)
	if err != nil {
		t.Fatal(err)
	}
	s.Checkpoint([]byte(`{"type":"hello"}`), []byte(`{"type":"snapshot"}`))
	return a, b, s.(*stream)
}

func follow(t *testing.T, b *Broker, after uint64, s *sink) lecture.Subscription {
	t.Helper()
	sub, err := b.Follow(code, after, s)
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

// lose publishes a frame that reaches the presenter's server's own followers but is
// lost on the way to the others.
func (s *stream) lose(frame []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	seq := s.hub.Last() + 1
	s.hub.Put(seq, protocol.Stamp(seq, frame))
}

// Followers on both servers get the same bytes, numbered without a gap; a follower on
// the other server that joins late starts from the same checkpoint as one here.
func TestFollowersOnBothServersGetTheSameFrames(t *testing.T) {
	a, b, st := pair(t)
	for i := range 3 {
		st.Publish(frame(i))
	}
	onA, onB := &sink{cap: 1000}, &sink{cap: 1000}
	follow(t, a, 0, onA)
	follow(t, b, 0, onB)
	for i := 3; i < 50; i++ {
		st.Publish(frame(i))
	}
	fa, fb := onA.until(t, 50), onB.until(t, 50)
	want := []uint64{0, 0, 1, 2, 3}
	for i := 4; i <= 50; i++ {
		want = append(want, uint64(i))
	}
	if fmt.Sprint(seqs(t, fb)) != fmt.Sprint(want) {
		t.Fatalf("the other server's follower got %v", seqs(t, fb))
	}
	for i := range fa {
		if !bytes.Equal(fa[i], fb[i]) {
			t.Fatalf("frame %d differs:\n%s\n%s", i, fa[i], fb[i])
		}
	}
	// A checkpoint travels too: late joiners on both servers start from it.
	st.Checkpoint([]byte(`{"type":"hello","n":50}`))
	st.Publish(frame(50))
	onB.until(t, 51)
	lateA, lateB := &sink{cap: 1000}, &sink{cap: 1000}
	follow(t, a, 0, lateA)
	follow(t, b, 0, lateB)
	ga, gb := lateA.take(), lateB.take()
	if fmt.Sprint(seqs(t, gb)) != "[50 51]" || decode(t, gb[0]).N != 50 {
		t.Fatalf("a late joiner on the other server got %q", gb)
	}
	for i := range ga {
		if !bytes.Equal(ga[i], gb[i]) {
			t.Fatalf("late joiners differ at %d:\n%s\n%s", i, ga[i], gb[i])
		}
	}
	testwait.For(t, "the presenter's server counts the other's followers", func() bool { return st.Followers() == 4 })
}

// Frames lost between the servers are fetched from the presenter's server when the
// next frame shows the gap; the followers do not see it.
func TestAGapIsFilledFromThePresentersServer(t *testing.T) {
	_, b, st := pairBeat(t, time.Hour) // no heartbeat to reveal the loss: the next frame does
	onB := &sink{cap: 1000}
	follow(t, b, 0, onB)
	st.Publish(frame(0))
	st.lose(frame(1))
	st.lose(frame(2))
	st.Publish(frame(3))
	if got := seqs(t, onB.until(t, 4)); fmt.Sprint(got) != "[0 0 1 2 3 4]" {
		t.Fatalf("after a gap: %v", got)
	}
	if onB.reason() != 0 {
		t.Fatalf("the follower was let go (%d)", onB.reason())
	}
}

// A lost last frame, which no later frame reveals, is fetched at the next heartbeat.
func TestALostLastFrameIsFetchedAtTheHeartbeat(t *testing.T) {
	_, b, st := pair(t)
	onB := &sink{cap: 1000}
	follow(t, b, 0, onB)
	for i := range 4 {
		st.Publish(frame(i))
	}
	onB.until(t, 4)
	st.lose(frame(4))
	if got := seqs(t, onB.until(t, 5)); fmt.Sprint(got) != "[5]" {
		t.Fatalf("after a lost last frame: %v", got)
	}
	if onB.reason() != 0 {
		t.Fatalf("the follower was let go (%d)", onB.reason())
	}
}

// A follower that comes back to the other server resumes after the last frame it had,
// even when it was the only one there (the mirror is made again).
func TestResumeOnTheOtherServer(t *testing.T) {
	_, b, st := pair(t)
	first := &sink{cap: 1000}
	sub := follow(t, b, 0, first)
	for i := range 5 {
		st.Publish(frame(i))
	}
	had := first.until(t, 5)
	sub.Cancel()
	testwait.For(t, "the mirror goes with its last follower", func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return len(b.mirrors) == 0
	})
	for i := 5; i < 8; i++ {
		st.Publish(frame(i))
	}
	back := &sink{cap: 1000}
	follow(t, b, decode(t, had[len(had)-1]).Seq, back)
	st.Publish(frame(8))
	if got := seqs(t, back.until(t, 9)); fmt.Sprint(got) != "[6 7 8 9]" {
		t.Fatalf("resumed with %v", got)
	}
}

// A follower that does not read is dropped on the other server too; the others there
// keep every frame.
func TestSlowFollowerOnTheOtherServerIsDropped(t *testing.T) {
	_, b, st := pair(t)
	slow, fast := &sink{cap: 5}, &sink{cap: 1000}
	follow(t, b, 0, slow)
	follow(t, b, 0, fast)
	for i := range 20 {
		st.Publish(frame(i))
	}
	got := fast.until(t, 20)
	if len(got) != 22 || slow.reason() != lecture.Slow || fast.reason() != 0 {
		t.Fatalf("fast got %d frames, slow closed %d", len(got), slow.reason())
	}
}

// The end reaches the other server after the last frame, even when that frame was lost.
func TestEndReachesTheOtherServer(t *testing.T) {
	_, b, st := pair(t)
	onB := &sink{cap: 1000}
	follow(t, b, 0, onB)
	st.Publish(frame(0))
	st.lose([]byte(`{"type":"lecture","state":"ended"}`))
	st.Close()
	fs := onB.until(t, 99)
	if onB.reason() != lecture.Ended || decode(t, fs[len(fs)-1]).Type != "lecture" {
		t.Fatalf("closed %d after %q", onB.reason(), fs)
	}
	if _, err := b.Follow(code, 0, &sink{cap: 100}); err != lecture.ErrEnded {
		t.Fatalf("joining an ended lecture on the other server: %v", err)
	}
}

// Codes are unique across the servers: a code another server answers for is refused.
func TestOpenRefusesACodeAnotherServerHas(t *testing.T) {
	a, b, _ := pair(t)
	if _, err := b.Open(code); err != lecture.ErrExists {
		t.Fatalf("the other server took the code: %v", err)
	}
	if _, err := a.Open(code); err != lecture.ErrExists {
		t.Fatalf("the same server opened the code twice: %v", err)
	}
	if _, err := b.Open("KXT49*"); err == nil {
		t.Fatal("opened a subject wildcard")
	}
}

// A lecture nobody runs is "no stream" for Follow and Lookup, at once.
func TestUnknownLecture(t *testing.T) {
	_, b, _ := pair(t)
	if _, err := b.Follow("AAAAAA", 0, &sink{cap: 10}); err != lecture.ErrEnded && err != lecture.ErrNoStream {
		t.Fatalf("follow: %v", err)
	}
	if _, err := b.Lookup(t.Context(), "AAAAAA"); err != lecture.ErrNoStream {
		t.Fatalf("lookup: %v", err)
	}
	if _, err := b.Lookup(t.Context(), "a.>"); err != lecture.ErrNoStream {
		t.Fatalf("lookup of a wildcard: %v", err)
	}
}
