package session

import (
	"context"
	"math"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"time"

	"github.com/teach-dist/playground/internal/defaults"
)

// Fair CPU. Every piece of work a client's requests cause (a session's steps, its
// replays and seeks, wakes from rest, and, charged by the web layer, its exports,
// comparisons and explorer searches) is measured and charged to the client (an IPv4
// address or an IPv6 /64). A session's work is the CPU time of its thread while it
// works (the goroutine holds its thread meanwhile; the wall clock where the thread's
// clock is not read); the web layer charges the time its requests take. A CPU keeps
// each client's recent use, decayed with a half-life, as a rate in cores.
//
// The server's CPU (Cores) is shared by max-min fairness over those rates: when the
// clients together use more than Cores, the level L is the rate at which
// sum(min(rate, L)) = Cores, and a client above L is over its share. The process may
// get fewer processors than Cores (a machine shared with other jobs): when its
// goroutines wait for a processor (more than one in fifty of them 5 ms or more, from
// the Go scheduler's own latencies), the CPU is busy whatever the rates say, and the
// capacity is half of what the clients use. A client is slowed only against what
// others use: one alone (no other client worked in the last seconds) never is, so a
// lecture hall of 300 behind one NAT, one client, has the whole server while nobody
// else works; a visitor whose page and snapshot cost a few milliseconds is far under
// any level and never slowed. Cores defaults to three quarters of the processors, so
// that a newcomer finds a processor free and is served at once.
//
// A client over its share is held to it three ways:
//
//   - its runs step at a lower effective speed (Factor: a power of two from 1/2 to
//     1/64, as far under as it is over), which its pages show (the clock's
//     `slowed`); the speed it chose comes back once it is under its share again;
//   - a run too heavy to keep even that pace works at most slowQuantum per wake and
//     then rests for its factor's part of the time (pace.go);
//   - its sessions take turns (Turn): one works at a time, and after each piece of
//     work the turn rests (Rest) so that the client's work keeps one processor busy
//     for at most a quarter of the fair level's part of the time (at least an eighth
//     of one), the time it held the turn counted on the wall clock. However many runs
//     it has, anyone else's request finds a processor free.
//
// While slowed, a client is charged its work divided by its factor and the time its
// sessions wait for their turn: what it asks for, not the little it gets; and it stays
// slowed for a half-life after it was last found over its share. So it stays slowed
// while it asks for more than its share, and is back at its own speed a few
// half-lives after it asks for less.

// CPUOptions tune a CPU. Zero values take the defaults.
type CPUOptions struct {
	// Cores is the CPU the clients share, in processors (default 3/4 of GOMAXPROCS).
	Cores float64
	// HalfLife is how fast a client's past use fades (default 2 s).
	HalfLife time.Duration
	// Now is the clock use decays by (default time.Now); Meter measures a session's
	// work on the goroutine that holds its thread (default the thread's CPU clock);
	// Starved says whether goroutines wait for a processor (default: the Go
	// scheduler's latencies). Tests give their own.
	Now     func() time.Time
	Meter   func() time.Duration
	Starved func() bool
}

// MinFactor is the slowest a client over its share is made to go.
const MinFactor = 1.0 / 64

// CPU accounts the work of every client. Its methods are safe for concurrent use; a
// nil *CPU accounts nothing and slows nobody.
type CPU struct {
	opts CPUOptions
	tau  float64 // seconds: the decay's time constant

	mu      sync.Mutex
	by      map[string]*cpuUse
	turns   map[string]chan struct{} // a client over its share works one session at a time
	level   float64                  // cores; +Inf when nobody is over its share
	levelAt time.Time
}

type cpuUse struct {
	acc  float64 // seconds of work, decayed to at
	at   time.Time
	over time.Time // when it was last found over its share
}

// maxCPUClients bounds the clients a CPU remembers; past it those whose use has
// faded are forgotten, and past twice it every use starts again.
const maxCPUClients = 10_000

// maxRest bounds a turn's rest after one piece of work (a step of a huge run can take
// tens of milliseconds; the client then waits a few seconds, not minutes).
const maxRest = 2 * time.Second

// levelEvery is how often the level is computed again (Factor is asked at every
// pacing tick of every session).
const levelEvery = 100 * time.Millisecond

var processStart = time.Now()

