package sim

// itemKind says what a queued item is.
type itemKind uint8

const (
	itemMessage itemKind = iota // slot indexes Sim.msgs
	itemTimer                   // slot indexes Sim.timers
	itemAction                  // slot indexes Sim.actions (scenario workload)
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

// queue is a binary min-heap of items held by value: no boxing, no allocation once grown.
type queue struct{ items []item }

func (q *queue) Len() int { return len(q.items) }

func (q *queue) push(it item) {
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

func (q *queue) peek() *item { return &q.items[0] }

func (q *queue) pop() item {
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
