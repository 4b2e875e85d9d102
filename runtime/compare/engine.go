package compare

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/teach-dist/playground/internal/defaults"
	"github.com/teach-dist/playground/runtime/cost"
	"github.com/teach-dist/playground/runtime/fairq"
	"github.com/teach-dist/playground/runtime/sim"
)

// Options configure an Engine. Zero values take the defaults.
type Options struct {
	Limits    Limits        // default DefaultLimits()
	Slots     int           // comparisons computed at once, whatever the requests (default 2)
	CacheSize int           // comparisons kept (default 32)
	Timeout   time.Duration // one comparison at most, once it runs (default 30 s)
	// Share is how many slots one client (an IPv4 address or an IPv6 /64) holds while
	// another waits (default 1); Queue how many comparisons one client may have
	// waiting (default 4). Waiting comparisons are served fairly (runtime/fairq).
	Share, Queue int
	// Hold, if set, is called when a comparison gets its slot, before it runs: tests
	// of the server hold comparisons there to keep the slots busy. An error ends the
	// comparison with it.
	Hold func(ctx context.Context, cq Query) error
	// Charge, if set, is told the time each comparison computed for a client took:
	// the server's fair share of the CPU counts it (runtime/session/cpu.go).
	Charge func(client string, d time.Duration)
}

func (o Options) withDefaults() Options {
	if o.Limits == (Limits{}) {
		o.Limits = DefaultLimits()
	}
	defaults.Positive(&o.Slots, 2)
	defaults.Positive(&o.CacheSize, 32)
	defaults.Positive(&o.Timeout, 30*time.Second)
	return o
}

// Engine computes comparisons, a few at once, each on up to GOMAXPROCS goroutines,
// and keeps the recent ones: a shared link opened by a whole class is computed once.
type Engine struct {
	opts  Options
	queue *fairq.Queue
	work  func(context.Context, Query) (*Result, error) // e.compute; tests gate it
	jobs  jobs                                          // jobs.go

	mu    sync.Mutex
	cache map[string]*Result // by Query.Canonical: results depend only on it
	order []string
}

// New returns an engine with an empty cache.
func New(opts Options) *Engine {
	opts = opts.withDefaults()
	e := &Engine{opts: opts, queue: fairq.New(fairq.Options{Slots: opts.Slots, Share: opts.Share, PerClient: opts.Queue}),
		cache: map[string]*Result{}}
	e.work = e.compute
	e.jobs.byKey = map[string]*pending{}
	e.jobs.ctx, e.jobs.cancel = context.WithCancel(context.Background())
	return e
}

// Limits are the limits queries are parsed within.
func (e *Engine) Limits() Limits { return e.opts.Limits }

// Timeout is how long one comparison may take.
func (e *Engine) Timeout() time.Duration { return e.opts.Timeout }

// Cell is what one algorithm measured at one N, over the seeds.
type Cell struct {
	Runs, Failed         int
	Entries, Unserved    int
	Checked, Violations  int
	Elections, Unsettled int
	Values               map[string]Agg // metric key -> over the seeds
	Theory               map[string][]cost.Theory
	// TheoryOf says, per metric key, which n the figures of Theory are evaluated at
	// ("n = 6 live processes": a ring election's formulas count the live ring).
	TheoryOf      map[string]string
	FirstError    string
	ViolationSeed uint64 // the first seed whose run broke the ordering
}

// Agg aggregates one metric's per-run means (in T for time metrics).
type Agg struct {
	N             int
	Sum, Min, Max float64
}

func (a *Agg) add(v float64) {
	if a.N == 0 {
		a.Min, a.Max = v, v
	}
	a.N++
	a.Sum += v
	a.Min = min(a.Min, v)
	a.Max = max(a.Max, v)
}

// Mean is the mean over the runs that measured something.
func (a Agg) Mean() (float64, bool) {
	if a.N == 0 {
		return 0, false
	}
	return a.Sum / float64(a.N), true
}

// Result is every cell of a comparison.
type Result struct {
	Query    Query
	Cells    map[string]map[int]*Cell // slug -> N -> cell
	Runs     int
	Elapsed  time.Duration
	Computed time.Time
}

type job struct {
	spec *sim.Spec
	n    int
	seed uint64
}

// Compare returns the comparison cq asks for, from the cache or computed within the
// engine's timeout; ctx ending stops it.
func (e *Engine) Compare(ctx context.Context, cq Query) (*Result, error) {
	return e.CompareFor(ctx, "", cq, nil)
}

// ErrQueueFull refuses a comparison when its client already has Options.Queue waiting.
var ErrQueueFull = fairq.ErrTooMany

