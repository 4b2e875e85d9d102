// Package explore checks every interleaving of a small configuration: breadth-first
// over the deliveries of the messages in flight, the timers' expiries and the
// scenario's workload and faults, so that a broken property comes with a shortest run
// that breaks it. The run is handed back as a scenario in hold mode, which the kernel
// replays (and the browser shows) step by step.
//
// It does not run a kernel per state: it keeps a compact state of its own (node states
// interned, the network as the multiset of messages in flight, or FIFO queues per
// channel when the scenario says so) and carries out each transition on it with the
// kernel's own transition function (sim.Take, world.go), stepping each node once per
// distinct state and input; each state is stored once as a compact canonical key. See
// docs/explorer.md.
package explore

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/scenarios"
)

// Limits and defaults.
const (
	// MaxNodes is the largest configuration the explorer accepts; far fewer are
	// usually within reach (the interleavings grow exponentially).
	MaxNodes = 12

	// MaxWorkers bounds Options.Workers: each worker holds its own buffers.
	MaxWorkers = 256

	DefaultMaxStates = 100_000_000
	DefaultMaxMemory = 4 << 30
)

// Results.
const (
	ResultOK        = "ok"
	ResultViolation = "violation"
	ResultBounded   = "bounded"
)

// Bounds that stop a search before it is complete.
const (
	BoundStates    = "max-states"
	BoundMemory    = "max-memory"
	BoundTime      = "timeout"
	BoundCancelled = "cancelled"
)

// PropEntry is bounded eventual entry: every request is served within a bounded
// number of steps, whatever the order of events. The kernel reports its breach as a
// request pending too long, hence the same name.
const PropEntry = sim.PropPending

// TimeMode says whether the search keeps time.
type TimeMode uint8

const (
	// TimeAuto keeps time only for algorithms that set timers.
	TimeAuto TimeMode = iota
	// TimeOn keeps time: messages take between the network's least and largest delay,
	// timers fire when due, workload events happen at their time.
	TimeOn
	// TimeOff abstracts time away: any message in flight may arrive next, any armed
	// timer may fire, and workload events happen whenever they apply.
	TimeOff
)

// Options bound and tune a search.
type Options struct {
	MaxStates int64 // 0: DefaultMaxStates
	MaxMemory int64 // bytes; 0: DefaultMaxMemory
	Time      TimeMode
	// NoReduce searches the full graph: no canonical forms, even where the algorithm
	// declares them (the soundness tests compare both).
	NoReduce bool
	noPOR    bool // the search again for a shortest counterexample (see reduce.go)
	// Workers is how many goroutines expand states at once; 0: GOMAXPROCS. The result
	// does not depend on it (see parallel.go), only how soon it comes.
	Workers int
	// Go starts fn on a goroutine of the caller's. DESIGN.md keeps goroutines to
	// runtime/session, runtime/lecture, web and cmd, so the search starts none of its
	// own: without Go it runs on the caller's goroutine alone, whatever Workers says.
	Go func(fn func())

	// Progress, when set, is called about every ProgressEvery (default 1 s).
	Progress      func(Progress)
	ProgressEvery time.Duration
}

// Progress is a running search's figures.
type Progress struct {
	States          int64
	Transitions     int64
	Depth           int
	Seconds         float64
	StatesPerSecond float64
	Memory          int64
}

