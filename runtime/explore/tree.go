package explore

import (
	"bytes"
	"cmp"
	"slices"
	"strings"
	"sync/atomic"
)

// Tree compression: the visited set stores a state as a tree of interned parts, as
// LTSmin does. A state is cut into parts: its header (workload cursor, drop tokens,
// partition, time) and, for each process, that process's own view (its interned node
// state, alive, in the CS, waiting, leader, workload cursor), its armed timers and the
// messages it has in flight. Each part is interned once as a byte string (a leaf);
// two parts form a pair, interned as a 64-bit word, two pairs a pair of pairs, up to
// the root, which is the state. A step changes one process's part, and those of the
// processes it sends to: every other part, and every pair above only unchanged parts,
// is shared with the state it came from. So a new state costs its root (8 bytes), its
// slot in the table of roots (4 bytes at three eighths to three quarters full), for
// elections its parent (4 bytes; the edges give it otherwise) and the few pairs and
// parts that are new, which the states found later share in their turn. A search of
// a few thousand states keeps roots and pairs in 4 bytes and their slots in 2
// (pairSet, words).
//
// States are numbered in the order found, which is breadth-first order, so the roots
// are also the search's queue: a state is rebuilt from its root when its turn comes.
// Everything here is exact: two states are stored as one only when every part is the
// same.

// pairSet interns 64-bit words (pairs of numbers): vals holds them by number, and an
// open-addressing table of numbers finds them. A slot of 4 bytes holds number+1 and,
// in its top 4 bits, 4 bits of the word's hash, so that a probe reads the word
// (through vals, elsewhere in memory) only when those match: about once per lookup.
// Numbers are given in the order words are first inserted. Like byteSet it may be
// read by other goroutines while one inserts.
//
// The table is cut into segments that double one at a time (segments.go). Before,
// while the set holds fewer than narrowPairs words, the table is narrow: slots of 2
// bytes, two to a 32-bit word (number+1 in 14 bits, 2 bits of hash), in a table of
// any even size (a word's home is its hash's top 32 bits scaled to the size) that
// grows by a quarter when three quarters full: a search of a few thousand states
// holds its table at three fifths to three quarters full, not three eighths. The
// word that would not fit widens it to one table of 1<<wideBits slots of 4 bytes,
// which doubles and splits as a byteSet's does. Each change is a new table,
// published whole, at counts alone. The words themselves are narrow too while they
// can be (words).
type pairSet struct {
	vals   words
	dir    atomic.Pointer[pdir]
	perSeg [segments]int // words per segment
	plan   segPlan       // once wide
	count  int
}

// pdir is a pairSet's segments, replaced whole when one changes (readers may hold
// the old one: it still finds every word they may ask for).
type pdir struct {
	segShift uint    // top bits of a hash that choose the segment (0: one segment)
	narrow   *ptable // while narrow, the table (segs unused)
	segs     [segments]*ptable
}

type ptable struct {
	slots []uint32 // tag<<28 | number+1; 0 is empty (narrow: two slots a word, tag<<14 | number+1)
	mask  uint64
	shift uint   // a word's home in its segment is the hash's next bits: hash << segShift >> shift
	n     uint64 // narrow: the slots
}

func newPtable(bits uint) *ptable {
	return &ptable{slots: make([]uint32, 1<<bits), mask: 1<<bits - 1, shift: 64 - bits}
}

func newNarrow(n uint64) *ptable { return &ptable{slots: make([]uint32, n/2), n: n} }

// home is where a word whose hash is h starts its probe in a narrow table.
func (t *ptable) home(h uint64) uint64 { return h >> 32 * t.n >> 32 }

// slot16 reads narrow slot i; set16 writes it (only the inserting goroutine does, so
// the word's other slot, read plainly, is current).
func (t *ptable) slot16(i uint64) uint32 {
	return atomic.LoadUint32(&t.slots[i>>1]) >> (i & 1 * 16) & 0xffff
}

