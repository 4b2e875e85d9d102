package session

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// The ring holds exactly the latest Recent events, byte for byte, whatever their
// sizes: compared with a plain list after every add, through wraps and growth.
func TestEventRingKeepsTheLatestEvents(t *testing.T) {
	for _, tc := range []struct {
		name     string
		min, max int // event sizes
		events   int
	}{
		{"one byte", 1, 1, 350},
		{"short", 40, 200, 2_000},
		{"mixed with long ones", 1, 3_000, 1_000},
		{"exactly the first buffer", ringStart, ringStart, 5},
		{"fewer than Recent", 10, 90, Recent / 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const seed = 7
			rng := rand.New(rand.NewPCG(seed, 0))
			var r eventRing
			var model [][]byte
			for i := range tc.events {
				ev := bytes.Repeat([]byte{byte('a' + i%26)}, tc.min+rng.IntN(tc.max-tc.min+1))
				ev = append(ev[:0:0], ev...)
				copy(ev, fmt.Sprintf("#%d", i)) // every event differs
				r.add(ev)
				model = append(model, ev)
				if len(model) > Recent {
					model = model[1:]
				}
				got := r.events()
				if len(got) != len(model) {
					t.Fatalf("seed %d, after event %d: %d events held, want %d", seed, i, len(got), len(model))
				}
				for k := range got {
					if !bytes.Equal(got[k], model[k]) {
						t.Fatalf("seed %d, after event %d: event %d is %.20q, want %.20q", seed, i, k, got[k], model[k])
					}
				}
			}
		})
	}
}

// Once full, the buffer stays as it is, near what the events need: a quarter to spare
// and the tail a wrap leaves unused.
func TestEventRingStaysCompact(t *testing.T) {
	var r eventRing
	ev := bytes.Repeat([]byte("x"), 150)
	buffers := map[*byte]bool{}
	for i := range 10_000 {
		r.add(ev)
		if i >= 2*Recent { // past filling up, the size is steady
			buffers[&r.buf[0]] = true
		}
	}
	if held := Recent * len(ev); len(r.buf) > 2*held {
		t.Fatalf("a buffer of %d bytes for %d bytes of events", len(r.buf), held)
	}
	if len(buffers) != 1 {
		t.Fatalf("with events of one size the buffer was replaced %d times after filling up", len(buffers)-1)
	}
	r.reset()
	if len(r.events()) != 0 {
		t.Fatal("reset kept events")
	}
}
