package explore

import (
	"bytes"
	"hash/maphash"
	"slices"
	"sync/atomic"
)

// byteSet interns byte strings (the parts of states, tree.go): each in an
// append-only arena, found through an open-addressing table from a 64-bit hash to its
// number (a slot keeps the hash's top 32 bits, whose top bits are also its segment
// and home, so the table grows without rehashing; strings compared in full when
// those bits match). The table is cut into segments that double one at a time
// (segments.go). Numbers are given in the order strings are first inserted.
type byteSet struct {
	seed   maphash.Seed
	pages  paged[byte]   // the arena: pages of pageSize bytes, each filled up to fill
	page   int           // the page being filled
	fill   int           // bytes used of it
	offs   paged[uint64] // page<<pageBits | position
	dir    atomic.Pointer[bdir]
	perSeg [segments]int // strings per segment
	plan   segPlan
	count  int

	arenaBytes int64
}

// The workers of a parallel search read the store (a state's parts, lookups) while
// the merge writes it (parallel.go). So nothing a reader may follow is ever changed
// in place: a table slot goes from empty to its final value by one atomic store; a
// table grows into a new one, published whole; pages never move, and the list of
// pages is replaced, not appended to. A reader that has learnt a number through a
// table's atomics, or from before its level began, finds what it numbers.
type table struct {
	slots []uint64 // hash's top 32 bits << 32 | number+1; 0 is empty
	mask  uint64
	shift uint // a slot's home in its segment is the tag's next bits (bdir.place)
}

// bdir is a byteSet's segments, replaced whole when one changes (readers may hold
// the old one: it still finds every string they may ask for).
type bdir struct {
	segShift uint // top bits of a tag that choose the segment (0: one segment)
	segs     [segments]*table
}

// place returns the segment of a string whose tag (its hash's top 32 bits) is tag,
// its table and its home there.
func (d *bdir) place(tag uint64) (int, *table, uint64) {
	seg := int(tag >> (32 - d.segShift)) // a tag has 32 bits: a shift by 32 gives 0
	t := d.segs[seg]
	return seg, t, tag << d.segShift & (1<<32 - 1) >> t.shift
}

// rehash places t's slots in d (counting them per segment in per, if not nil).
func (d *bdir) rehash(t *table, per *[segments]int) {
	if per != nil {
		clear(per[:])
	}
	for _, slot := range t.slots {
		if slot == 0 {
			continue
		}
		seg, nt, i := d.place(slot >> 32)
		for nt.slots[i] != 0 {
			i = (i + 1) & nt.mask
		}
		nt.slots[i] = slot
		if per != nil {
			per[seg]++
		}
	}
}

// paged is an array that grows by whole pages: never copied (but for the first,
// small page), so a growing search leaves no old copies behind for the collector (a
// slice doubling would, for a while, hold both), and a reader on another goroutine
// may read an item while the array grows (see store). The first page starts at
// firstItems (a search of a few thousand states holds little) and grows (nextFirst)
// until it is a full page: its sizes depend only on the number of items.
type paged[T uint32 | uint64 | byte] struct {
	dir atomic.Pointer[[][]T] // every page at its full length
	n   int
}

const (
	itemBits   = 18 // items per page: 256 Ki
	firstItems = 64 // the first page's first size
)

func (p *paged[T]) append(v T) {
	if d := p.dir.Load(); d != nil {
		if pg, off := p.n>>itemBits, p.n&(1<<itemBits-1); pg < len(*d) && off < len((*d)[pg]) {
			(*d)[pg][off] = v
			p.n++
			return
		}
	}
	p.grow(p.n, 1, 1<<itemBits, firstItems)
	(*p.dir.Load())[p.n>>itemBits][p.n&(1<<itemBits-1)] = v
	p.n++
}

// grow makes room for need more items at position at, in pages of size items, the
// first starting at first items and growing (a copy, nextFirst) until it is a full
// page.
func (p *paged[T]) grow(at, need, size, first int) {
	var d [][]T
	if dp := p.dir.Load(); dp != nil {
		d = *dp
	}
	if nd := grownPages(d, at, need, size, first); nd != nil {
		p.dir.Store(&nd)
	}
}

// nextFirst is the size a first page of l items grows to: a quarter more while it is
// under a sixteenth of a page (a small search holds little more than it uses), then
// twice (a large one copies it no more than when it doubled from the start).
func nextFirst(l, first, size int) int {
	if l < size/16 {
		return min(l+max(l/4, first/4), size)
	}
	return min(2*l, size)
}