// CompareFor is Compare for client (a key of web/ratelimit): a comparison not in the
// cache waits for a slot in a queue fair across clients, position hearing its place
// (1: next) while it waits, and 0 when it runs; the timeout counts from when it runs.
func (e *Engine) CompareFor(ctx context.Context, client string, cq Query, position func(int)) (*Result, error) {
	key := cq.Canonical()
	e.mu.Lock()
	res, ok := e.cache[key]
	e.mu.Unlock()
	if ok {
		return res, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	release, err := e.queue.Acquire(ctx, client, position)
	if err != nil {
		return nil, err
	}
	defer release()
	if position != nil {
		position(0) // it runs now
	}
	e.mu.Lock()
	res, ok = e.cache[key] // computed for another client while this one waited
	e.mu.Unlock()
	if ok {
		return res, nil
	}
	ctx, cancel := context.WithTimeout(ctx, e.opts.Timeout)
	defer cancel()
	if e.opts.Hold != nil {
		if err := e.opts.Hold(ctx, cq); err != nil {
			return nil, err
		}
	}
	began := time.Now()
	res, err = e.work(ctx, cq)
	if e.opts.Charge != nil {
		e.opts.Charge(client, time.Since(began))
	}
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.cache[key]; !ok {
		e.cache[key] = res
		e.order = append(e.order, key)
		if len(e.order) > e.opts.CacheSize {
			delete(e.cache, e.order[0])
			e.order = e.order[1:]
		}
	}
	return res, nil
}

// compute does every run of cq, in parallel, until done or ctx ends.
func (e *Engine) compute(ctx context.Context, cq Query) (*Result, error) {
	start := time.Now()
	var jobs []job
	for _, spec := range cq.Specs {
		for _, n := range cq.Ns {
			for s := range cq.Seeds {
				jobs = append(jobs, job{spec, n, uint64(s + 1)})
			}
		}
	}
	results := make([]cost.Result, len(jobs))
	errs := make([]error, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				j := jobs[k]
				cfg, err := WorkloadConfig(j.spec, j.n, cq.Workload, j.seed, e.opts.Limits.MaxEvents)
				if err == nil {
					results[k], err = cost.Replay(cfg, nil, math.MaxInt)
					// Measured against the figures that describe this workload: a
					// heavy election has every live process start it at once.
					sit := cost.SituationOf(cfg)
					for i := range results[k].Metrics {
						m := &results[k].Metrics[i]
						m.Theory = cost.TheoryIn(j.spec, m.Key, m.TheoryN, cost.MeanDelay(cfg.Network), sit)
					}
				}
				errs[k] = err
			}
		}()
	}
	var err error
feed:
	for k := range jobs {
		select {
		case next <- k:
		case <-ctx.Done():
			err = ctx.Err()
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	res := &Result{Query: cq, Cells: map[string]map[int]*Cell{}, Runs: len(jobs), Computed: time.Now()}
	for k, j := range jobs {
		byN := res.Cells[j.spec.Slug]
		if byN == nil {
			byN = map[int]*Cell{}
			res.Cells[j.spec.Slug] = byN
		}
		c := byN[j.n]
		if c == nil {
			c = &Cell{Values: map[string]Agg{}, Theory: map[string][]cost.Theory{}, TheoryOf: map[string]string{}}
			byN[j.n] = c
		}
		c.add(results[k], errs[k], j.seed)
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

func (c *Cell) add(r cost.Result, err error, seed uint64) {
	c.Runs++
	if err != nil {
		c.Failed++
		if c.FirstError == "" {
			c.FirstError = fmt.Sprintf("seed %d: %v", seed, err)
		}
		if !errors.Is(err, sim.ErrEventLimit) {
			return
		}
	}
	c.Entries += r.Entries
	c.Unserved += r.Unserved
	if o := r.Ordering; o != nil {
		c.Checked += o.Checked
		c.Violations += o.Violations
		if o.Violations > 0 && c.ViolationSeed == 0 {
			c.ViolationSeed = seed
		}
	}
	for _, el := range r.Elections {
		if el.Settled != nil {
			c.Elections++
		} else {
			c.Unsettled++
		}
	}
	for _, m := range r.Metrics {
		c.Theory[m.Key] = m.Theory
		c.TheoryOf[m.Key] = m.TheoryOf
		v := m.Mean
		if m.Unit == cost.UnitTime {
			v = m.MeanT
		}
		if v == nil {
			continue
		}
		a := c.Values[m.Key]
		a.add(*v)
		c.Values[m.Key] = a
	}
}