func (t *ptable) set16(i uint64, slot uint32) {
	w := &t.slots[i>>1]
	sh := i & 1 * 16
	atomic.StoreUint32(w, *w&^(0xffff<<sh)|slot<<sh)
}

// place returns the segment of a word whose hash is h, its table and its home there.
func (d *pdir) place(h uint64) (int, *ptable, uint64) {
	seg := int(h >> (64 - d.segShift)) // a shift by 64 gives 0: one segment
	t := d.segs[seg]
	return seg, t, h << d.segShift >> t.shift
}

// maxPairs is how many words a pairSet holds at most (numbers take 28 bits of a
// slot); the search stops at a bound before (search.limits).
const maxPairs = 1<<28 - 1

const (
	// narrowPairs is how many words a narrow table holds at most (number+1 in 14
	// bits); firstNarrow its first size, in slots.
	narrowPairs = 1<<14 - 1
	firstNarrow = 256
	// wideBits is the size of the table a narrow one widens into: at narrowPairs
	// words, half full.
	wideBits = 15
)

func slotTag(h uint64) uint32 { return uint32(h&15) << 28 }

func slotTag16(h uint64) uint32 { return uint32(h&3) << 14 }

func newPairSet() *pairSet {
	ps := &pairSet{}
	ps.vals.init()
	ps.dir.Store(&pdir{narrow: newNarrow(firstNarrow)})
	return ps
}

// pairHash mixes a word (MurmurHash3's finaliser): the table's segments and homes
// are its top bits.
func pairHash(v uint64) uint64 {
	v ^= v >> 33
	v *= 0xff51afd7ed558ccd
	v ^= v >> 33
	v *= 0xc4ceb9fe1a85ec53
	v ^= v >> 33
	return v
}

func pairOf(l, r uint32) uint64 { return uint64(l)<<32 | uint64(r) }

func (ps *pairSet) at(k uint32) uint64 { return ps.vals.at(int(k)) }

// lookup returns v's number, if it is stored. It may run while another goroutine
// inserts.
func (ps *pairSet) lookup(v, h uint64) (uint32, bool) {
	d := ps.dir.Load()
	if d.narrow != nil {
		k, _, ok := ps.find16(d.narrow, v, h)
		return k, ok
	}
	_, t, i := d.place(h)
	tag := slotTag(h)
	for ; ; i = (i + 1) & t.mask {
		slot := atomic.LoadUint32(&t.slots[i])
		if slot == 0 {
			return 0, false
		}
		if slot&^(1<<28-1) == tag && ps.vals.at(int(slot&(1<<28-1)-1)) == v {
			return slot&(1<<28-1) - 1, true
		}
	}
}

// find16 probes narrow table t for v: its number and true, or the empty slot that
// ends the probe.
func (ps *pairSet) find16(t *ptable, v, h uint64) (uint32, uint64, bool) {
	tag := slotTag16(h)
	for i := t.home(h); ; {
		slot := t.slot16(i)
		if slot == 0 {
			return 0, i, false
		}
		if slot&^(1<<14-1) == tag && ps.vals.at(int(slot&(1<<14-1)-1)) == v {
			return slot&(1<<14-1) - 1, i, true
		}
		if i++; i == t.n {
			i = 0
		}
	}
}

// insert adds v (whose hash is h) unless it is there, and returns its number and
// whether it is new. Only one goroutine inserts.
func (ps *pairSet) insert(v, h uint64) (uint32, bool) {
	d := ps.dir.Load()
	if t := d.narrow; t != nil {
		k, i, ok := ps.find16(t, v, h)
		if ok {
			return k, false
		}
		k = ps.add(v)
		t.set16(i, slotTag16(h)|(k+1)) // after the word: a reader may follow it
		if ps.count == narrowPairs {
			ps.widen()
		} else if uint64(ps.count)*4 > t.n*3 {
			ps.regrow(nextNarrow(t.n))
		}
		return k, true
	}
	seg, t, i := d.place(h)
	tag := slotTag(h)
	for {
		slot := t.slots[i] // only this goroutine writes: no atomic load needed
		if slot == 0 {
			break
		}
		if slot&^(1<<28-1) == tag && ps.vals.at(int(slot&(1<<28-1)-1)) == v {
			return slot&(1<<28-1) - 1, false
		}
		i = (i + 1) & t.mask
	}
	k := ps.add(v)
	ps.perSeg[seg]++
	atomic.StoreUint32(&t.slots[i], tag|(k+1)) // after the word: a reader may follow it
	ps.plan.after(ps.count, seg, ps.perSeg[seg], ps.grow, ps.split)
	return k, true
}

