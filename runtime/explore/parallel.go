package explore

import (
	"context"
	"fmt"
	"hash/maphash"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// The breadth-first search, on every core. It goes level by level, and each level in
// batches of states: first the workers expand the batch's states in parallel (decode,
// list the transitions, step the nodes, encode the successors: nearly all of the
// work), each into its own buffer; then one goroutine merges the buffers, walking the
// states in their order and each state's successors in theirs, into the visited set.
// The store is only read while the workers run and only written while they do not.
//
// The merge does exactly what a search by one worker does in the same order, so the
// states get the same numbers, the same parents and the same edges whatever the
// number of workers: the verdict, the counts, the depth, the counterexample and the
// liveness check (which walks the stored graph) do not depend on it. What does is
// only the numbering of the interner (node states, messages), which no result shows
// (insertFlight), and how far a search stopped by memory or time got.

// chunkStates is how many states a worker takes at a time; a batch is batchChunks
// chunks per worker, so that a worker that meets slow states does not hold up the
// others long, while a batch's buffers stay small (a few MB).
const (
	chunkStates = 128
	batchChunks = 4
)

// succ is one transition out of an expanded state, as the merge needs it.
type succ struct {
	found  *finding // the step broke a property
	timer  bool     // the step set a timer: an untimed search restarts timed
	tooBig bool     // the successor's key is longer than MaxKey
	off    uint32   // its key: chunk.keys[off:off+n]
	n      uint32
	hash   uint64
	check  *finding // checkState of the successor (counts only if it is new)
}

// expansion is what a worker found out about one state.
type expansion struct {
	err      error
	reduced  bool // partial-order reduction took one transition for all
	single   bool // the state has one transition, reduced or not
	from, to int  // its successors: chunk.succs[from:to]
}

type chunk struct {
	lo, hi int
	exps   []expansion
	succs  []succ
	keys   []byte
}

// pool is the workers of a search: worker 0 is the search itself, the others have
// their own scratch and share the model, the interner and the store.
type pool struct {
	workers []*search
	chunks  []chunk
	bytes   int64 // the buffers' capacity, for the memory bound
}

// workers returns how many workers a search with these options runs.
func (o *Options) workers() int {
	if o.Workers > 0 {
		return o.Workers
	}
	return min(runtime.GOMAXPROCS(0), MaxWorkers)
}

func (x *search) newPool() *pool {
	p := &pool{workers: []*search{x}}
	for range x.opt.workers() - 1 {
		p.workers = append(p.workers, &search{m: x.m, it: x.it.stepper(), st: x.st, opt: x.opt,
			canon: x.canon, por: x.por, cur: newState(x.m), next: newState(x.m)})
	}
	p.chunks = make([]chunk, batchChunks*len(p.workers))
	return p
}

// run is the breadth-first search.
func (x *search) run(ctx context.Context) (outcome, error) {
	m := x.m
	x.cur, x.next = newState(m), newState(m)
	found := x.initial(x.cur, nil)
	if !m.timed && x.it.sawTimer.Load() && x.opt.Time == TimeAuto {
		return outcome{}, errRestartTimed
	}
	x.key = m.encode(x.key[:0], x.cur)
	x.st.insert(x.key, noParent)
	if found == nil {
		found = x.checkState(x.cur)
	}
	if found != nil {
		return outcome{found: found, last: 0, via: -1}, nil
	}
	x.pool = x.newPool()
	levelEnd := 1
	lastCheck := time.Now()
	checked := 0 // states when the limits were last checked
	for lo := 0; lo < x.st.count; {
		if lo == levelEnd {
			x.depth++
			levelEnd = x.st.count
		}
		hi := x.pool.expand(lo, levelEnd)
		for c := range x.pool.chunks {
			ch := &x.pool.chunks[c]
			for k := ch.lo; k < ch.hi; k++ {
				out, err, stop := x.merge(ctx, ch, k, &checked)
				if stop {
					return out, err
				}
				if k&1023 == 1023 {
					if b := x.limits(ctx); b != "" {
						return outcome{bound: b}, nil
					}
					if x.opt.Progress != nil && time.Since(lastCheck) >= x.opt.ProgressEvery {
						lastCheck = time.Now()
						x.opt.Progress(x.progress())
					}
				}
			}
		}
		lo = hi
	}
	x.st.startEdges(x.st.count) // close the last state's edges
	return outcome{}, nil
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
			if x.por && e.single {
				return outcome{}, fmt.Errorf("explore: %s: a delivery to an inert process broke a property (its Inert declaration is wrong)", x.m.spec.Slug), true
			}
			return outcome{found: sc.found, last: uint32(k), via: ord}, nil, true
		}
		if sc.tooBig {
			return outcome{}, fmt.Errorf("explore: a state takes more than %d bytes to encode (too many messages in flight?)", MaxKey), true
		}
		idx, isNew := x.st.insertHashed(ch.keys[sc.off:sc.off+sc.n], sc.hash, uint32(k))
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

// expand has the workers expand the states from lo on, at most a batch and not past
// levelEnd (the end of lo's level), and returns where the batch ends. The chunks
// hold the results in order.
func (p *pool) expand(lo, levelEnd int) int {
	hi := lo
	for c := range p.chunks {
		ch := &p.chunks[c]
		ch.lo, ch.hi = hi, min(hi+chunkStates, levelEnd)
		hi = ch.hi
	}
	var next atomic.Int32
	work := func(w *search) {
		for {
			c := int(next.Add(1)) - 1
			if c >= len(p.chunks) {
				return
			}
			w.expandChunk(&p.chunks[c], levelEnd)
		}
	}
	var wg sync.WaitGroup
	for _, w := range p.workers[1:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work(w)
		}()
	}
	work(p.workers[0])
	wg.Wait()
	p.bytes = 0
	for c := range p.chunks {
		ch := &p.chunks[c]
		p.bytes += int64(cap(ch.keys)) + int64(cap(ch.succs))*48 + int64(cap(ch.exps))*48
	}
	return hi
}

// expandChunk expands the chunk's states, each into its own expansion.
func (x *search) expandChunk(ch *chunk, levelEnd int) {
	ch.exps, ch.succs, ch.keys = ch.exps[:0], ch.succs[:0], ch.keys[:0]
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
	m := x.m
	if err := m.decode(x.st.key(k), x.cur); err != nil {
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
			e.reduced = true
		}
	}
	e.single = len(x.trs) == 1
	restart := !m.timed && x.opt.Time == TimeAuto
	for _, t := range x.trs {
		x.next.copyFrom(x.cur)
		x.timerSet = false
		f := x.apply(x.next, t)
		if restart && x.timerSet {
			ch.succs = append(ch.succs, succ{timer: true})
			return nil
		}
		if f != nil {
			ch.succs = append(ch.succs, succ{found: f})
			return nil
		}
		off := len(ch.keys)
		ch.keys = m.encode(ch.keys, x.next)
		key := ch.keys[off:]
		if len(key) > MaxKey {
			ch.succs = append(ch.succs, succ{tooBig: true})
			return nil
		}
		ch.succs = append(ch.succs, succ{off: uint32(off), n: uint32(len(key)),
			hash: maphash.Bytes(x.st.seed, key), check: x.checkState(x.next)})
	}
	return nil
}
