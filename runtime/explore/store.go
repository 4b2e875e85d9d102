package explore

import (
	"bytes"
	"hash/maphash"
)

// store is the visited set: every state's key in an append-only arena, an
// open-addressing table from a 64-bit hash to the state's number (keys compared in
// full when the hash matches), and a parent pointer per state. States are numbered in
// the order found, which is breadth-first order, so the store is also the search's
// queue: nothing else holds states.
//
// Per state it costs 12 bytes (offset and parent), 8 to 16 in the table (kept at
// most three quarters full), and, when edges are kept for the liveness check, 4 for
// the first edge and 4 per transition; plus the key itself in the arena.
type store struct {
	seed    maphash.Seed
	pages   [][]byte
	offs    []uint64 // page<<pageBits | position
	parents []uint32
	table   []uint64 // hash's top 32 bits << 32 | state+1; 0 is empty
	mask    uint64
	count   int

	keepEdges bool
	edgeStart []uint32 // state -> first edge; edgeStart[k+1] ends state k's
	edges     []uint32

	arenaBytes int64
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
	return st
}

func (st *store) key(k int) []byte {
	off := st.offs[k]
	p := st.pages[off>>pageBits][off&(pageSize-1):]
	n := int(p[0]) | int(p[1])<<8
	return p[2 : 2+n]
}

// MaxKey bounds a state's key (its length is stored in two bytes).
const MaxKey = 1<<16 - 1

// insert adds key (as a successor of parent) unless it is there; it returns the
// state's number and whether it is new. The key must be at most MaxKey bytes.
func (st *store) insert(key []byte, parent uint32) (uint32, bool) {
	h := maphash.Bytes(st.seed, key)
	tag := h >> 32
	i := h & st.mask
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
	st.offs = append(st.offs, st.put(key))
	st.parents = append(st.parents, parent)
	if uint64(st.count)*4 > uint64(len(st.table))*3 {
		st.grow()
	}
	return k, true
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
	for _, slot := range old {
		if slot == 0 {
			continue
		}
		h := maphash.Bytes(st.seed, st.key(int(uint32(slot)-1)))
		i := h & st.mask
		for st.table[i] != 0 {
			i = (i + 1) & st.mask
		}
		st.table[i] = slot
	}
}

// startEdges marks where state k's edges begin (states are expanded in order).
func (st *store) startEdges(k int) {
	if st.keepEdges && len(st.edgeStart) == k {
		st.edgeStart = append(st.edgeStart, uint32(len(st.edges)))
	}
}

func (st *store) addEdge(to uint32) {
	if st.keepEdges {
		st.edges = append(st.edges, to)
	}
}

// succ returns state k's successors (valid once k+1 was started or the search ended).
func (st *store) succ(k int) []uint32 {
	end := len(st.edges)
	if k+1 < len(st.edgeStart) {
		end = int(st.edgeStart[k+1])
	}
	return st.edges[st.edgeStart[k]:end]
}

// overhead is the memory the store takes besides the keys, as allocated.
func (st *store) overhead() int64 {
	return int64(cap(st.offs))*8 + int64(cap(st.parents))*4 + int64(len(st.table))*8 +
		int64(cap(st.edgeStart))*4 + int64(cap(st.edges))*4
}

// memory is everything the store holds.
func (st *store) memory() int64 {
	var pages int64
	for _, p := range st.pages {
		pages += int64(cap(p))
	}
	return pages + st.overhead()
}