// grownPages is pages d with room for need more items at position at (see
// paged.grow), or nil when d has it.
func grownPages[T uint32 | uint64 | byte](d [][]T, at, need, size, first int) [][]T {
	page := at / size
	if page < len(d) && at%size+need <= len(d[page]) {
		return nil
	}
	nd := slices.Clone(d)
	switch {
	case page >= len(d) && page == 0:
		nd = append(nd, make([]T, min(max(first, need), size)))
	case page >= len(d):
		nd = append(nd, make([]T, size))
	default:
		// Only the first page starts small; it grows up to a full page.
		l := len(d[page])
		for l < at%size+need {
			l = nextFirst(l, first, size)
		}
		grown := make([]T, l)
		copy(grown, d[page])
		nd[page] = grown
	}
	return nd
}

func (p *paged[T]) at(i int) T { return (*p.dir.Load())[i>>itemBits][i&(1<<itemBits-1)] }

func (p *paged[T]) len() int { return p.n }

func (p *paged[T]) bytes() int64 {
	var b int64
	if d := p.dir.Load(); d != nil {
		for _, pg := range *d {
			b += int64(len(pg))
		}
	}
	var zero T
	switch any(zero).(type) {
	case uint64:
		return b * 8
	case byte:
		return b
	}
	return b * 4
}

// words is the array of a pairSet's words (pairs of numbers, pairOf). While every
// word's two numbers are below 2^16 and the words fit a page, each is kept in 4 bytes
// (a narrow array, which grows as paged's first page does); the first word that does
// not fit, or the page filling, widens them all into pages of 8-byte words (a copy),
// which it stays. When that happens depends only on the words, which are the same
// for any number of workers. Like paged, its directory is replaced whole when it
// grows or widens, so a reader that learnt a number through a table's atomics after
// the word was appended finds it in whichever directory it loads.
type words struct {
	dir atomic.Pointer[wdir]
	n   int
}

type wdir struct {
	narrow []uint32 // the words, 16 bits a number, while not nil
	pages  [][]uint64
}

// init makes w an empty narrow array.
func (w *words) init() { w.dir.Store(&wdir{narrow: []uint32{}}) }

func narrowWord(v uint64) bool { return v&^(0xffff<<32|0xffff) == 0 }

func (w *words) at(i int) uint64 {
	d := w.dir.Load()
	if d.narrow != nil {
		x := d.narrow[i]
		return uint64(x>>16)<<32 | uint64(x&0xffff)
	}
	return d.pages[i>>itemBits][i&(1<<itemBits-1)]
}

func (w *words) append(v uint64) {
	d := w.dir.Load()
	if d.narrow != nil {
		if narrowWord(v) && w.n < 1<<itemBits {
			a := d.narrow
			if w.n == len(a) {
				a = make([]uint32, nextFirst(len(a), firstItems, 1<<itemBits))
				copy(a, d.narrow)
				w.dir.Store(&wdir{narrow: a})
			}
			a[w.n] = uint32(v>>32)<<16 | uint32(v&0xffff)
			w.n++
			return
		}
		d = w.widen(d.narrow)
	}
	if pg, off := w.n>>itemBits, w.n&(1<<itemBits-1); pg >= len(d.pages) || off >= len(d.pages[pg]) {
		d = &wdir{pages: grownPages(d.pages, w.n, 1, 1<<itemBits, firstItems)}
		w.dir.Store(d)
	}
	d.pages[w.n>>itemBits][w.n&(1<<itemBits-1)] = v
	w.n++
}

// widen copies the narrow words into a first page of the size after theirs.
func (w *words) widen(a []uint32) *wdir {
	pg := make([]uint64, nextFirst(max(w.n, firstItems), firstItems, 1<<itemBits))
	for i, x := range a[:w.n] {
		pg[i] = uint64(x>>16)<<32 | uint64(x&0xffff)
	}
	d := &wdir{pages: [][]uint64{pg}}
	w.dir.Store(d)
	return d
}

func (w *words) bytes() int64 {
	d := w.dir.Load()
	b := int64(len(d.narrow)) * 4
	for _, pg := range d.pages {
		b += int64(len(pg)) * 8
	}
	return b
}

const (
	pageBits   = 22
	pageSize   = 1 << pageBits
	firstArena = 1 << 10
	noParent   = ^uint32(0)
)

func newByteSet() *byteSet {
	bs := &byteSet{seed: maphash.MakeSeed(), plan: newSegPlan(1 << firstLeafBits)}
	bs.dir.Store(&bdir{segs: [segments]*table{newTable(firstLeafBits)}})
	return bs
}

