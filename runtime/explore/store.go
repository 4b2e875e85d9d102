package explore

import (
	"bytes"
	"hash/maphash"
	"slices"
	"sync/atomic"
)

// store is the visited set: every state's key in an append-only arena, an
// open-addressing table from a 64-bit hash to the state's number (a slot keeps the
// hash's top 32 bits, whose top bits are also its home, so the table grows without
// rehashing; keys compared in full when those bits match), and a parent pointer per state. States are numbered in
// the order found, which is breadth-first order, so the store is also the search's
// queue: nothing else holds states.
//
// Per state it costs 12 bytes (offset and parent), 10.7 to 21.3 in the table (kept
// between three eighths and three quarters full), and, when edges are kept for the
// liveness check, 4 for the first edge and 4 per transition; plus the key itself in
// the arena.
type store struct {
	seed  maphash.Seed
	pages paged[byte]   // the arena: pages of pageSize bytes, each filled up to fill
	page  int           // the page being filled
	fill  int           // bytes used of it
	offs  paged[uint64] // page<<pageBits | position
	// parents, edgeStart and edges are only read once the search is over.
	parents paged[uint32]
	table   atomic.Pointer[table]
	count   int

	keepEdges bool
	edgeStart paged[uint32] // state -> first edge; edgeStart[k+1] ends state k's
	edges     paged[uint32]

	arenaBytes int64
}

// The workers of a parallel search read the store (a state's key, lookup) while the
// merge writes it (parallel.go). So nothing a reader may follow is ever changed in
// place: a table slot goes from empty to its final value by one atomic store; the
// table grows into a new one, published whole; pages never move, and the list of
// pages is replaced, not appended to. A reader that has learnt a state's number
// through the table's atomics, or from before its level began, finds its key.
type table struct {
	slots []uint64 // hash's top 32 bits << 32 | state+1; 0 is empty
	mask  uint64
	shift uint // a slot's home is the hash's top bits: tag >> shift
}

// paged is an array that grows by whole pages: never copied (but for the first,
// small page), so a growing search leaves no old copies behind for the collector (a
// slice doubling would, for a while, hold both), and a reader on another goroutine
// may read an item while the array grows (see store).
type paged[T uint32 | uint64 | byte] struct {
	dir atomic.Pointer[[][]T] // every page at its full length
	n   int
}

const itemBits = 18 // items per page: 256 Ki

func (p *paged[T]) append(v T) {
	if d := p.dir.Load(); d != nil {
		if pg, off := p.n>>itemBits, p.n&(1<<itemBits-1); pg < len(*d) && off < len((*d)[pg]) {
			(*d)[pg][off] = v
			p.n++
			return
		}
	}
	p.grow(p.n, 1, 1<<itemBits, 1<<10)
	(*p.dir.Load())[p.n>>itemBits][p.n&(1<<itemBits-1)] = v
	p.n++
}

