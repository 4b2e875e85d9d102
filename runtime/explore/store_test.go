package explore

import (
	"sync"
	"sync/atomic"
	"testing"
)

// A pair set's table grows by counts alone: narrow tables a quarter larger at three
// quarters full, the wide table at narrowPairs words, then the doublings and the
// split. Two sets given different words, the same number of them, have the same
// sizes at every step, and every word keeps its number and is found across each
// growth.
func TestPairSetGrowsByCounts(t *testing.T) {
	for _, c := range []struct {
		name string
		n    int
		word func(k int) uint64 // distinct for distinct k
	}{
		{"narrow words", 12_000, func(k int) uint64 { return pairOf(uint32(k%97), uint32(k/97)) }},
		{"wide words", 12_000, func(k int) uint64 { return pairOf(uint32(k)*7919+1<<20, uint32(k)) }},
		{"narrow then wide words", 40_000, func(k int) uint64 { return pairOf(uint32(k/3), uint32(k%3)) }},
		{"through the split", 120_000, func(k int) uint64 { return uint64(k)*0x9E3779B97F4A7C15 | 1 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			ps, ref := newPairSet(), newPairSet()
			other := func(k int) uint64 { return uint64(k)<<32 | 5 }
			for k := range c.n {
				v := c.word(k)
				if idx, isNew := ps.insert(v, pairHash(v)); !isNew || int(idx) != k {
					t.Fatalf("word %d: number %d, new %v", k, idx, isNew)
				}
				ref.insert(other(k), pairHash(other(k)))
				if ps.tableBytes() != ref.tableBytes() || ps.growBytes() != ref.growBytes() {
					t.Fatalf("after %d words: table %d B (next growth %d), with other words %d (%d)",
						k+1, ps.tableBytes(), ps.growBytes(), ref.tableBytes(), ref.growBytes())
				}
				if narrow := ps.dir.Load().narrow != nil; narrow != (k+1 < narrowPairs) {
					t.Fatalf("after %d words: narrow %v", k+1, narrow)
				}
				// Every table's load stays at most three quarters (the narrow one's
				// at least three fifths once it grew).
				if load := float64(k+1) * float64(ps.slotBytes()) / float64(ps.tableBytes()); load > 0.75 || k+1 > 1000 && k+1 < narrowPairs && load < 0.59 {
					t.Fatalf("after %d words: load %.2f", k+1, load)
				}
				if k%997 == 0 || k == c.n-1 {
					for j := 0; j <= k; j += 1 + k/50 {
						if idx, ok := ps.lookup(c.word(j), pairHash(c.word(j))); !ok || int(idx) != j || ps.at(idx) != c.word(j) {
							t.Fatalf("after %d words, word %d: lookup %d %v", k+1, j, idx, ok)
						}
					}
				}
			}
			for k := range c.n {
				if idx, isNew := ps.insert(c.word(k), pairHash(c.word(k))); isNew || int(idx) != k {
					t.Fatalf("word %d inserted again: %d %v", k, idx, isNew)
				}
			}
			if v := pairOf(1<<30, 3); true {
				if _, ok := ps.lookup(v, pairHash(v)); ok {
					t.Fatal("a word never inserted is found")
				}
			}
		})
	}
}

func (ps *pairSet) slotBytes() int64 {
	if ps.dir.Load().narrow != nil {
		return 2
	}
	return 4
}