// firstLeafBits is a new byteSet's size: 64 slots (searches hold a few hundred parts
// to a few hundred thousand).
const firstLeafBits = 6

func newTable(bits uint) *table {
	return &table{slots: make([]uint64, 1<<bits), mask: 1<<bits - 1, shift: 32 - bits}
}

func (bs *byteSet) hash(b []byte) uint64 { return maphash.Bytes(bs.seed, b) }

// get returns string k.
func (bs *byteSet) get(k uint32) []byte {
	off := bs.offs.at(int(k))
	p := (*bs.pages.dir.Load())[off>>pageBits][off&(pageSize-1):]
	n := int(p[0]) | int(p[1])<<8
	return p[2 : 2+n]
}

// MaxKey bounds a part of a state (its length is stored in two bytes).
const MaxKey = 1<<16 - 1

// insert adds b, whose hash is h, unless it is there; it returns its number and
// whether it is new. b must be at most MaxKey bytes. Only one goroutine inserts.
func (bs *byteSet) insert(b []byte, h uint64) (uint32, bool) {
	tag := h >> 32
	seg, t, i := bs.dir.Load().place(tag)
	for {
		slot := t.slots[i] // only this goroutine writes: no atomic load needed
		if slot == 0 {
			break
		}
		if slot>>32 == tag {
			k := uint32(slot) - 1
			if bytes.Equal(bs.get(k), b) {
				return k, false
			}
		}
		i = (i + 1) & t.mask
	}
	k := uint32(bs.count)
	bs.count++
	bs.perSeg[seg]++
	bs.offs.append(bs.put(b))
	atomic.StoreUint64(&t.slots[i], tag<<32|uint64(k+1)) // after the string: a reader may follow it
	bs.plan.after(bs.count, seg, bs.perSeg[seg], bs.grow, bs.split)
	return k, true
}

// lookup returns b's number, if it is stored (h is its hash). It may run while
// another goroutine inserts.
func (bs *byteSet) lookup(b []byte, h uint64) (uint32, bool) {
	_, t, i := bs.dir.Load().place(h >> 32)
	tag := h >> 32
	for ; ; i = (i + 1) & t.mask {
		slot := atomic.LoadUint64(&t.slots[i])
		if slot == 0 {
			return 0, false
		}
		if slot>>32 == tag && bytes.Equal(bs.get(uint32(slot)-1), b) {
			return uint32(slot) - 1, true
		}
	}
}

func (bs *byteSet) put(b []byte) uint64 {
	need := len(b) + 2
	if bs.fill+need > pageSize {
		bs.page, bs.fill = bs.page+1, 0 // a new page
	}
	bs.pages.n = bs.page*pageSize + bs.fill
	// The first page starts at firstArena bytes (small searches stay small) and grows.
	bs.pages.grow(bs.pages.n, need, pageSize, firstArena)
	bs.arenaBytes += int64(need)
	page := bs.page
	off := uint64(page)<<pageBits | uint64(bs.fill)
	p := (*bs.pages.dir.Load())[page][bs.fill:]
	p[0], p[1] = byte(len(b)), byte(len(b)>>8)
	copy(p[2:], b)
	bs.fill += need
	bs.pages.n += need
	return off
}

// grow doubles a segment. The home of a slot is the top bits of the hash, which the
// slot keeps (its tag): growing never reads a string again.
func (bs *byteSet) grow(seg int) {
	old := bs.dir.Load()
	t := old.segs[seg]
	if t.shift == old.segShift {
		panic("explore: a table outgrew its 32-bit tags") // 4 billion slots: beyond any memory bound
	}
	d := *old
	d.segs[seg] = newTable(32 - t.shift + 1)
	d.rehash(t, nil)
	bs.dir.Store(&d) // readers still on the old table find every string they may ask for
}

// split cuts the one table into segments.
func (bs *byteSet) split() {
	old := bs.dir.Load()
	d := &bdir{segShift: segBits}
	for s := range d.segs {
		d.segs[s] = newTable(splitBits)
	}
	d.rehash(old.segs[0], &bs.perSeg)
	bs.dir.Store(d)
}

// held is what the set holds.
func (bs *byteSet) held() int64 { return bs.pages.bytes() + bs.offs.bytes() + bs.tableBytes() }

func (bs *byteSet) tableBytes() int64 { return int64(bs.plan.slots()) * 8 }

// growBytes is what the next doubling of a segment (or the split) allocates at most.
func (bs *byteSet) growBytes() int64 { return int64(bs.plan.largest()) * 8 }
