package lecture

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
)

// sink is a follower with a bounded queue, as a WebSocket client has.
type sink struct {
	mu     sync.Mutex
	frames [][]byte
	cap    int
	closed Reason
}

func (s *sink) Send(f []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed != 0 || len(s.frames) >= s.cap {
		return false
	}
	s.frames = append(s.frames, f)
	return true
}

func (s *sink) Close(why Reason) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed == 0 {
		s.closed = why
	}
}

// take empties the queue, as a writer goroutine does.
func (s *sink) take() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.frames
	s.frames = nil
	return out
}

type stamped struct {
	Seq  uint64 `json:"lseq"`
	Type string `json:"type"`
	N    int    `json:"n"`
}

func decode(t *testing.T, f []byte) stamped {
	t.Helper()
	var s stamped
	if err := json.Unmarshal(f, &s); err != nil {
		t.Fatalf("%s: %v", f, err)
	}
	return s
}

func frame(n int) []byte { return fmt.Appendf(nil, `{"type":"events","n":%d}`, n) }

func openTopic(t *testing.T) (*Memory, Stream) {
	t.Helper()
	m := NewMemory()
	st, err := m.Open("L")
	if err != nil {
		t.Fatal(err)
	}
	st.Checkpoint([]byte(`{"type":"hello"}`), []byte(`{"type":"snapshot"}`))
	return m, st
}

func follow(t *testing.T, m *Memory, after uint64, s *sink) Subscription {
	t.Helper()
	sub, err := m.Follow("L", after, s)
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

// Every follower gets the very same bytes: the frame is encoded once for all of them.
func TestMemoryEncodesEachFrameOnceForAllFollowers(t *testing.T) {
	m, st := openTopic(t)
	a, b := &sink{cap: 100}, &sink{cap: 100}
	follow(t, m, 0, a)
	follow(t, m, 0, b)
	a.take()
	b.take()
	for i := range 5 {
		if n := st.Publish(frame(i)); n != uint64(i+1) {
			t.Fatalf("publish %d got number %d", i, n)
		}
	}
	fa, fb := a.take(), b.take()
	for i := range fa {
		if &fa[i][0] != &fb[i][0] {
			t.Fatalf("frame %d was encoded twice", i)
		}
		if s := decode(t, fa[i]); s.Seq != uint64(i+1) || s.N != i {
			t.Fatalf("frame %d: %s", i, fa[i])
		}
	}
}

// A new follower starts from the checkpoint, stamped with the number it stands for,
// then gets the log after it, then the live frames.
func TestMemoryNewFollowerGetsCheckpointThenLog(t *testing.T) {
	m, st := openTopic(t)
	for i := range 3 {
		st.Publish(frame(i))
	}
	st.Checkpoint([]byte(`{"type":"hello"}`), []byte(`{"type":"snapshot","n":3}`))
	st.Publish(frame(3))
	s := &sink{cap: 100}
	follow(t, m, 0, s)
	st.Publish(frame(4))
	var got []stamped
	for _, f := range s.take() {
		got = append(got, decode(t, f))
	}
	want := []stamped{{3, "hello", 0}, {3, "snapshot", 3}, {4, "events", 3}, {5, "events", 4}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
	if st.LogLen() != 2 {
		t.Fatalf("log %d frames after the checkpoint, want 2", st.LogLen())
	}
}

// A follower that comes back with the last number it saw gets exactly the frames after
// it when the log still has them, and the checkpoint when it does not.
func TestMemoryResumeAfterLastSeen(t *testing.T) {
	m, st := openTopic(t)
	for i := range 6 {
		st.Publish(frame(i))
	}
	cases := []struct {
		name  string
		after uint64
		want  []uint64
		first string
	}{
		{"in the log", 4, []uint64{5, 6}, "events"},
		{"up to date", 6, nil, ""},
		{"from scratch", 0, []uint64{0, 0, 1, 2, 3, 4, 5, 6}, "hello"},
		{"ahead of the stream", 99, []uint64{0, 0, 1, 2, 3, 4, 5, 6}, "hello"},
	}
	for _, c := range cases {
		s := &sink{cap: 100}
		sub := follow(t, m, c.after, s)
		var got []uint64
		fs := s.take()
		for _, f := range fs {
			got = append(got, decode(t, f).Seq)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) || (len(fs) > 0 && decode(t, fs[0]).Type != c.first) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
		sub.Cancel()
	}
	st.Checkpoint([]byte(`{"type":"hello"}`))
	st.Publish(frame(6))
	s := &sink{cap: 100}
	follow(t, m, 4, s) // 5 and 6 went into the old log: too far behind
	if fs := s.take(); len(fs) != 2 || decode(t, fs[0]).Type != "hello" || decode(t, fs[0]).Seq != 6 || decode(t, fs[1]).Seq != 7 {
		t.Fatalf("resume from before the checkpoint: %q", fs)
	}
}

// A follower that stops taking frames is dropped when its queue is full; the others
// get every frame and are never held up.
func TestMemorySlowFollowerIsDroppedOthersKeepEverything(t *testing.T) {
	m, st := openTopic(t)
	slow := &sink{cap: 5}
	fast := []*sink{{cap: 3}, {cap: 3}, {cap: 3}}
	follow(t, m, 0, slow)
	for _, f := range fast {
		follow(t, m, 0, f)
	}
	var got [3][]uint64
	for i := range 20 {
		for k, f := range fast {
			for _, fr := range f.take() {
				got[k] = append(got[k], decode(t, fr).Seq)
			}
		}
		st.Publish(frame(i))
	}
	if slow.closed != Slow {
		t.Fatalf("the slow follower was not dropped (closed %d)", slow.closed)
	}
	if st.Followers() != 3 {
		t.Fatalf("%d followers, want 3", st.Followers())
	}
	for k, f := range fast {
		for _, fr := range f.take() {
			got[k] = append(got[k], decode(t, fr).Seq)
		}
		want := []uint64{0, 0}
		for i := range 20 {
			want = append(want, uint64(i+1))
		}
		if fmt.Sprint(got[k]) != fmt.Sprint(want) || f.closed != 0 {
			t.Fatalf("follower %d got %v (closed %d)", k, got[k], f.closed)
		}
	}
}

// A follower whose queue cannot hold its catch-up is refused at once.
func TestMemoryFollowerTooSmallForItsCatchUp(t *testing.T) {
	m, st := openTopic(t)
	for i := range 10 {
		st.Publish(frame(i))
	}
	s := &sink{cap: 4}
	if _, err := m.Follow("L", 0, s); err != ErrBehind || s.closed != Slow {
		t.Fatalf("err %v, closed %d", err, s.closed)
	}
	if st.Followers() != 0 {
		t.Fatal("a refused follower was kept")
	}
}

// Closing the stream tells every follower after what was published; nobody joins after.
func TestMemoryCloseEndsEveryFollower(t *testing.T) {
	m, st := openTopic(t)
	a := &sink{cap: 10}
	follow(t, m, 0, a)
	st.Publish([]byte(`{"type":"lecture","state":"ended"}`))
	st.Close()
	if a.closed != Ended {
		t.Fatalf("closed %d, want Ended", a.closed)
	}
	if fs := a.take(); decode(t, fs[len(fs)-1]).Type != "lecture" {
		t.Fatalf("the last frame before the close: %s", fs[len(fs)-1])
	}
	if _, err := m.Follow("L", 0, &sink{cap: 10}); err == nil {
		t.Fatal("joined a closed stream")
	}
	if _, err := m.Open("L"); err != nil {
		t.Fatalf("the name was not freed: %v", err)
	}
}

// A cancelled follower gets nothing more and no Close.
func TestMemoryCancel(t *testing.T) {
	m, st := openTopic(t)
	a := &sink{cap: 10}
	sub := follow(t, m, 0, a)
	a.take()
	sub.Cancel()
	st.Publish(frame(1))
	st.Close()
	if len(a.take()) != 0 || a.closed != 0 {
		t.Fatal("a cancelled follower still heard from the stream")
	}
}

// Frames published from many goroutines get distinct numbers, and every follower sees
// them in number order without a gap.
func TestMemoryConcurrentPublishKeepsOrder(t *testing.T) {
	m, st := openTopic(t)
	const followers, writers, each = 8, 4, 200
	sinks := make([]*sink, followers)
	for i := range sinks {
		sinks[i] = &sink{cap: 10_000}
		follow(t, m, 0, sinks[i])
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				st.Publish(frame(w*each + i))
			}
		}()
	}
	wg.Wait()
	for k, s := range sinks {
		fs := s.take()[2:] // after the checkpoint
		if len(fs) != writers*each {
			t.Fatalf("follower %d got %d frames", k, len(fs))
		}
		for i, f := range fs {
			if decode(t, f).Seq != uint64(i+1) {
				t.Fatalf("follower %d: frame %d is %s", k, i, f)
			}
		}
	}
}