// add numbers a new word and appends it.
func (ps *pairSet) add(v uint64) uint32 {
	if ps.count == maxPairs {
		panic("explore: more pairs than a table holds") // the search's limits stop it before
	}
	k := uint32(ps.count)
	ps.count++
	ps.vals.append(v)
	return k
}

// nextNarrow is the size a narrow table of n slots grows to: a quarter more, even.
func nextNarrow(n uint64) uint64 { return (n + n/4 + 1) &^ 1 }

// regrow replaces the narrow table by one of n slots.
func (ps *pairSet) regrow(n uint64) {
	old := ps.dir.Load().narrow
	t := newNarrow(n)
	for i := range old.n {
		if slot := old.slot16(i); slot != 0 {
			j := t.home(pairHash(ps.vals.at(int(slot&(1<<14-1) - 1))))
			for t.slot16(j) != 0 {
				if j++; j == t.n {
					j = 0
				}
			}
			t.set16(j, slot)
		}
	}
	ps.dir.Store(&pdir{narrow: t}) // readers still on the old table find every word they may ask for
}

// widen replaces the narrow table by one of 1<<wideBits slots of 4 bytes.
func (ps *pairSet) widen() {
	old := ps.dir.Load().narrow
	d := &pdir{segs: [segments]*ptable{newPtable(wideBits)}}
	for i := range old.n {
		if slot := old.slot16(i); slot != 0 {
			k := slot&(1<<14-1) - 1
			h := pairHash(ps.vals.at(int(k)))
			_, t, j := d.place(h)
			for t.slots[j] != 0 {
				j = (j + 1) & t.mask
			}
			t.slots[j] = slotTag(h) | (k + 1)
		}
	}
	ps.perSeg[0] = ps.count
	ps.plan = newSegPlan(1 << wideBits)
	ps.dir.Store(d)
}

// grow doubles a segment: its words are hashed again.
func (ps *pairSet) grow(seg int) {
	old := ps.dir.Load()
	d := *old
	t := old.segs[seg]
	d.segs[seg] = newPtable(64 - t.shift + 1)
	d.rehash(t, &ps.vals, nil)
	ps.dir.Store(&d) // readers still on the old table find every word they may ask for
}

// split cuts the one table into segments.
func (ps *pairSet) split() {
	old := ps.dir.Load()
	d := &pdir{segShift: segBits}
	for s := range d.segs {
		d.segs[s] = newPtable(splitBits)
	}
	d.rehash(old.segs[0], &ps.vals, &ps.perSeg)
	ps.dir.Store(d)
}

// rehash places t's words in d (counting them per segment in per, if not nil).
func (d *pdir) rehash(t *ptable, vals *words, per *[segments]int) {
	if per != nil {
		clear(per[:])
	}
	for _, slot := range t.slots {
		if slot == 0 {
			continue
		}
		seg, nt, i := d.place(pairHash(vals.at(int(slot&(1<<28-1) - 1))))
		for nt.slots[i] != 0 {
			i = (i + 1) & nt.mask
		}
		nt.slots[i] = slot
		if per != nil {
			per[seg]++
		}
	}
}

// held is what the set holds.
func (ps *pairSet) held() int64 { return ps.vals.bytes() + ps.tableBytes() }

func (ps *pairSet) tableBytes() int64 {
	if t := ps.dir.Load().narrow; t != nil {
		return int64(t.n) * 2
	}
	return int64(ps.plan.slots()) * 4
}

