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
	it       *stepper
	st       *store
	opt      *Options
	canon    *sim.Canon // the algorithm's canonical forms, nil for a full search
	por      bool       // partial-order reduction on inert processes (see ample)
	spor     bool       // partial-order reduction on FIFO channels (see sporSet)
	pset     []trans    // sporSet's own buffer
	psets    []uint16   // sporSets' own buffer
	reduced  int64      // states expanded by a reduced set of transitions
	terminal bool       // the violation found is a dead end (its length survives the reduction)
	// untimed: an untimed search that goes on past timers, answering a timed question
	// (untimed.go).
	untimed bool

	// A worker's scratch (parallel.go): the search itself is worker 0.
	cur, next *state
	trs       []trans
	wl        []trans // quiescent's own buffer
	key       []byte
	partEnds  []int       // where each part of a state ends (encodeParts)
	from      []int8      // encodeParts: the sender of each message in flight
	refs      []partRef   // storeState and find: a state's parts
	tsCur     treeScratch // the state being expanded, as stored (load)
	tsSucc    treeScratch // a successor being looked up
	tsFind    treeScratch // storeState and find
	tsMerge   treeScratch // the merge's
	roots     *pairCache  // the merge's memory of recent roots
	tick      int32       // the last tick's length
	timerSet  bool        // the last apply set a timer
	w         world       // the search's state as sim.Take changes it (world.go)

	pool *pool // the workers and their buffers

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
		s.nodes[i] = nodeSt{id: x.it.fresh[i], alive: true, leader: -1}
	}
	if x.m.drops != nil && !x.m.timed {
		s.avail = 1<<len(x.m.drops) - 1
		if len(x.m.drops) == 64 {
			s.avail = ^uint64(0)
		}
	}
	for i := range s.nodes {
		if f := x.take(s, &sim.Transition{Kind: sim.TInit, Node: i}); f != nil && found == nil {
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

// restartTimed reports whether an untimed search met a timer and must be redone timed.
func (x *search) restartTimed() bool {
	return !x.m.timed && x.it.sawTimer.Load() && x.opt.Time == TimeAuto && !x.untimed
}

// limits reports which bound, if any, stops the search now.
func (x *search) limits(ctx context.Context) string {
	if x.opt.MaxStates > 0 && int64(x.st.count) >= x.opt.MaxStates {
		return BoundStates
	}
	if x.st.full() {
		return BoundMemory // a table of the store is full (tree.go)
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

func (x *search) memory() int64 {
	b := x.st.memory() + x.it.bytes.Load()
	if x.pool != nil {
		b += x.pool.bytes
	}
	return b
}

func (x *search) progress() Progress {
	secs := time.Since(x.start).Seconds()
	p := Progress{States: int64(x.st.count), Transitions: x.transitions, Depth: x.depth, Seconds: secs, Memory: x.memory()}
	if secs > 0 {
		p.StatesPerSecond = float64(x.st.count) / secs
	}
	return p
}

// load decodes state k into s.
func (x *search) load(k int, s *state) error {
	x.st.loadParts(k, &x.tsCur)
	return x.decodeParts(x.tsCur.parts, s)
}

// keyOf is state k's key (encode): the same exactly when the states are.
func (x *search) keyOf(k int) ([]byte, error) {
	s := newState(x.m)
	if err := x.load(k, s); err != nil {
		return nil, err
	}
	return x.m.encode(nil, s), nil
}

// tooBig reports whether a part encoded from off on (ends) is longer than MaxKey.
func (x *search) tooBig(off int) bool {
	for _, e := range x.partEnds {
		if e-off > MaxKey {
			return true
		}
		off = e
	}
	return false
}

// storeState stores s as a successor of parent (the merge only).
func (x *search) storeState(s *state, parent uint32) (uint32, error) {
	x.key, x.partEnds = x.encodeParts(x.key[:0], s, x.partEnds)
	if x.tooBig(0) {
		return 0, fmt.Errorf("explore: a state takes more than %d bytes to encode (too many messages in flight?)", MaxKey)
	}
	var root uint64
	var ok bool
	x.refs, root, ok = x.st.resolve(x.key, x.partEnds, nil, &x.tsFind, x.refs[:0], 0)
	if !ok {
		root = x.st.intern(x.key, x.refs, &x.tsFind)
	}
	k, _ := x.st.insert(root, parent, nil)
	return k, nil
}

// find returns the number of state s, if it is stored. It may run on a worker while
// the merge inserts.
func (x *search) find(s *state) (uint32, bool) {
	x.key, x.partEnds = x.encodeParts(x.key[:0], s, x.partEnds)
	var root uint64
	var ok bool
	x.refs, root, ok = x.st.resolve(x.key, x.partEnds, nil, &x.tsFind, x.refs[:0], 0)
	if !ok {
		return 0, false
	}
	return x.st.lookup(root)
}