// BenchmarkFanOut publishes one events frame to n followers: the broker's own cost
// (one stamp, one queue offer per follower). Each follower only counts what it is
// offered, so the figure excludes the sockets; cmd/lectureload measures those.
func BenchmarkFanOut(b *testing.B) {
	for _, n := range []int{1, 50, 500} {
		b.Run(fmt.Sprintf("followers=%d", n), func(b *testing.B) {
			m := NewMemory()
			st, _ := m.Open("L")
			st.Checkpoint([]byte(`{"type":"hello"}`))
			counters := make([]*counter, n)
			for i := range counters {
				counters[i] = &counter{}
				if _, err := m.Follow("L", 0, counters[i]); err != nil {
					b.Fatal(err)
				}
			}
			// A typical events frame: one step of Ricart-Agrawala with 4 processes.
			f := []byte(`{"type":"events","step":12,"t":7,"seq":42,"horizon":12,"playing":true,"speed":1,"quiet":false,"interventions":2,"batches":[{"step":12,"t":7,"events":[{"seq":40,"t":7,"type":"deliver","node":2,"msg":{"id":9,"type":"REQUEST","from":1,"to":2,"ts":3}},{"seq":41,"t":7,"type":"rule","node":2,"rule":"RH1"},{"seq":42,"t":7,"type":"send","node":2,"msg":{"id":13,"type":"REPLY","from":2,"to":1,"ts":8}}],"nodes":[{"id":2,"alive":true,"cs":false,"token":false,"leader":-1,"group":0,"state":{"state":"RELEASED","clock":8,"ts":0,"replied":[],"deferred":[]}}],"arrive":{"13":9}}]}`)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				st.Publish(f)
				if st.LogLen() >= 128 {
					st.Checkpoint([]byte(`{"type":"hello"}`))
				}
			}
			b.StopTimer()
			for _, c := range counters {
				if c.n != b.N+1 {
					b.Fatalf("a follower was offered %d frames, want %d", c.n, b.N+1)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/delivery")
		})
	}
}

type counter struct{ n int }

func (c *counter) Send([]byte) bool { c.n++; return true }

func (c *counter) Close(Reason) {}