// growBytes is what the table's next growth allocates at most: a segment's doubling
// (or the split), or, while narrow, the next narrow table or the wide one.
func (ps *pairSet) growBytes() int64 {
	if t := ps.dir.Load().narrow; t != nil {
		if t.n*3/4+1 < narrowPairs {
			return int64(nextNarrow(t.n)) * 2
		}
		return 1 << wideBits * 4
	}
	return int64(ps.plan.largest()) * 4
}

// tnode is an inner node of the tree over a state's parts: each child is an inner
// node (its index, >= 0) or a part (-1 - its index).
type tnode struct{ l, r int32 }

// layout builds the balanced tree over parts parts, in post-order: children before
// their parent, the root last.
func layout(parts int) []tnode {
	var out []tnode
	var build func(lo, hi int) int32
	build = func(lo, hi int) int32 {
		if hi-lo == 1 {
			return int32(-1 - lo)
		}
		mid := (lo + hi) / 2
		l := build(lo, mid)
		r := build(mid, hi)
		out = append(out, tnode{l, r})
		return int32(len(out) - 1)
	}
	build(0, parts)
	return out
}

// store is the visited set: the interned parts (leaves), the inner pairs, the roots
// (a state's number is its root's) and, for the liveness check, the edges; without
// edges, a parent per state (with them, the edges give it: see parent).
type store struct {
	leaves  *byteSet
	inner   *pairSet
	roots   *pairSet
	parents paged[uint32] // only read once the search is over; only without edges
	count   int
	nparts  int
	tree    []tnode

	keepEdges bool
	edgeStart paged[uint32] // state -> where its edges start in edges
	edges     paged[byte]   // varints (see addEdge)
	lastEdge  uint32        // the successor last added (or the state, at its start)
}

func newStore(parts int, keepEdges bool) *store {
	return &store{leaves: newByteSet(), inner: newPairSet(), roots: newPairSet(),
		nparts: parts, tree: layout(parts), keepEdges: keepEdges}
}

// treeScratch is a worker's view of one state's tree: its parts and the numbers of
// its leaves and inner nodes (to share what a successor keeps of it).
type treeScratch struct {
	parts  [][]byte   // a loaded state's parts (in the leaves' arena)
	leaf   []uint32   // leaf numbers; noID when unknown
	val    []uint64   // each inner node's pair
	id     []uint32   // each inner node's number (not the root's); noID when unknown
	pairs  *pairCache // nil: pairs are looked up in the store alone
	leaves *leafCache // nil: parts are looked up in the store alone
}

const noID = ^uint32(0)

func (ts *treeScratch) size(st *store) {
	if len(ts.leaf) != st.nparts {
		ts.parts = make([][]byte, st.nparts)
		ts.leaf = make([]uint32, st.nparts)
		ts.val = make([]uint64, len(st.tree))
		ts.id = make([]uint32, len(st.tree))
	}
}

// partRef is one part of a successor, in a chunk's buffers.
type partRef struct {
	off, n uint32
	id     uint32 // noID: not stored when the worker looked
	hash   uint64 // when id is noID
}

// loadParts fills ts with state k's tree: leaf numbers, parts, inner pairs.
func (st *store) loadParts(k int, ts *treeScratch) {
	ts.size(st)
	root := len(st.tree) - 1
	ts.val[root] = st.roots.at(uint32(k))
	ts.id[root] = noID
	for q := root; q >= 0; q-- {
		v := ts.val[q]
		st.child(ts, st.tree[q].l, uint32(v>>32))
		st.child(ts, st.tree[q].r, uint32(v))
	}
	for j := range ts.leaf {
		ts.parts[j] = st.leaves.get(ts.leaf[j])
	}
}

func (st *store) child(ts *treeScratch, c int32, id uint32) {
	if c < 0 {
		ts.leaf[-1-c] = id
		return
	}
	ts.id[c] = id
	ts.val[c] = st.inner.at(id)
}