// The words array stays narrow while every word's numbers are below 2^16 and they fit
// a page; it widens at the first that does not, or at the page's end. Every word
// reads back across each change, and the sizes depend on the count alone.
func TestWordsNarrowThenWide(t *testing.T) {
	for _, c := range []struct {
		name    string
		n       int
		wideAt  int // the count at which it widens (-1: never)
		word    func(k int) uint64
		maxSize int64 // bytes it may take at most for n words
	}{
		{"narrow", 5000, -1, func(k int) uint64 { return pairOf(uint32(k), 0xffff) }, 5000 * 4 * 5 / 4},
		{"a wide word", 5000, 3000, func(k int) uint64 {
			if k == 3000 {
				return pairOf(1<<16, 0)
			}
			return pairOf(uint32(k), 1)
		}, 5000 * 8 * 5 / 4},
		{"a full page", 1<<itemBits + 100, 1 << itemBits, func(k int) uint64 { return pairOf(uint32(k&0xffff), uint32(k>>16)) }, 2 << itemBits * 8},
	} {
		t.Run(c.name, func(t *testing.T) {
			var w, ref words
			w.init()
			ref.init()
			for k := range c.n {
				w.append(c.word(k))
				ref.append(uint64(k % 3))
				if narrow := w.dir.Load().narrow != nil; narrow != (c.wideAt < 0 || k < c.wideAt) {
					t.Fatalf("after %d words: narrow %v", k+1, narrow)
				}
				if c.wideAt < 0 && w.bytes() != ref.bytes() {
					t.Fatalf("after %d words: %d B, other narrow words %d B", k+1, w.bytes(), ref.bytes())
				}
				if k%1001 == 0 || k == c.wideAt {
					for j := 0; j <= k; j += 1 + k/40 {
						if got := w.at(j); got != c.word(j) {
							t.Fatalf("after %d words, word %d reads %x, not %x", k+1, j, got, c.word(j))
						}
					}
				}
			}
			for k := range c.n {
				if got := w.at(k); got != c.word(k) {
					t.Fatalf("word %d reads %x, not %x", k, got, c.word(k))
				}
			}
			if w.bytes() > c.maxSize {
				t.Fatalf("%d words take %d B, more than %d", c.n, w.bytes(), c.maxSize)
			}
		})
	}
}

// The first page of a paged array grows by a quarter from firstItems, then doubles
// from a sixteenth of a page; items read back across each copy.
func TestPagedFirstPageGrows(t *testing.T) {
	var p paged[uint32]
	want := int64(0)
	for k := range 1<<itemBits + 10 {
		p.append(uint32(k) * 3)
		if k == 0 {
			want = firstItems * 4
		} else if k*4 == int(want) && k < 1<<itemBits {
			n := want / 4
			if n < 1<<itemBits/16 {
				want = (n + max(n/4, firstItems/4)) * 4
			} else {
				want = min(2*n, 1<<itemBits) * 4
			}
		} else if k == 1<<itemBits {
			want += 1 << itemBits * 4
		}
		if p.bytes() != want {
			t.Fatalf("after %d items: %d B, want %d", k+1, p.bytes(), want)
		}
	}
	for k := range p.len() {
		if p.at(k) != uint32(k)*3 {
			t.Fatalf("item %d reads %d", k, p.at(k))
		}
	}
}

// Readers on other goroutines look words up while one goroutine inserts them, through
// the narrow tables' growth, the widening, the wide table's doublings and the split:
// every word whose number they have seen published is found, with its number.
func TestPairSetReadersDuringGrowth(t *testing.T) {
	ps := newPairSet()
	const n = 100_000
	word := func(k int) uint64 { return pairOf(uint32(k/5), uint32(k%5)+uint32(k/60_000)<<17) }
	var published atomic.Int64
	var wg sync.WaitGroup
	for r := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				done := published.Load()
				if done == n {
					return
				}
				if done == 0 {
					continue
				}
				k := int((int64(i)*7919 + int64(r)) % done)
				idx, ok := ps.lookup(word(k), pairHash(word(k)))
				if !ok || int(idx) != k || ps.at(idx) != word(k) {
					t.Errorf("word %d (of %d published): lookup %d %v", k, done, idx, ok)
					return
				}
			}
		}()
	}
	for k := range n {
		ps.insert(word(k), pairHash(word(k)))
		published.Store(int64(k + 1))
	}
	wg.Wait()
}