// Result is the JSON summary (CONTRACT: `playground explore`, DESIGN.md): result,
// property, states, transitions, depth, seconds and counterexample; the other fields
// are additions.
type Result struct {
	Result         string          `json:"result"`
	Property       string          `json:"property,omitempty"`
	Detail         string          `json:"detail,omitempty"`
	States         int64           `json:"states"`
	Transitions    int64           `json:"transitions"`
	Depth          int             `json:"depth"`
	Seconds        float64         `json:"seconds"`
	Counterexample *Counterexample `json:"counterexample,omitempty"`

	Algorithm string `json:"algorithm"`
	// Title is the algorithm's; Name its own name when it is a student's, written
	// from scratch (sim.Spec.Name), not one of the notes'.
	Title   string   `json:"title,omitempty"`
	Name    string   `json:"name,omitempty"`
	Nodes   int      `json:"nodes"`
	Timed   bool     `json:"timed"`
	Checked []string `json:"checked"`
	// EntryBound: every request was served within this many steps of the search.
	EntryBound int    `json:"entryBound,omitempty"`
	Bound      string `json:"bound,omitempty"` // the limit that stopped a bounded search
	// Ignored counts the scenario's deliver, fire and tell events, which the search
	// leaves out (it chooses deliveries and time-outs itself; a tell never reaches
	// the algorithm).
	Ignored int `json:"ignored,omitempty"`
	// Reduction lists the reductions the search used ("canonical": the algorithm's
	// canonical forms); none for a full search.
	Reduction []string `json:"reduction,omitempty"`
	// Workers is how many goroutines expanded states (nothing else in the result
	// depends on it).
	Workers int    `json:"workers"`
	Message string `json:"message"`
	Memory  int64  `json:"memory"` // bytes held by the search at the end
	// Storage splits Memory by what it holds (Memory also counts the next growth of
	// the largest table segment, and the workers' buffers).
	Storage *Storage `json:"storage,omitempty"`
}

// Storage is what a search holds, in bytes, by kind.
type Storage struct {
	// States: the stored states (their parts, pairs and roots, and parents):
	// divided by the number of states, what a stored state costs.
	States int64 `json:"states"`
	// Edges: the graph kept for the liveness check (mutual exclusion algorithms).
	Edges int64 `json:"edges"`
	// Interned: node states, messages and memoised steps.
	Interned int64 `json:"interned"`
}

// Counterexample is the shortest run found that breaks the property.
type Counterexample struct {
	// Scenario replays the run through the kernel: hold mode, one event per step of
	// the path (deliver, drop, fire, and the workload).
	Scenario *scenarios.Scenario `json:"scenario"`
	// Link opens it in the browser at Step, where the violation shows.
	Link string `json:"link,omitempty"`
	Step int    `json:"step"`
	// Replayed is true when the kernel's monitors reported the property on replay.
	Replayed bool `json:"replayed"`
	// Path says each step in words.
	Path []string `json:"path"`
}

// InputError is a scenario the explorer cannot take; Field names the culprit.
type InputError struct {
	Field  string
	Reason string
}

func (e *InputError) Error() string {
	if e.Field == "" {
		return "explore: " + e.Reason
	}
	return "explore: " + e.Field + ": " + e.Reason
}

// Explore searches every interleaving of the scenario.
func Explore(ctx context.Context, sc *scenarios.Scenario, opt Options) (*Result, error) {
	cfg, err := sc.Config()
	if err != nil {
		return nil, err
	}
	return exploreConfig(ctx, sc, cfg, opt)
}