// NewCPU returns an accountant with these options.
func NewCPU(opts CPUOptions) *CPU {
	defaults.Positive(&opts.Cores, 0.75*float64(runtime.GOMAXPROCS(0)))
	defaults.Positive(&opts.HalfLife, 2*time.Second)
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Meter == nil {
		opts.Meter = threadCPU
	}
	if opts.Starved == nil {
		opts.Starved = (&schedWatch{}).starved
	}
	return &CPU{opts: opts, tau: opts.HalfLife.Seconds() / math.Ln2, by: map[string]*cpuUse{},
		turns: map[string]chan struct{}{}, level: math.Inf(1)}
}

// Turn waits until none of client's other work holds its turn, and takes it; release
// gives it back after rest. The sessions of a client over its share take turns (one
// works at a time) and the turn rests after each piece of work for the factor's part
// of the time (rest), so that the client's work, however many runs it has, keeps at
// most one processor busy, and that only for its factor of the time: anyone else's
// work finds a processor free. ok is false if ctx ended first.
func (c *CPU) Turn(ctx context.Context, client string) (release func(rest time.Duration), ok bool) {
	c.mu.Lock()
	t := c.turns[client]
	if t == nil {
		if len(c.turns) >= maxCPUClients {
			clear(c.turns) // holders release the channels they took
		}
		t = make(chan struct{}, 1)
		c.turns[client] = t
	}
	c.mu.Unlock()
	select {
	case t <- struct{}{}:
		return func(rest time.Duration) {
			if rest <= 0 {
				<-t
				return
			}
			time.AfterFunc(min(rest, maxRest), func() { <-t })
		}, true
	case <-ctx.Done():
		return nil, false
	}
}

// Cores is the CPU the clients share.
func (c *CPU) Cores() float64 { return c.opts.Cores }

// Start begins measuring a piece of work; Done charges it to client.
func (c *CPU) Start() time.Duration {
	if c == nil {
		return 0
	}
	return c.opts.Meter()
}

// Done charges client the work measured since start.
func (c *CPU) Done(client string, start time.Duration) {
	if c == nil {
		return
	}
	c.Charge(client, c.opts.Meter()-start)
}

// DoneSlowed is Done for work done while client was slowed to factor: it is charged
// as the work it stands for at the client's own pace (the work divided by factor),
// so that a client held to its share by slowing still counts as wanting more than it,
// and stays slowed until it truly asks less.
func (c *CPU) DoneSlowed(client string, start time.Duration, factor float64) {
	if c == nil {
		return
	}
	d := c.opts.Meter() - start
	if factor > 0 && factor < 1 {
		d = time.Duration(float64(d) / factor)
	}
	c.Charge(client, d)
}

// Charge adds d of work to client's use.
func (c *CPU) Charge(client string, d time.Duration) {
	if c == nil || d <= 0 {
		return
	}
	now := c.opts.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	u := c.by[client]
	if u == nil {
		if len(c.by) >= maxCPUClients {
			c.forgetLocked(now)
		}
		u = &cpuUse{at: now}
		c.by[client] = u
	}
	c.decay(u, now)
	u.acc += d.Seconds()
}

// decay brings u's use to now.
func (c *CPU) decay(u *cpuUse, now time.Time) {
	if dt := now.Sub(u.at).Seconds(); dt > 0 {
		u.acc *= math.Exp(-dt / c.tau)
		u.at = now
	}
}

// forgetLocked drops the clients whose use has faded; if that is not enough, all.
func (c *CPU) forgetLocked(now time.Time) {
	for k, u := range c.by {
		c.decay(u, now)
		if u.acc < 1e-4 {
			delete(c.by, k)
		}
	}
	if len(c.by) >= maxCPUClients {
		clear(c.by)
	}
}

// Rate is client's recent use, in cores.
func (c *CPU) Rate(client string) float64 {
	if c == nil {
		return 0
	}
	now := c.opts.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	u := c.by[client]
	if u == nil {
		return 0
	}
	c.decay(u, now)
	return u.acc / c.tau
}