// resolve looks a successor's parts and pairs up without storing anything (cur, when
// not nil, is the state it came from: what it shares with it is not looked up). It
// returns the root and true when every part and pair below it is stored; refs gets
// the parts.
func (st *store) resolve(buf []byte, ends []int, cur *treeScratch, scratch *treeScratch, refs []partRef, base uint32) ([]partRef, uint64, bool) {
	scratch.size(st)
	known := true
	start := 0
	for j, end := range ends {
		p := buf[start:end]
		ref := partRef{off: base + uint32(start), n: uint32(end - start), id: noID}
		start = end
		if cur != nil && bytes.Equal(p, cur.parts[j]) {
			ref.id = cur.leaf[j]
		} else {
			ref.hash = st.leaves.hash(p)
			if id, ok := st.lookupLeaf(scratch, p, ref.hash); ok {
				ref.id = id
			} else {
				known = false
			}
		}
		scratch.leaf[j] = ref.id
		refs = append(refs, ref)
	}
	if !known {
		return refs, 0, false
	}
	root := len(st.tree) - 1
	for q, nd := range st.tree {
		l, r := scratch.ref(nd.l), scratch.ref(nd.r)
		if l == noID || r == noID {
			return refs, 0, false
		}
		v := pairOf(l, r)
		scratch.val[q] = v
		if q == root {
			return refs, v, true
		}
		if cur != nil && v == cur.val[q] {
			scratch.id[q] = cur.id[q]
		} else if id, ok := st.lookupPair(scratch, v); ok {
			scratch.id[q] = id
		} else {
			scratch.id[q] = noID
		}
	}
	return refs, 0, false
}

func (ts *treeScratch) ref(c int32) uint32 {
	if c < 0 {
		return ts.leaf[-1-c]
	}
	return ts.id[c]
}

// intern stores a successor's parts and pairs (refs, in buf) that are not yet
// stored, and returns its root. Only the merge calls it.
func (st *store) intern(buf []byte, refs []partRef, scratch *treeScratch) uint64 {
	scratch.size(st)
	for j, ref := range refs {
		if ref.id == noID {
			ref.id, _ = st.leaves.insert(buf[ref.off:ref.off+ref.n], ref.hash)
		}
		scratch.leaf[j] = ref.id
	}
	root := len(st.tree) - 1
	for q, nd := range st.tree {
		v := pairOf(scratch.ref(nd.l), scratch.ref(nd.r))
		if q == root {
			return v
		}
		scratch.id[q] = st.internPair(scratch, v)
	}
	panic("unreachable")
}

// insert adds the state whose root is v (a successor of parent) unless it is there;
// it returns the state's number and whether it is new. cache, if not nil, is the
// merge's memory of recent roots.
func (st *store) insert(v uint64, parent uint32, cache *pairCache) (uint32, bool) {
	h := pairHash(v)
	if cache != nil {
		if k, ok := cache.get(v, h); ok {
			return k, false
		}
	}
	k, isNew := st.roots.insert(v, h)
	if cache != nil {
		cache.put(v, h, k)
	}
	if isNew {
		st.count++
		if !st.keepEdges {
			st.parents.append(parent)
		}
	}
	return k, isNew
}

// full reports whether the store nears what its tables can number (maxPairs): the
// search stops at its next check of the limits, well before (checkEvery states, each
// adding fewer than nparts pairs).
func (st *store) full() bool {
	return max(st.roots.count, st.inner.count) > maxPairs-4*checkEvery*st.nparts ||
		st.edges.len() > 1<<32-1<<28 // edgeStart's offsets are 32 bits
}

// lookup returns the number of the state whose root is v, if it is stored. It may
// run while another goroutine inserts.
func (st *store) lookup(v uint64) (uint32, bool) { return st.roots.lookup(v, pairHash(v)) }