// exploreConfig is Explore on the scenario's configuration (tests give one with an
// algorithm of their own).
func exploreConfig(ctx context.Context, sc *scenarios.Scenario, cfg sim.Config, opt Options) (*Result, error) {
	for k, a := range cfg.Actions {
		if a.Do == sim.ActNetwork {
			return nil, &InputError{Field: fmt.Sprintf("events[%d].do", k), Reason: `"network" changes are not explored (explore each network model on its own)`}
		}
	}
	if opt.MaxStates <= 0 {
		opt.MaxStates = DefaultMaxStates
	}
	if opt.MaxMemory <= 0 {
		opt.MaxMemory = DefaultMaxMemory
	}
	if opt.ProgressEvery <= 0 {
		opt.ProgressEvery = time.Second
	}
	if opt.Workers < 0 || opt.Workers > MaxWorkers {
		return nil, &InputError{Field: "workers", Reason: fmt.Sprintf("%d is not allowed (1 to %d, or 0 for one per core)", opt.Workers, MaxWorkers)}
	}
	start := time.Now()
	timed := opt.Time == TimeOn
	untimed := untimedApplies(cfg, &opt) // answer without time first (untimed.go)
	for {
		x, err := newSearch(cfg, timed, &opt)
		if err != nil {
			return nil, err
		}
		x.start = start
		if !timed && untimed {
			x.untimed = true
		}
		res, err := x.explore(ctx, sc)
		if errors.Is(err, errRestartTimed) || errors.Is(err, errUntimedInconclusive) {
			timed = true
			x.release()
			continue
		}
		if err != nil {
			return nil, err
		}
		if x.reduced > 0 && res.Result == ResultViolation && !x.terminal {
			// Partial-order reduction keeps the violation but not always its
			// shortest run: search again without it, as far as the bounds allow.
			o := opt
			o.noPOR = true
			timed := x.m.timed
			x.release()
			y, err := newSearch(cfg, timed, &o)
			if err != nil {
				return nil, err
			}
			y.start = start
			again, err := y.explore(ctx, sc)
			if err != nil {
				return nil, err
			}
			if again.Result == ResultViolation {
				again.Reduction = append(again.Reduction, "partial-order (searched again for a shortest run)")
				res = again
			} else {
				res.Message += "; it may not be a shortest run (the search without partial-order reduction was " + again.Result + ")"
			}
		}
		res.Seconds = time.Since(start).Seconds()
		res.Workers = opt.workers()
		return res, nil
	}
}

// releaseAfter is the size of an abandoned search after which its memory is
// collected before the next search starts.
const releaseAfter = 8 << 20

// release drops a search that another follows (with time, or without partial-order
// reduction): its store is garbage, but the collector's next cycle may come late, and
// until then the process would hold both searches, twice what the memory bound says.
// A large one is collected at once.
func (x *search) release() {
	big := x.memory() >= releaseAfter
	x.st, x.it, x.pool = nil, nil, nil
	if big {
		runtime.GC()
	}
}

func newSearch(cfg sim.Config, timed bool, opt *Options) (*search, error) {
	m, err := newModel(cfg, timed)
	if err != nil {
		return nil, err
	}
	x := &search{m: m, it: newInterner(m), st: newStore(m.nparts(), !m.election), opt: opt}
	if !opt.NoReduce {
		x.canon = m.spec.Canon
		x.por = !opt.noPOR && x.porApplies()
		x.spor = !opt.noPOR && x.sporApplies()
	}
	return x, nil
}

