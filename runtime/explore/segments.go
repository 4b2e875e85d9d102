package explore

// The hash tables of the store (byteSet, pairSet) are cut into segments, chosen by
// a hash's top bits, that double one at a time. A table that doubles in one
// allocation holds the old and the new slots at once, three times its size, and the
// memory bound must leave room for that (store.memory); one segment doubling needs
// an eighth of the table's size at most.
//
// When each segment doubles is decided by the number of entries in the whole
// table, not in the segment: the tables' sizes, and the memory the search reports,
// are then the same on every run and for any number of workers, although the
// strings and pairs they hold carry the interner's numbers, which are not (the
// numbers of node states differ between runs, and so do the parts' hashes). A small
// table is one segment, doubling when three quarters full; at splitSlots*segments
// slots it is split into segments, which double in turn: segment k when the table
// is (3/5 + 3/20*(k+1)/16) full, so that each segment is about that full (the hash
// spreads thousands of entries evenly) when its turn comes, and the table is, as one
// that doubles whole, three eighths to three quarters full. A segment that fills to
// fifteen sixteenths all the same doubles at once. (A pairSet's table starts
// narrower still, and grows in finer steps, until it holds 16 Ki words: tree.go.)

const (
	segBits  = 4
	segments = 1 << segBits
	// splitSlots is a segment's size when a table is split.
	splitBits  = 12
	splitSlots = 1 << splitBits
)

// segPlan is the sizes of a table's segments and which one doubles next.
type segPlan struct {
	split bool
	size  [segments]int // slots per segment (only the first before the split)
	base  int           // the size of the segments not yet doubled in this round
	next  int           // the next segment to double
}

func newSegPlan(slots int) segPlan {
	p := segPlan{base: slots}
	p.size[0] = slots
	return p
}

// after is called once an entry was added to segment seg (which then holds inSeg
// entries) and the table to count: grow doubles a segment, split cuts the one
// table into segments of splitSlots.
func (p *segPlan) after(count, seg, inSeg int, grow func(seg int), split func()) {
	if !p.split {
		if count*4 > p.base*3 {
			if p.base*2 < splitSlots*segments {
				p.double(0, grow)
				p.base *= 2
				return
			}
			split()
			p.split, p.base = true, splitSlots
			for s := range p.size {
				p.size[s] = splitSlots
			}
		}
		return
	}
	if inSeg*16 > p.size[seg]*15 {
		p.double(seg, grow) // the hash was uneven: never seen with thousands a segment
	}
	// Segment next doubles when the table is (3/5 + 3/20*(next+1)/16) full.
	if count*640 > segments*p.base*(384+6*(p.next+1)) {
		if p.size[p.next] == p.base {
			p.double(p.next, grow)
		}
		if p.next++; p.next == segments {
			p.next, p.base = 0, p.base*2
		}
	}
}

func (p *segPlan) double(seg int, grow func(seg int)) {
	grow(seg)
	p.size[seg] *= 2
}

// slots is the table's size, in slots.
func (p *segPlan) slots() int {
	n := 0
	for _, s := range p.size {
		n += s
	}
	return n
}

// largest is what the next doubling or the split allocates at most, in slots.
func (p *segPlan) largest() int {
	n := 0
	for _, s := range p.size {
		n = max(n, s)
	}
	return 2 * n
}