// The edges are kept compact: each state's successors, in order, as varints of the
// difference from the one before (the first from the state itself), zigzag-coded. A
// state's successors are mostly states found just before or just after one another
// (the diamonds of independent steps), so most differences take one byte; edgeStart
// says where each state's list begins.

// startEdges marks where state k's edges begin (states are expanded in order).
func (st *store) startEdges(k int) {
	if st.keepEdges && st.edgeStart.len() == k {
		st.edgeStart.append(uint32(st.edges.len()))
		st.lastEdge = uint32(k)
	}
}

func (st *store) addEdge(to uint32) {
	if !st.keepEdges {
		return
	}
	d := int64(to) - int64(st.lastEdge)
	st.lastEdge = to
	for u := uint64(d<<1 ^ d>>63); ; u >>= 7 {
		if u < 0x80 {
			st.edges.append(byte(u))
			return
		}
		st.edges.append(byte(u) | 0x80)
	}
}

// edgeIter walks one state's successors.
type edgeIter struct {
	pos, end int
	prev     uint32
}

// succ returns an iterator over state k's successors (valid once k+1 was started or
// the search ended).
func (st *store) succ(k int) edgeIter {
	hi := st.edges.len()
	if k+1 < st.edgeStart.len() {
		hi = int(st.edgeStart.at(k + 1))
	}
	return edgeIter{pos: int(st.edgeStart.at(k)), end: hi, prev: uint32(k)}
}

// next returns the next successor, if any.
func (st *store) next(it *edgeIter) (uint32, bool) {
	if it.pos >= it.end {
		return 0, false
	}
	var u uint64
	for s := uint(0); ; s += 7 {
		c := st.edges.at(it.pos)
		it.pos++
		u |= uint64(c&0x7f) << s
		if c < 0x80 {
			break
		}
	}
	it.prev = uint32(int64(it.prev) + (int64(u>>1) ^ -int64(u&1)))
	return it.prev, true
}

// parent returns the state from which state k was found. With edges kept it is not
// stored: the first edge that leads to k is the one that found it (the merge records
// an edge for every successor, in order), so the state that owns that edge is k's
// parent. Finding it reads the edges up to there: a counterexample's path takes a
// read of the edges per step, and only a counterexample needs it.
func (st *store) parent(k uint32) uint32 {
	if !st.keepEdges {
		return st.parents.at(int(k))
	}
	if k == 0 {
		return noParent // the initial state
	}
	for s := 0; s < st.edgeStart.len(); s++ {
		it := st.succ(s)
		for t, ok := st.next(&it); ok; t, ok = st.next(&it) {
			if t == k {
				return uint32(s)
			}
		}
	}
	panic("explore: a stored state no edge leads to")
}

// stateBytes is what the stored states take: parts, pairs, roots and parents.
func (st *store) stateBytes() int64 {
	return st.leaves.held() + st.inner.held() + st.roots.held() + st.parents.bytes()
}

// edgeBytes is what the edges kept for the liveness check take.
func (st *store) edgeBytes() int64 { return st.edgeStart.bytes() + st.edges.bytes() }

// memory is everything the store holds, and what the next growth of its largest
// table segment takes: a segment doubles in one allocation while the old one is
// still read, so a search stopped just under the bound would otherwise pass it by
// twice that segment.
func (st *store) memory() int64 {
	grow := max(st.leaves.growBytes(), st.inner.growBytes(), st.roots.growBytes())
	return st.stateBytes() + st.edgeBytes() + grow
}

// sortedFlights puts messages decoded sender by sender back in the canonical order
// (insertFlight) of channels that are not FIFO.
func (x *search) sortFlights(s *state) {
	if !x.m.fifo {
		// The order of flightLess, with one comparison of contents per pair.
		slices.SortFunc(s.msgs, func(a, b flight) int {
			if a.msg != b.msg {
				return strings.Compare(x.it.message(a.msg).key, x.it.message(b.msg).key)
			}
			return cmp.Or(cmp.Compare(a.lo, b.lo), cmp.Compare(a.hi, b.hi))
		})
	}
}
