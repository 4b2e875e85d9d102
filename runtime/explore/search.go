package explore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/teach-dist/playground/runtime/sim"
)

// tkind is what a transition of the search does.
type tkind uint8

const (
	tDeliver tkind = iota // a: index in msgs
	tLose                 // a: index in msgs (network.loss)
	tDrop                 // a: drop event (token), b: index in msgs
	tTimer                // a: index in timers
	tRelease              // a: node whose time in the CS is over
	tEvent                // a: workload event
	tTick                 // time passes (timed searches)
)

type trans struct {
	kind tkind
	a, b int32
}

// finding is a broken property.
type finding struct {
	property string
	detail   string
}

// errRestartTimed stops an untimed search that met a timer: it is redone timed.
var errRestartTimed = errors.New("explore: the algorithm sets timers")

type search struct {
	m        *model
	it       *interner
	st       *store
	opt      *Options
	canon    *sim.Canon // the algorithm's canonical forms, nil for a full search
	por      bool       // partial-order reduction (see ample)
	reduced  int64      // states expanded by one transition only
	terminal bool       // the violation found is a dead end (its length survives the reduction)
	// untimed: an untimed search that goes on past timers, answering a timed question
	// (untimed.go).
	untimed bool

	cur, next *state
	trs       []trans
	wl        []trans // quiescent's own buffer
	key       []byte
	tick      int32 // the last tick's length

	transitions int64
	depth       int
	start       time.Time
}

// initial builds the state after every node's Init, in index order, as sim.New does;
// an untimed search then runs the events at time 0 (the kernel runs them before any
// message can arrive), recording them in path if it is not nil.
func (x *search) initial(s *state, path *[]pstep) *finding {
	var found *finding
	for i := range s.nodes {
		s.nodes[i] = nodeSt{alive: true, leader: -1}
	}
	if x.m.drops != nil && !x.m.timed {
		s.avail = 1<<len(x.m.drops) - 1
		if len(x.m.drops) == 64 {
			s.avail = ^uint64(0)
		}
	}
	for i := range s.nodes {
		r := x.it.step(i, x.it.fresh[i], sim.Init, 0)
		if f := x.effects(s, i, r); f != nil && found == nil {
			found = f
		}
	}
	for _, k := range x.m.start {
		if path != nil {
			*path = append(*path, x.describe(s, trans{kind: tEvent, a: k}))
		}
		if f := x.act(s, k); f != nil && found == nil {
			found = f
		}
	}
	x.canonical(s)
	return found
}

// outcome is how a search ended.
type outcome struct {
	found *finding
	last  uint32 // the state reached by the violating path (or its parent, with via)
	via   int    // -1, or the number of the violating transition out of last
	bound string // the limit that stopped the search, if any

	// A lasso (liveness): the states of the path, the cycle being its last repeat
	// steps, and the process it keeps waiting.
	states []uint32
	repeat int
	waiter int
	kernel string // the property the kernel reports for it, if not the same
}

// run is the breadth-first search.
func (x *search) run(ctx context.Context) (outcome, error) {
	m := x.m
	x.cur, x.next = newState(m), newState(m)
	found := x.initial(x.cur, nil)
	if x.restartTimed() {
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
	levelEnd := 1
	lastCheck := time.Now()
	checked := 0 // states when the limits were last checked
	for k := 0; k < x.st.count; k++ {
		if k == levelEnd {
			x.depth++
			levelEnd = x.st.count
		}
		if err := m.decode(x.st.key(k), x.cur); err != nil {
			return outcome{}, err
		}
		x.trs = x.enumerate(x.cur, x.trs)
		if x.por {
			t, err := x.ample(x.cur, x.trs, levelEnd)
			if err != nil {
				return outcome{}, err
			}
			if t >= 0 {
				// The one transition stands for all; ord stays its number in the
				// full list, which is how a path names it.
				x.trs[0], x.trs = x.trs[t], x.trs[:1]
				x.reduced++
			}
		}
		x.st.startEdges(k)
		for ord, t := range x.trs {
			x.next.copyFrom(x.cur)
			f := x.apply(x.next, t)
			if x.restartTimed() {
				return outcome{}, errRestartTimed
			}
			x.transitions++
			if f != nil {
				if x.por && len(x.trs) == 1 {
					return outcome{}, fmt.Errorf("explore: %s: a delivery to an inert process broke a property (its Inert declaration is wrong)", m.spec.Slug)
				}
				return outcome{found: f, last: uint32(k), via: ord}, nil
			}
			x.key = m.encode(x.key[:0], x.next)
			if len(x.key) > MaxKey {
				return outcome{}, fmt.Errorf("explore: a state takes more than %d bytes to encode (too many messages in flight?)", MaxKey)
			}
			idx, isNew := x.st.insert(x.key, uint32(k))
			x.st.addEdge(idx)
			if !isNew {
				continue
			}
			if int64(x.st.count) > x.opt.MaxStates {
				return outcome{bound: BoundStates}, nil
			}
			// A state with many successors adds many states per expansion: check
			// by states added too, not only every 1024 expansions.
			if x.st.count-checked >= checkEvery {
				checked = x.st.count
				if b := x.limits(ctx); b != "" {
					return outcome{bound: b}, nil
				}
			}
			if f := x.checkState(x.next); f != nil {
				return outcome{found: f, last: idx, via: -1}, nil
			}
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
	x.st.startEdges(x.st.count) // close the last state's edges
	return outcome{}, nil
}

// restartTimed reports whether an untimed search met a timer and must be redone timed.
func (x *search) restartTimed() bool {
	return !x.m.timed && x.it.sawTimer && x.opt.Time == TimeAuto && !x.untimed
}

// limits reports which bound, if any, stops the search now.
func (x *search) limits(ctx context.Context) string {
	if x.opt.MaxStates > 0 && int64(x.st.count) >= x.opt.MaxStates {
		return BoundStates
	}
	if x.opt.MaxMemory > 0 && x.memory() >= x.opt.MaxMemory {
		return BoundMemory
	}
	if err := ctx.Err(); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return BoundTime
		}
		return BoundCancelled
	}
	return ""
}

// checkEvery is how many new states may be added between two checks of the limits.
const checkEvery = 8192

func (x *search) memory() int64 { return x.st.memory() + x.it.bytes }

func (x *search) progress() Progress {
	secs := time.Since(x.start).Seconds()
	p := Progress{States: int64(x.st.count), Transitions: x.transitions, Depth: x.depth, Seconds: secs, Memory: x.memory()}
	if secs > 0 {
		p.StatesPerSecond = float64(x.st.count) / secs
	}
	return p
}
