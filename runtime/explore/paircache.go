package explore

// pairCache is a goroutine's own memory of the numbers of pairs (or roots) it
// recently looked up or stored, direct-mapped. Looking a pair up in the store costs
// two reads far apart in memory (a slot of the table, then the word it numbers), a
// cache miss each once the store outgrows the processor's caches; the successors of
// the states of one chunk share most of their changed pairs, and the states of one
// level many of their successors (the diamonds of independent steps), so most
// lookups find the pair here. An entry never goes stale: a pair keeps its number.
type pairCache struct {
	keys [pairCacheSize]uint64
	ids  [pairCacheSize]uint32 // number+1; 0: empty
}

// pairCacheSize is the number of entries (12 bytes each: 192 KiB, within a core's
// second-level cache on most machines).
const (
	pairCacheSize  = 1 << 14
	pairCacheBytes = pairCacheSize * 12
)

func (c *pairCache) slot(h uint64) int { return int(h >> 20 & (pairCacheSize - 1)) }

// get returns v's number if the cache holds it (h is pairHash(v)).
func (c *pairCache) get(v, h uint64) (uint32, bool) {
	i := c.slot(h)
	if c.ids[i] != 0 && c.keys[i] == v {
		return c.ids[i] - 1, true
	}
	return 0, false
}

func (c *pairCache) put(v, h uint64, id uint32) {
	i := c.slot(h)
	c.keys[i], c.ids[i] = v, id+1
}

// lookupPair returns the number of inner pair v, if it is stored, through ts's
// cache when it has one.
func (st *store) lookupPair(ts *treeScratch, v uint64) (uint32, bool) {
	h := pairHash(v)
	if ts.pairs != nil {
		if id, ok := ts.pairs.get(v, h); ok {
			return id, true
		}
	}
	id, ok := st.inner.lookup(v, h)
	if ok && ts.pairs != nil {
		ts.pairs.put(v, h, id)
	}
	return id, ok
}

// internPair stores inner pair v unless it is there and returns its number, through
// ts's cache when it has one (the merge only).
func (st *store) internPair(ts *treeScratch, v uint64) uint32 {
	h := pairHash(v)
	if ts.pairs != nil {
		if id, ok := ts.pairs.get(v, h); ok {
			return id
		}
	}
	id, _ := st.inner.insert(v, h)
	if ts.pairs != nil {
		ts.pairs.put(v, h, id)
	}
	return id
}

// leafCache is a worker's own memory of the numbers of parts it recently looked up,
// direct-mapped by hash, with the part's bytes kept in the entry (only short parts,
// as most are: a process's node state, flags and a few messages), so that a hit
// reads neither the store's table nor its arena and is exact.
type leafCache struct {
	e [leafCacheSize]leafEntry
}

type leafEntry struct {
	hash uint64
	id   uint32 // number+1; 0: empty
	n    uint8
	b    [leafInline]byte
}

const (
	leafCacheSize  = 1 << 13
	leafInline     = 19 // an entry takes 32 bytes
	leafCacheBytes = leafCacheSize * 32
)

func (c *leafCache) slot(h uint64) *leafEntry { return &c.e[h>>20&(leafCacheSize-1)] }

// lookupLeaf returns the number of part p (whose hash is h), if it is stored,
// through ts's cache when it has one.
func (st *store) lookupLeaf(ts *treeScratch, p []byte, h uint64) (uint32, bool) {
	if ts.leaves == nil || len(p) > leafInline {
		return st.leaves.lookup(p, h)
	}
	e := ts.leaves.slot(h)
	if e.id != 0 && e.hash == h && int(e.n) == len(p) && string(e.b[:e.n]) == string(p) {
		return e.id - 1, true
	}
	id, ok := st.leaves.lookup(p, h)
	if ok {
		e.hash, e.id, e.n = h, id+1, uint8(len(p))
		copy(e.b[:], p)
	}
	return id, ok
}
