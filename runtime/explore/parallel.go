package explore

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// The breadth-first search, on every core. It goes level by level, each level in
// chunks of states. The workers expand the chunks (decode, list the transitions, step
// the nodes, encode and hash the successors, check them: most of the work), each into
// its own buffer, a few chunks ahead; meanwhile the search's own goroutine merges the
// chunks, walking the states in their order and each state's successors in theirs,
// into the visited set. The workers read the store (a state's key, the cycle
// proviso's lookup) while the merge writes it, which the store allows (store.go).
// With one worker there is no other goroutine: the search expands a chunk, then
// merges it.
//
// The merge does exactly what a search by one worker does in the same order, so the
// states get the same numbers, the same parents and the same edges whatever the
// number of workers: the verdict, the counts, the depth, the counterexample and the
// liveness check (which walks the stored graph) do not depend on it. What does is
// only the numbering of the interner (node states, messages), which no result shows
// (insertFlight), and how far a search stopped by memory or time got. The cycle
// proviso (reduce.go) asks whether a successor is stored one level up or less:
// those levels are complete before the level's workers start, and a successor of the
// next level, stored or not yet, gets the same answer.

// chunkStates is how many states a worker takes at a time; the workers may be
// aheadChunks chunks per worker ahead of the merge, so that one that meets slow
// states does not hold up the others long, while the buffers stay small (a few MB).
const (
	chunkStates = 128
	aheadChunks = 4
)

// succ is one transition out of an expanded state, as the merge needs it.
type succ struct {
	found  *finding // the step broke a property
	timer  bool     // the step set a timer: an untimed search restarts timed
	tooBig bool     // a part of the successor is longer than MaxKey
	known  bool     // every part and pair of it was stored when the worker looked
	root   uint64   // then, its root
	parts  uint32   // its parts: chunk.parts[parts:parts+store.nparts], in chunk.keys
	check  *finding // checkState of the successor (counts only if it is new)
}

// expansion is what a worker found out about one state.
type expansion struct {
	err      error
	reduced  bool // partial-order reduction took some transitions for all
	inert    bool // it took one delivery to an inert process (reduce.go)
	from, to int  // its successors: chunk.succs[from:to]
}

type chunk struct {
	lo, hi int
	exps   []expansion
	succs  []succ
	keys   []byte
	parts  []partRef
}

// pool is the workers of a search. With one worker it is the search itself, on its
// own goroutine; with more, each has a goroutine and scratch of its own, shares the
// model, the interner and the store, and the search's goroutine merges. chunks is a
// ring: chunk c of a level goes in chunks[c % len(chunks)].
type pool struct {
	workers []*search
	chunks  []chunk
	bytes   int64   // the buffers' capacity, for the memory bound
	held    []int64 // per ring slot, as last merged

	mu     sync.Mutex
	cond   sync.Cond
	merged int   // chunks of the level merged
	filled []int // per ring slot: the chunk it holds + 1, once expanded
	stop   bool  // the search is over: the workers leave
}

// workers returns how many workers a search with these options runs.
func (o *Options) workers() int {
	if o.Go == nil {
		return 1
	}
	if o.Workers > 0 {
		return o.Workers
	}
	return min(runtime.GOMAXPROCS(0), MaxWorkers)
}

func (x *search) newPool() *pool {
	p := &pool{workers: []*search{x}}
	n := x.opt.workers()
	if n > 1 {
		for range n {
			it := x.it.stepper()
			it.recent = new(recent)
			it.bytes.Add(recentBytes)
			p.workers = append(p.workers, &search{m: x.m, it: it, st: x.st, opt: x.opt,
				canon: x.canon, por: x.por, spor: x.spor, untimed: x.untimed, cur: newState(x.m), next: newState(x.m)})
		}
		p.workers = p.workers[1:] // the search's goroutine merges
	}
	// Each goroutine's own memory of recent pairs (paircache.go): the merge's of
	// roots and of the pairs it stores, each worker's of the pairs and parts it
	// looks up.
	x.roots, x.tsMerge.pairs = new(pairCache), new(pairCache)
	for _, w := range p.workers {
		w.tsSucc.pairs, w.tsSucc.leaves = new(pairCache), new(leafCache)
	}
	x.it.bytes.Add(int64(2+len(p.workers))*pairCacheBytes + int64(len(p.workers))*leafCacheBytes)
	p.chunks = make([]chunk, aheadChunks*len(p.workers))
	p.filled = make([]int, len(p.chunks))
	p.held = make([]int64, len(p.chunks))
	p.cond.L = &p.mu
	return p
}

