package lecture

import (
	"slices"
	"sync/atomic"
	"testing"
)

// Every follower is offered the frame exactly once, whether the fan-out runs on this
// goroutine alone or splits into shares, and the refusals come back in order.
func TestFanOutOffersEachFollowerOnce(t *testing.T) {
	tests := []struct {
		name   string
		n      int
		refuse func(i int) bool
	}{
		{"no followers", 0, func(int) bool { return false }},
		{"a small audience, sent here", 10, func(i int) bool { return i == 3 }},
		{"just under a share", fanOutShare - 1, func(i int) bool { return i%5 == 0 }},
		{"a few shares", 2*fanOutShare + 7, func(i int) bool { return i%7 == 0 }},
		{"5,000 followers", 5000, func(i int) bool { return i%97 == 1 || i == 4999 }},
		{"everyone refuses", 3 * fanOutShare, func(int) bool { return true }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			offered := make([]atomic.Int32, tt.n)
			got := FanOut(tt.n, func(i int) bool {
				offered[i].Add(1)
				return !tt.refuse(i)
			})
			var want []int
			for i := range tt.n {
				if n := offered[i].Load(); n != 1 {
					t.Fatalf("follower %d offered the frame %d times", i, n)
				}
				if tt.refuse(i) {
					want = append(want, i)
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("refused %v, want %v", got, want)
			}
		})
	}
}

// In an audience large enough to be sent in shares, the followers that refuse a frame
// are dropped and told why, each once, and every other one keeps every frame in order.
func TestMemoryLargeAudienceDropsOnlyTheSlow(t *testing.T) {
	m, st := openTopic(t)
	const n = 4*fanOutShare + 3
	sinks := make([]*sink, n)
	for i := range sinks {
		sinks[i] = &sink{cap: 1 << 10}
		if i%9 == 4 {
			sinks[i].cap = 3 // takes the catch-up and one frame more
		}
		follow(t, m, 0, sinks[i])
	}
	const frames = 5
	for i := range frames {
		st.Publish(frame(i))
	}
	kept := 0
	for i, s := range sinks {
		got := s.take()
		if i%9 == 4 {
			if s.closed != Slow {
				t.Fatalf("follower %d, too slow, closed %d, want Slow", i, s.closed)
			}
			continue
		}
		kept++
		if s.closed != 0 || len(got) != 2+frames {
			t.Fatalf("follower %d closed %d with %d frames, want open with %d", i, s.closed, len(got), 2+frames)
		}
		for k, fr := range got[2:] {
			if seq := decode(t, fr).Seq; seq != uint64(k+1) {
				t.Fatalf("follower %d: frame %d has number %d", i, k, seq)
			}
		}
	}
	if st.Followers() != kept {
		t.Fatalf("%d followers left, want %d", st.Followers(), kept)
	}
}