// explore runs the search, then the liveness check, and words the result.
func (x *search) explore(ctx context.Context, sc *scenarios.Scenario) (res *Result, err error) {
	defer func() {
		// An algorithm that panics is a bug in the algorithm; say which, do not crash.
		if v := recover(); v != nil {
			err = fmt.Errorf("explore: %s panicked during the search: %v", x.m.spec.Slug, v)
		}
	}()
	out, err := x.run(ctx)
	if err != nil {
		return nil, err
	}
	if x.timeless() && (out.found != nil || out.bound != "") && !x.clockStopped(out.bound) {
		return nil, errUntimedInconclusive
	}
	res = &Result{
		Algorithm: x.m.spec.Slug, Title: x.m.spec.Title, Name: x.m.spec.Name, Nodes: x.m.n, Timed: x.m.timed,
		// Depth counts from the very start, so the events at time 0 (folded into the
		// initial state of an untimed search) count as steps, as in a counterexample.
		States: int64(x.st.count), Transitions: x.transitions, Depth: x.depth + len(x.m.start),
		Checked: x.checked(), Ignored: x.m.ignored,
	}
	if x.canon != nil {
		res.Reduction = append(res.Reduction, "canonical")
	}
	switch {
	case out.bound != "" && x.timeless():
		res.Reduction = append(res.Reduction, ReductionUntimedStopped)
	case out.found != nil || out.bound != "":
	case x.timeless():
		// Proved without time: the waiting states are checked for cycles that time
		// allows, and there is no entry bound (untimed.go).
		if out, err = x.fairWaits(ctx); err != nil {
			return nil, err
		}
		switch {
		case out.bound == "":
			res.Reduction = append(res.Reduction, ReductionUntimed)
		case x.clockStopped(out.bound):
			res.Reduction = append(res.Reduction, ReductionUntimedStopped)
		default:
			return nil, errUntimedInconclusive
		}
	case !x.m.election:
		out, res.EntryBound, err = x.liveness(ctx)
		if err != nil {
			return nil, err
		}
	}
	if x.reduced > 0 {
		res.Reduction = append(res.Reduction, "partial-order")
		// The longest wait is a length, which the reduction does not keep.
		res.EntryBound = 0
	}
	res.Memory = x.memory()
	res.Storage = &Storage{States: x.st.stateBytes(), Edges: x.st.edgeBytes(), Interned: x.it.bytes.Load()}
	switch {
	case out.bound != "":
		res.Result, res.Bound = ResultBounded, out.bound
		res.Message = boundMessage(out.bound, x.opt, res)
	case out.found != nil:
		res.Result, res.Property, res.Detail = ResultViolation, out.found.property, out.found.detail
		x.terminal = out.repeat == 0 && out.found.property == sim.PropDeadlock
		cx, depth, err := x.counterexample(sc, out)
		if err != nil {
			return nil, err
		}
		res.Counterexample, res.Depth = cx, depth
		res.Message = fmt.Sprintf("%s is broken: %s (a shortest run takes %d steps)", PropertyWords(out.found.property), out.found.detail, depth)
	default:
		res.Result = ResultOK
		res.Message = fmt.Sprintf("every property holds in all %d reachable states (deepest at %d steps)", res.States, res.Depth)
		if res.EntryBound > 0 {
			res.Message += fmt.Sprintf("; every request is served within %d steps", res.EntryBound)
		}
		if x.timeless() {
			res.Message += " without time, which covers every timed run; every cycle in which a process could wait for ever keeps a message in flight, a timer armed or a process in the CS for ever, which time forbids, so every request is served"
		}
	}
	return res, nil
}

// ReductionUntimedStopped is listed when the search without time (untimed.go) was
// stopped by the time limit or a cancel before it could answer: the search with time
// would meet the same deadline at once, so the result is the untimed search's, bounded.
const ReductionUntimedStopped = "untimed (stopped before an answer; the search with time was not tried)"

// clockStopped reports whether bound is the time limit or a cancel, which a search
// started after it would meet at once.
func (x *search) clockStopped(bound string) bool {
	return bound == BoundTime || bound == BoundCancelled
}

// PropertyWords names a property for people: "deadlock" is the property of having
// none, and so on.
func PropertyWords(p string) string {
	switch p {
	case sim.PropMutex:
		return "mutual exclusion"
	case sim.PropDeadlock:
		return "deadlock freedom"
	case sim.PropLeader:
		return "agreement on one leader"
	case PropEntry:
		return "bounded entry"
	}
	return p
}

func (x *search) checked() []string {
	if x.m.election {
		return []string{sim.PropLeader}
	}
	return []string{sim.PropMutex, sim.PropDeadlock, PropEntry}
}

func boundMessage(bound string, opt *Options, res *Result) string {
	what := ""
	switch bound {
	case BoundStates:
		what = fmt.Sprintf("the state limit (--max-states %d) was reached", opt.MaxStates)
	case BoundMemory:
		what = fmt.Sprintf("the memory limit (--max-memory %d bytes) was reached", opt.MaxMemory)
	case BoundTime:
		what = "the time limit (--timeout) was reached"
	default:
		what = "the search was cancelled"
	}
	return fmt.Sprintf("bounded: %s after %d states and depth %d; no violation up to there, but the search is not complete, so nothing is proved", what, res.States, res.Depth)
}