// grow makes room for need more items at position at, in pages of size items, the
// first starting at first items and doubling (by a copy) until it is a full page.
func (p *paged[T]) grow(at, need, size, first int) {
	dp := p.dir.Load()
	var d [][]T
	if dp != nil {
		d = *dp
	}
	page := at / size
	if page < len(d) && at%size+need <= len(d[page]) {
		return
	}
	nd := slices.Clone(d)
	switch {
	case page >= len(d) && page == 0:
		nd = append(nd, make([]T, min(max(first, need), size)))
	case page >= len(d):
		nd = append(nd, make([]T, size))
	default:
		// Only the first page starts small; it doubles up to a full page.
		l := len(d[page])
		for l < at%size+need {
			l *= 2
		}
		grown := make([]T, min(l, size))
		copy(grown, d[page])
		nd[page] = grown
	}
	p.dir.Store(&nd)
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

const (
	pageBits = 22
	pageSize = 1 << pageBits
	noParent = ^uint32(0)
)

func newStore(keepEdges bool) *store {
	st := &store{seed: maphash.MakeSeed(), keepEdges: keepEdges}
	st.table.Store(&table{slots: make([]uint64, 1<<12), mask: 1<<12 - 1, shift: 32 - 12})
	return st
}

func (st *store) key(k int) []byte {
	off := st.offs.at(k)
	p := (*st.pages.dir.Load())[off>>pageBits][off&(pageSize-1):]
	n := int(p[0]) | int(p[1])<<8
	return p[2 : 2+n]
}

// MaxKey bounds a state's key (its length is stored in two bytes).
const MaxKey = 1<<16 - 1

// insert adds key (as a successor of parent) unless it is there; it returns the
// state's number and whether it is new. The key must be at most MaxKey bytes.
func (st *store) insert(key []byte, parent uint32) (uint32, bool) {
	return st.insertHashed(key, maphash.Bytes(st.seed, key), parent)
}

// insertHashed is insert with the key's hash (maphash.Bytes with st.seed) already
// worked out, as the workers of a parallel search do.
func (st *store) insertHashed(key []byte, h uint64, parent uint32) (uint32, bool) {
	t := st.table.Load()
	tag := h >> 32
	i := tag >> t.shift
	for {
		slot := t.slots[i] // only this goroutine writes: no atomic load needed
		if slot == 0 {
			break
		}
		if slot>>32 == tag {
			k := uint32(slot) - 1
			if bytes.Equal(st.key(int(k)), key) {
				return k, false
			}
		}
		i = (i + 1) & t.mask
	}
	k := uint32(st.count)
	st.count++
	st.offs.append(st.put(key))
	st.parents.append(parent)
	atomic.StoreUint64(&t.slots[i], tag<<32|uint64(k+1)) // after the key: a reader may follow it
	if uint64(st.count)*4 > uint64(len(t.slots))*3 {
		st.grow()
	}
	return k, true
}

// lookup returns key's state number, if it is stored. It may run while another
// goroutine inserts.
func (st *store) lookup(key []byte) (uint32, bool) {
	h := maphash.Bytes(st.seed, key)
	tag := h >> 32
	t := st.table.Load()
	for i := tag >> t.shift; ; i = (i + 1) & t.mask {
		slot := atomic.LoadUint64(&t.slots[i])
		if slot == 0 {
			return 0, false
		}
		if slot>>32 == tag && bytes.Equal(st.key(int(uint32(slot)-1)), key) {
			return uint32(slot) - 1, true
		}
	}
}

func (st *store) put(key []byte) uint64 {
	need := len(key) + 2
	if st.fill+need > pageSize {
		st.page, st.fill = st.page+1, 0 // a new page
	}
	st.pages.n = st.page*pageSize + st.fill
	// The first page starts at 64 KiB (small searches stay small) and doubles.
	st.pages.grow(st.pages.n, need, pageSize, 64<<10)
	st.arenaBytes += int64(need)
	page := st.page
	off := uint64(page)<<pageBits | uint64(st.fill)
	p := (*st.pages.dir.Load())[page][st.fill:]
	p[0], p[1] = byte(len(key)), byte(len(key)>>8)
	copy(p[2:], key)
	st.fill += need
	st.pages.n += need
	return off
}

func (st *store) grow() {
	old := st.table.Load()
	if old.shift == 0 {
		panic("explore: the visited set outgrew its 32-bit tags") // 4 billion slots: beyond any memory bound
	}
	t := &table{slots: make([]uint64, 2*len(old.slots)), shift: old.shift - 1}
	t.mask = uint64(len(t.slots) - 1)
	// The home of a slot is the top bits of the hash, which the slot keeps (its tag):
	// growing never reads a key again.
	for _, slot := range old.slots {
		if slot == 0 {
			continue
		}
		i := slot >> 32 >> t.shift
		for t.slots[i] != 0 {
			i = (i + 1) & t.mask
		}
		t.slots[i] = slot
	}
	st.table.Store(t) // readers still on the old table find every state they may ask for
}

// startEdges marks where state k's edges begin (states are expanded in order).
func (st *store) startEdges(k int) {
	if st.keepEdges && st.edgeStart.len() == k {
		st.edgeStart.append(uint32(st.edges.len()))
	}
}

func (st *store) addEdge(to uint32) {
	if st.keepEdges {
		st.edges.append(to)
	}
}

// succ returns where state k's successors are in edges (valid once k+1 was started or
// the search ended): edge(i) for lo <= i < hi.
func (st *store) succ(k int) (lo, hi int) {
	hi = st.edges.len()
	if k+1 < st.edgeStart.len() {
		hi = int(st.edgeStart.at(k + 1))
	}
	return int(st.edgeStart.at(k)), hi
}

func (st *store) edge(i int) uint32 { return st.edges.at(i) }

func (st *store) parent(k uint32) uint32 { return st.parents.at(int(k)) }

// overhead is the memory the store takes besides the keys, as allocated.
func (st *store) overhead() int64 {
	return st.offs.bytes() + st.parents.bytes() + int64(len(st.table.Load().slots))*8 +
		st.edgeStart.bytes() + st.edges.bytes()
}

// memory is everything the store holds, and what its next growth will take: the
// table doubles in one allocation while the old one is still being read, so a
// search stopped just under the bound would otherwise pass it by twice the table.
func (st *store) memory() int64 {
	return st.pages.bytes() + st.overhead() + int64(len(st.table.Load().slots))*8*2
}
