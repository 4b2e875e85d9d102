package compare

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// A comparison that has to wait for a slot runs as a job, apart from the request
// that asked for it: the page answers at once with the job's place in the queue and
// reloads itself, and each reload finds the job by its query (so a class opening the
// same link shares one) until its result is in the cache.

// jobs are the comparisons waiting or running, by Query.Canonical.
type jobs struct {
	mu     sync.Mutex
	byKey  map[string]*pending
	wg     sync.WaitGroup
	ctx    context.Context
	cancel context.CancelFunc
}

type pending struct {
	pos  atomic.Int64 // its place in the queue (1: next); 0 once it runs
	done chan struct{}
	res  *Result
	err  error
}

// jobWait bounds a job: its time in the queue and its run together.
const jobWait = 5 * time.Minute

// Status is what Submit found: the result, or the comparison's place in the queue
// (Position 0: it is running now), or why it failed.
type Status struct {
	Result   *Result
	Position int
	Err      error
}

// Submit returns cq's result if it is cached or done within wait; otherwise it
// makes sure a job computes it for client (one job per query) and returns the job's
// place. A client may have Options.Queue jobs waiting (ErrQueueFull past that).
func (e *Engine) Submit(ctx context.Context, client string, cq Query, wait time.Duration) Status {
	key := cq.Canonical()
	e.mu.Lock()
	res, ok := e.cache[key]
	e.mu.Unlock()
	if ok {
		return Status{Result: res}
	}
	e.jobs.mu.Lock()
	j := e.jobs.byKey[key]
	if j == nil {
		j = &pending{done: make(chan struct{})}
		j.pos.Store(1)
		e.jobs.byKey[key] = j
		e.jobs.wg.Add(1)
		go func() {
			defer e.jobs.wg.Done()
			ctx, cancel := context.WithTimeout(e.jobs.ctx, jobWait)
			defer cancel()
			j.res, j.err = e.CompareFor(ctx, client, cq, func(p int) { j.pos.Store(int64(p)) })
			e.jobs.mu.Lock()
			delete(e.jobs.byKey, key)
			e.jobs.mu.Unlock()
			close(j.done)
		}()
	}
	e.jobs.mu.Unlock()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-j.done:
		return Status{Result: j.res, Err: j.err}
	case <-timer.C:
	case <-ctx.Done():
		return Status{Err: ctx.Err()}
	}
	return Status{Position: int(j.pos.Load())}
}

// Close stops the jobs and waits for them.
func (e *Engine) Close() {
	e.jobs.cancel()
	e.jobs.wg.Wait()
}