// run is the breadth-first search.
func (x *search) run(ctx context.Context) (outcome, error) {
	m := x.m
	x.cur, x.next = newState(m), newState(m)
	found := x.initial(x.cur, nil)
	if x.restartTimed() {
		return outcome{}, errRestartTimed
	}
	if _, err := x.storeState(x.cur, noParent); err != nil {
		return outcome{}, err
	}
	if found == nil {
		found = x.checkState(x.cur)
	}
	if found != nil {
		return outcome{found: found, last: 0, via: -1}, nil
	}
	x.pool = x.newPool()
	lastCheck := time.Now()
	checked := 0 // states when the limits were last checked
	for lo := 0; lo < x.st.count; {
		if lo > 0 {
			x.depth++
		}
		hi := x.st.count
		out, err, stop := x.level(ctx, lo, hi, &checked, &lastCheck)
		if stop {
			return out, err
		}
		lo = hi
	}
	x.st.startEdges(x.st.count) // close the last state's edges
	return outcome{}, nil
}

// level expands and merges the states lo to hi (one level); stop says the search
// ends here, with out or err.
func (x *search) level(ctx context.Context, lo, hi int, checked *int, lastCheck *time.Time) (out outcome, err error, stop bool) {
	p := x.pool
	n := (hi - lo + chunkStates - 1) / chunkStates
	span := func(c int) *chunk {
		ch := &p.chunks[c%len(p.chunks)]
		ch.lo, ch.hi = lo+c*chunkStates, min(lo+(c+1)*chunkStates, hi)
		return ch
	}
	single := p.workers[0] == x
	if !single {
		p.merged, p.stop = 0, false
		clear(p.filled)
		var next atomic.Int64
		var wg sync.WaitGroup
		for _, w := range p.workers {
			wg.Add(1)
			x.opt.Go(func() {
				defer wg.Done()
				p.work(w, &next, n, span, hi)
			})
		}
		defer func() {
			p.mu.Lock()
			p.stop = true
			p.cond.Broadcast()
			p.mu.Unlock()
			wg.Wait()
		}()
	}
	for c := 0; c < n; c++ {
		var ch *chunk
		if single {
			ch = span(c)
			x.expandChunk(ch, hi)
		} else {
			ch = &p.chunks[c%len(p.chunks)]
			p.mu.Lock()
			for p.filled[c%len(p.chunks)] != c+1 {
				p.cond.Wait()
			}
			p.mu.Unlock()
		}
		p.account(c)
		for k := ch.lo; k < ch.hi; k++ {
			if out, err, stop := x.merge(ctx, ch, k, checked); stop {
				return out, err, true
			}
			if k&1023 == 1023 {
				if b := x.limits(ctx); b != "" {
					return outcome{bound: b}, nil, true
				}
				if x.opt.Progress != nil && time.Since(*lastCheck) >= x.opt.ProgressEvery {
					*lastCheck = time.Now()
					x.opt.Progress(x.progress())
				}
			}
		}
		if !single {
			p.mu.Lock()
			p.merged = c + 1
			p.cond.Broadcast()
			p.mu.Unlock()
		}
	}
	return outcome{}, nil, false
}

// work is a worker's loop over a level's chunks: it takes the next one, waits until
// its slot of the ring is merged, and expands it into the slot.
func (p *pool) work(w *search, next *atomic.Int64, n int, span func(int) *chunk, levelEnd int) {
	for {
		c := int(next.Add(1)) - 1
		if c >= n {
			return
		}
		p.mu.Lock()
		for !p.stop && p.merged < c-len(p.chunks)+1 {
			p.cond.Wait()
		}
		stop := p.stop
		p.mu.Unlock()
		if stop {
			return
		}
		w.expandChunk(span(c), levelEnd)
		p.mu.Lock()
		p.filled[c%len(p.chunks)] = c + 1
		p.cond.Broadcast()
		p.mu.Unlock()
	}
}

// account records what chunk c's buffers hold, once the merge has it, and sums the
// ring's figures, for the memory bound.
func (p *pool) account(c int) {
	ch := &p.chunks[c%len(p.chunks)]
	p.held[c%len(p.chunks)] = int64(cap(ch.keys)) + int64(cap(ch.succs))*48 + int64(cap(ch.exps))*48 + int64(cap(ch.parts))*24
	p.bytes = 0
	for _, b := range p.held {
		p.bytes += b
	}
}