// Factor is the fraction of its chosen speed client's runs go at: 1 under its share,
// a power of two down to MinFactor over it.
func (c *CPU) Factor(client string) float64 {
	if c == nil {
		return 1
	}
	now := c.opts.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.levelAt.IsZero() || now.Sub(c.levelAt) >= levelEvery || now.Before(c.levelAt) {
		c.level, c.levelAt = c.levelLocked(now), now
	}
	u := c.by[client]
	if u == nil {
		return 1
	}
	c.decay(u, now)
	f := 1.0
	if !math.IsInf(c.level, 1) {
		f = factorOf(c.level, u.acc/c.tau)
	}
	switch {
	case f < 1:
		u.over = now
	case !u.over.IsZero() && now.Sub(u.over) < c.opts.HalfLife:
		// Slowing lowers what it uses at once, not what it asks for: it stays
		// slowed for a half-life after it was last over, instead of going back
		// to full speed and over again at every look.
		f = 0.5
	}
	return f
}

// Rest is how long a slowed client's turn rests after w of work: so long that its
// work keeps one processor busy for at most the fair level's part of the time
// (levelUse of it, and at least minUse), whatever its number of runs.
func (c *CPU) Rest(w time.Duration) time.Duration {
	c.mu.Lock()
	l := c.level
	c.mu.Unlock()
	u := min(max(l*levelUse, minUse), 1)
	if u >= 1 || w <= 0 {
		return 0
	}
	return time.Duration(float64(w) * (1/u - 1))
}

// levelUse is the part of the fair level a slowed client's work may take of one
// processor: a margin for the estimate, which counts the work's wall time.
const levelUse = 0.25

// minUse is the least part of a processor a slowed client's work keeps: however far
// over its share, its pages still answer (a snapshot waits about seven times its own
// cost, not seconds).
const minUse = 1.0 / 8

// factorOf is the factor of a client using rate when the level is level: the power of
// two at or under level/rate, 1 when the rate is within a tenth of the level.
func factorOf(level, rate float64) float64 {
	if rate <= level*1.1 {
		return 1
	}
	return max(math.Pow(2, math.Floor(math.Log2(level/rate))), MinFactor)
}

// levelLocked is the fair level of the rates now: +Inf when they fit in Cores, or
// when only one client works.
func (c *CPU) levelLocked(now time.Time) float64 {
	rates := make([]float64, 0, len(c.by))
	sum := 0.0
	for k, u := range c.by {
		c.decay(u, now)
		if u.acc < 1e-6 {
			delete(c.by, k)
			continue
		}
		r := u.acc / c.tau
		if r >= presentPart*c.opts.Cores {
			rates = append(rates, r)
			sum += r
		}
	}
	starved := c.opts.Starved()
	if len(rates) < 2 {
		return math.Inf(1) // nobody else waits
	}
	capacity := c.opts.Cores
	if starved {
		capacity = min(capacity, sum/2)
	}
	return waterLevel(rates, sum, capacity)
}

// presentPart is the least use of a client, as a part of Cores, that counts as its
// wanting the CPU now: a ten-thousandth (on two processors, a page's work fades under
// it within about twenty seconds).
const presentPart = 1e-4

// schedWatch tells from the Go scheduler's latencies whether goroutines wait for a
// processor: more than one in fifty of those that became runnable since the last
// look waited 5 ms or more.
type schedWatch struct {
	sample []metrics.Sample
	prev   []uint64
}

func (w *schedWatch) starved() bool {
	if w.sample == nil {
		w.sample = []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	}
	metrics.Read(w.sample)
	if w.sample[0].Value.Kind() != metrics.KindFloat64Histogram {
		return false
	}
	h := w.sample[0].Value.Float64Histogram()
	var total, slow uint64
	for i, n := range h.Counts {
		d := n
		if i < len(w.prev) {
			d = n - w.prev[i]
		}
		total += d
		if h.Buckets[i] >= 0.005 {
			slow += d
		}
	}
	w.prev = append(w.prev[:0], h.Counts...)
	return total > 0 && slow*50 > total
}

// waterLevel is L with sum(min(r, L)) = capacity over rates (whose sum is sum), or
// +Inf when they fit.
func waterLevel(rates []float64, sum, capacity float64) float64 {
	if sum <= capacity {
		return math.Inf(1)
	}
	slices.Sort(rates)
	below := 0.0 // the rates under the level, all taken whole
	for i, r := range rates {
		l := (capacity - below) / float64(len(rates)-i)
		if r >= l {
			return l
		}
		below += r
	}
	return rates[len(rates)-1]
}
