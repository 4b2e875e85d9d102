package sim

// itemKind says what a queued item is.
type itemKind uint8

const (
	itemMessage itemKind = iota // slot indexes network.msgs
	itemTimer                   // slot indexes timers.slots
	itemAction                  // slot indexes Config.Actions (scenario workload)
	itemRelease                 // slot is the node whose CS time is over
)

// item is one future event. Items are ordered by (t, seq): equal times keep the order in
// which they were scheduled, which makes runs reproducible and FIFO channels exact.
type item struct {
	t    int
	seq  int64
	kind itemKind
	slot int32
	gen  uint32 // release: which CS entry it ends
}

func (a *item) before(b *item) bool {
	if a.t != b.t {
		return a.t < b.t
	}
	return a.seq < b.seq
}

// eventQueue is the run's future: a binary min-heap of items held by value (no boxing,
// no allocation once grown), each stamped with the next sequence number as it is
// scheduled.
//
// Invariant: the items taken as steps come in strictly increasing (t, seq) order.
// Everything is scheduled at or after the current time and virtual time only moves to
// the item taken, so one that goes back is a broken heap or an item scheduled in the
// past: Step panics. (Dead items, skipped with pop, may leave early: an item scheduled
// after them can come before them.)
type eventQueue struct {
	items []item
	seq   int64 // the next item's sequence number
	last  item  // the last item taken (zero before the first)
}

func (q *eventQueue) Len() int { return len(q.items) }

// schedule queues it with the next sequence number.
func (q *eventQueue) schedule(it item) {
	it.seq = q.seq
	q.seq++
	q.items = append(q.items, it)
	i := len(q.items) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !q.items[i].before(&q.items[p]) {
			break
		}
		q.items[i], q.items[p] = q.items[p], q.items[i]
		i = p
	}
}

func (q *eventQueue) peek() *item { return &q.items[0] }

func (q *eventQueue) pop() item {
	top := q.items[0]
	last := len(q.items) - 1
	q.items[0] = q.items[last]
	q.items = q.items[:last]
	i, n := 0, last
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && q.items[r].before(&q.items[l]) {
			m = r
		}
		if !q.items[m].before(&q.items[i]) {
			break
		}
		q.items[i], q.items[m] = q.items[m], q.items[i]
		i = m
	}
	return top
}

// outOfOrder reports an item taken as a step before the last one (Step checks).
func (q *eventQueue) outOfOrder(it item) {
	broken("queue order: item (t=%d, seq=%d) taken after (t=%d, seq=%d)", it.t, it.seq, q.last.t, q.last.seq)
}