// merge adds state k's successors to the visited set, in order, as a search by one
// worker would have as it went; stop says the search ends here, with out or err.
func (x *search) merge(ctx context.Context, ch *chunk, k int, checked *int) (out outcome, err error, stop bool) {
	e := &ch.exps[k-ch.lo]
	if e.err != nil {
		return outcome{}, e.err, true
	}
	if e.reduced {
		x.reduced++
	}
	x.st.startEdges(k)
	for ord, sc := range ch.succs[e.from:e.to] {
		if sc.timer {
			return outcome{}, errRestartTimed, true
		}
		x.transitions++
		if sc.found != nil {
			if e.inert {
				return outcome{}, fmt.Errorf("explore: %s: a delivery to an inert process broke a property (its Inert declaration is wrong)", x.m.spec.Slug), true
			}
			return outcome{found: sc.found, last: uint32(k), via: ord}, nil, true
		}
		if sc.tooBig {
			return outcome{}, fmt.Errorf("explore: a state takes more than %d bytes to encode (too many messages in flight?)", MaxKey), true
		}
		root := sc.root
		if !sc.known {
			root = x.st.intern(ch.keys, ch.parts[sc.parts:int(sc.parts)+x.st.nparts], &x.tsMerge)
		}
		idx, isNew := x.st.insert(root, uint32(k), x.roots)
		x.st.addEdge(idx)
		if !isNew {
			continue
		}
		if int64(x.st.count) > x.opt.MaxStates {
			return outcome{bound: BoundStates}, nil, true
		}
		// A state with many successors adds many states per expansion: check
		// by states added too, not only every 1024 expansions.
		if x.st.count-*checked >= checkEvery {
			*checked = x.st.count
			if b := x.limits(ctx); b != "" {
				return outcome{bound: b}, nil, true
			}
		}
		if sc.check != nil {
			return outcome{found: sc.check, last: idx, via: -1}, nil, true
		}
	}
	return outcome{}, nil, false
}

// expandChunk expands the chunk's states, each into its own expansion.
func (x *search) expandChunk(ch *chunk, levelEnd int) {
	ch.exps, ch.succs, ch.keys, ch.parts = ch.exps[:0], ch.succs[:0], ch.keys[:0], ch.parts[:0]
	for k := ch.lo; k < ch.hi; k++ {
		ch.exps = append(ch.exps, expansion{})
		e := &ch.exps[len(ch.exps)-1]
		e.from = len(ch.succs)
		e.err = x.expandState(ch, e, k, levelEnd)
		e.to = len(ch.succs)
	}
}

// expandState lists state k's transitions and their successors, up to the first that
// ends the search (a broken property, a timer in an untimed search).
func (x *search) expandState(ch *chunk, e *expansion, k, levelEnd int) (err error) {
	defer func() {
		// An algorithm that panics is a bug in the algorithm; say which, do not crash
		// (this may run on a worker's goroutine, which explore's recover does not see).
		if v := recover(); v != nil {
			err = fmt.Errorf("explore: %s panicked during the search: %v", x.m.spec.Slug, v)
		}
	}()
	if err := x.load(k, x.cur); err != nil {
		return err
	}
	x.trs = x.enumerate(x.cur, x.trs)
	if x.por {
		t, err := x.ample(x.cur, x.trs, levelEnd)
		if err != nil {
			return err
		}
		if t >= 0 {
			x.trs[0], x.trs = x.trs[t], x.trs[:1]
			e.reduced, e.inert = true, true
		}
	}
	if !e.reduced && x.spor && x.sporState(x.cur) {
		// A persistent set is taken when every one of its steps leads one level
		// deeper (the cycle proviso), which its expansion finds out: else what it
		// added is taken back and the next set tried.
		for _, procs := range x.sporSets(x.cur, x.trs) {
			set, ok := x.sporSet(x.cur, x.trs, procs)
			if !ok {
				continue
			}
			s0, k0, p0 := len(ch.succs), len(ch.keys), len(ch.parts)
			if deeper, done := x.expandSet(ch, set, levelEnd); deeper || done {
				e.reduced = true
				return nil
			}
			ch.succs, ch.keys, ch.parts = ch.succs[:s0], ch.keys[:k0], ch.parts[:p0]
		}
	}
	x.expandSet(ch, x.trs, -1)
	return nil
}

// expandSet adds the successors by trs to the chunk, up to the first that ends the
// search (done). With levelEnd >= 0 it stops at the first successor stored before
// levelEnd (one level up or less), and reports whether every one leads deeper.
func (x *search) expandSet(ch *chunk, trs []trans, levelEnd int) (deeper, done bool) {
	m := x.m
	restart := !m.timed && x.opt.Time == TimeAuto && !x.untimed
	for _, t := range trs {
		x.next.copyFrom(x.cur)
		x.timerSet = false
		f := x.apply(x.next, t)
		if restart && x.timerSet {
			ch.succs = append(ch.succs, succ{timer: true})
			return false, true
		}
		if f != nil {
			ch.succs = append(ch.succs, succ{found: f})
			return false, true
		}
		off := len(ch.keys)
		ch.keys, x.partEnds = x.encodeParts(ch.keys, x.next, x.partEnds)
		if x.tooBig(off) {
			ch.succs = append(ch.succs, succ{tooBig: true})
			return false, true
		}
		sc := succ{parts: uint32(len(ch.parts)), check: x.checkState(x.next)}
		for j := range x.partEnds {
			x.partEnds[j] -= off
		}
		ch.parts, sc.root, sc.known = x.st.resolve(ch.keys[off:], x.partEnds, &x.tsCur, &x.tsSucc, ch.parts, uint32(off))
		if levelEnd >= 0 && sc.known {
			if k, ok := x.st.lookup(sc.root); ok && int(k) < levelEnd {
				return false, false
			}
		}
		ch.succs = append(ch.succs, sc)
	}
	return true, false
}
