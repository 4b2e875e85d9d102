package explore

import (
	"bytes"
	"hash/maphash"
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
	seed    maphash.Seed
	pages   [][]byte
	offs    paged[uint64] // page<<pageBits | position
	parents paged[uint32]
	table   []uint64 // hash's top 32 bits << 32 | state+1; 0 is empty
	mask    uint64
	shift   uint // a slot's home is the hash's top bits: tag >> shift
	count   int

	keepEdges bool
	edgeStart paged[uint32] // state -> first edge; edgeStart[k+1] ends state k's
	edges     paged[uint32]

	arenaBytes int64
}

// paged is an array that grows by whole pages: never copied, so a growing search
// leaves no old copies behind for the collector (a slice doubling would, for a while,
// hold both).
type paged[T uint32 | uint64] struct {
	pages [][]T
	n     int
}

const itemBits = 18 // items per page: 256 Ki

func (p *paged[T]) append(v T) {
	if p.n&(1<<itemBits-1) == 0 {
		size := 1 << itemBits
		if p.n == 0 {
			size = 1 << 10 // small searches stay small
		}
		p.pages = append(p.pages, make([]T, 0, size))
	}
	last := len(p.pages) - 1
	if len(p.pages[last]) == cap(p.pages[last]) {
		// Only the first page starts small; it doubles up to a full page.
		grown := make([]T, len(p.pages[last]), min(2*cap(p.pages[last]), 1<<itemBits))
		copy(grown, p.pages[last])
		p.pages[last] = grown
	}
	p.pages[last] = append(p.pages[last], v)
	p.n++
}

func (p *paged[T]) at(i int) T { return p.pages[i>>itemBits][i&(1<<itemBits-1)] }

func (p *paged[T]) len() int { return p.n }

func (p *paged[T]) bytes() int64 {
	var b int64
	for _, pg := range p.pages {
		b += int64(cap(pg))
	}
	var zero T
	switch any(zero).(type) {
	case uint64:
		return b * 8
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
	st.table = make([]uint64, 1<<12)
	st.mask = uint64(len(st.table) - 1)
	st.shift = 32 - 12
	return st
}

func (st *store) key(k int) []byte {
	off := st.offs.at(k)
	p := st.pages[off>>pageBits][off&(pageSize-1):]
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
	tag := h >> 32
	i := tag >> st.shift
	for {
		slot := st.table[i]
		if slot == 0 {
			break
		}
		if slot>>32 == tag {
			k := uint32(slot) - 1
			if bytes.Equal(st.key(int(k)), key) {
				return k, false
			}
		}
		i = (i + 1) & st.mask
	}
	k := uint32(st.count)
	st.count++
	st.table[i] = tag<<32 | uint64(k+1)
	st.offs.append(st.put(key))
	st.parents.append(parent)
	if uint64(st.count)*4 > uint64(len(st.table))*3 {
		st.grow()
	}
	return k, true
}

// lookup returns key's state number, if it is stored.
func (st *store) lookup(key []byte) (uint32, bool) {
	h := maphash.Bytes(st.seed, key)
	tag := h >> 32
	for i := tag >> st.shift; st.table[i] != 0; i = (i + 1) & st.mask {
		if slot := st.table[i]; slot>>32 == tag && bytes.Equal(st.key(int(uint32(slot)-1)), key) {
			return uint32(slot) - 1, true
		}
	}
	return 0, false
}

func (st *store) put(key []byte) uint64 {
	need := len(key) + 2
	if len(st.pages) == 0 || len(st.pages[len(st.pages)-1])+need > pageSize {
		size := pageSize
		if len(st.pages) == 0 {
			size = 64 << 10 // small searches stay small
		}
		st.pages = append(st.pages, make([]byte, 0, size))
	}
	last := len(st.pages) - 1
	p := st.pages[last]
	if len(p)+need > cap(p) {
		// The first page grows to a full one before a second is started.
		np := make([]byte, len(p), pageSize)
		copy(np, p)
		p = np
	}
	off := uint64(last)<<pageBits | uint64(len(p))
	p = append(p, byte(len(key)), byte(len(key)>>8))
	p = append(p, key...)
	st.arenaBytes += int64(len(p) - len(st.pages[last]))
	st.pages[last] = p
	return off
}

func (st *store) grow() {
	old := st.table
	st.table = make([]uint64, 2*len(old))
	st.mask = uint64(len(st.table) - 1)
	if st.shift == 0 {
		panic("explore: the visited set outgrew its 32-bit tags") // 4 billion slots: beyond any memory bound
	}
	st.shift--
	// The home of a slot is the top bits of the hash, which the slot keeps (its tag):
	// growing never reads a key again.
	for _, slot := range old {
		if slot == 0 {
			continue
		}
		i := slot >> 32 >> st.shift
		for st.table[i] != 0 {
			i = (i + 1) & st.mask
		}
		st.table[i] = slot
	}
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
	return st.offs.bytes() + st.parents.bytes() + int64(len(st.table))*8 +
		st.edgeStart.bytes() + st.edges.bytes()
}

// memory is everything the store holds, and what its next growth will take: the
// table doubles in one allocation while the old one is still being read, so a
// search stopped just under the bound would otherwise pass it by twice the table.
func (st *store) memory() int64 {
	var pages int64
	for _, p := range st.pages {
		pages += int64(cap(p))
	}
	return pages + st.overhead() + int64(len(st.table))*8*2
}
