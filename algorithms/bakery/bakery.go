// Package bakery is Lamport's bakery algorithm carried over to message passing, as the
// notes adapt it: every process owns its choosing flag and its ticket number, writes
// them locally, and anyone else reads them with a request and a reply.
package bakery

import (
	_ "embed"

	"github.com/teach-dist/playground/algorithms/cs"
	"github.com/teach-dist/playground/algorithms/nodeid"
	"github.com/teach-dist/playground/algorithms/params"
	"github.com/teach-dist/playground/runtime/sim"
)

// Message types: a read request and its answer, for each of the two variables.
const (
	MsgReadNumber   = "READ-NUMBER"
	MsgNumber       = "NUMBER"
	MsgReadChoosing = "READ-CHOOSING"
	MsgChoosing     = "CHOOSING"
)

// Where a process is on its way to the CS, between cs.Released and cs.Held.
const (
	Doorway = "DOORWAY" // choosing a ticket
	Bakery  = "BAKERY"  // waiting for its turn
)

// TimerPoll is the timer that spaces out re-reads (stable: it appears in the trace).
const TimerPoll = "poll"

// canonNode is what the explorer may store instead of a node. rereads is a count for
// the inspector and seen a record of the last answer: no step reads either. The
// doorway's reads (read, nRead, highest) are reset when the next doorway starts and
// read only inside it, so outside the doorway they are forgotten.
func canonNode(nd sim.Node, _ bool) sim.Node {
	n := nd.(*node)
	c := n.Clone().(*node)
	c.rereads = 0
	clear(c.seen)
	if c.state != Doorway {
		clear(c.read)
		c.nRead, c.highest = 0, 0
	}
	return c
}

// inert: once the workload is over, a released process stays released, answers every
// read with no ticket and not choosing, and ignores any answer.
func inert(nd sim.Node) bool { return nd.(*node).state == cs.Released }

// commutes names the deliveries that give the same whatever the receiver does first or
// after, once the workload is over (sim.Canon.Commutes):
//   - a read of choosing outside the doorway: the flag stays false, no request to come;
//   - in the doorway, a ticket number that is not the last awaited: the doorway only
//     ends with the last one, and until then the receiver's own number and flag stay;
//   - in the bakery, an awaited answer that does not say wait (choosing false, or a
//     number that lets the receiver pass) when another process is still to pass: it
//     touches only the check of its sender, which no poll re-reads while its read is
//     on the way, and the receiver cannot enter (or leave) before it.
//
// A read of a ticket number in the bakery does not commute: the receiver may enter and
// leave first, and leaving clears the number. An answer that says wait does not either:
// it arms the poll, and the poll firing first re-reads different processes.
func commutes(nd sim.Node, m *sim.Message, _ sim.Quiet) bool {
	n := nd.(*node)
	j := m.From
	switch m.Type {
	case MsgReadChoosing:
		return n.state != Doorway
	case MsgNumber:
		if n.state == Doorway {
			return !n.read[j] && n.nRead+2 < len(n.ids)
		}
		return n.expects(j, stageNumber) && !n.before(j, m.Arg) && n.nPassed+2 < len(n.ids)
	case MsgChoosing:
		return n.expects(j, stageChoosing) && m.Arg == 0
	}
	return false
}

// Params are the algorithm's settings.
type Params struct {
	// Poll is the time between a read that says "wait" and the re-read; 0 derives it
	// from the network (pollFor).
	Poll int `param:"poll"`
}

var paramList = []sim.Param{
	{Name: "poll", Kind: sim.ParamInt, Min: 1,
		Doc: "time between a read that says wait and the re-read; left out, one round trip at the largest delay"},
}

// ParseParams decodes {"poll": t}; nil, empty or null gives the default. Errors name
// the field.
var ParseParams = params.Parser(paramList, func([]int) Params { return Params{} })

// pollFor resolves the poll period: by default one round trip at the largest delay, so
// a waiting process re-reads about as often as an answer can come back, rather than
// hammering the owner.
func pollFor(p Params, maxDelay int) int {
	if p.Poll > 0 {
		return p.Poll
	}
	return max(1, 2*maxDelay)
}

// Stages of the check of one other process in the bakery.
const (
	stageNone     uint8 = iota
	stageChoosing       // waiting for choosing[j] to be false
	stageNumber         // waiting for number[j] to be 0 or after mine
	stagePassed
)

type node struct {
	self int
	ids  []int // shared, never written
	poll int

	state    string
	choosing bool
	number   int

	// Doorway.
	read    []bool // by index: its number has been read
	nRead   int
	highest int

	// Bakery: one check per other process, all under way at once.
	stage    []uint8 // by index
	inFlight []bool  // by index: a read is on its way (false while waiting for the poll)
	seen     []int   // by index: the last number read while stageNumber
	nPassed  int
	polling  bool // the poll timer is armed
	rereads  int
}

// text is what the pages show of the algorithm, in a file a teacher can read beside
// this code.
//
//go:embed spec.txt
var text string

// Spec describes the algorithm for the registry (algorithms.All): spec.txt, then what
// is code. Each call builds a new one: no caller can change what another sees.
func Spec() *sim.Spec {
	return sim.BuildSpec(text, sim.Spec{
		// 002's ordering property of the bakery: entering the bakery is the end of the doorway.
		DoorwayEnds: "BD-3",
		Params:      paramList,
		ParseParams: ParseParams,
		New:         newNode,
		// Safety rests on the reads alone; the poll timer only spaces out re-reads.
		Canon: &sim.Canon{Node: canonNode, Asynchronous: true, Inert: inert, Commutes: commutes},
	})
}

func newNode(self int, setup *sim.Setup) sim.Node {
	p := params.Of(setup, Params{})
	n := len(setup.IDs)
	return &node{self: self, ids: setup.IDs, poll: pollFor(p, setup.MaxDelay), state: cs.Released,
		read: make([]bool, n), stage: make([]uint8, n), inFlight: make([]bool, n), seen: make([]int, n)}
}

func (n *node) Step(ctx *sim.Context, in *sim.Input) {
	switch in.Kind {
	case sim.Init, sim.Recover:
		ctx.Rule("BI-1")
	case sim.Request, sim.Release:
		cs.Command(ctx, in.Kind, n.state, n.doorway, n.release)
	case sim.Timer:
		if in.Timer == TimerPoll && n.polling {
			n.repoll(ctx)
		}
	case sim.Deliver:
		m := &in.Msg
		switch m.Type {
		case MsgReadNumber:
			ctx.Rule("BS-1")
			ctx.Send(m.From, sim.Message{Type: MsgNumber, Arg: n.number})
		case MsgReadChoosing:
			ctx.Rule("BS-1")
			ctx.Send(m.From, sim.Message{Type: MsgChoosing, Arg: b2i(n.choosing)})
		case MsgNumber:
			if n.state == Doorway {
				n.onDoorwayNumber(ctx, m.From, m.Arg)
			} else if n.expects(m.From, stageNumber) {
				n.onNumber(ctx, m.From, m.Arg)
			}
		case MsgChoosing:
			if n.expects(m.From, stageChoosing) {
				n.onChoosing(ctx, m.From, m.Arg)
			}
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (n *node) release(ctx *sim.Context) {
	ctx.Rule("BX-1")
	cs.Leave(ctx, &n.state)
	n.number = 0
	n.rereads = 0
	n.highest = 0
	clear(n.read)
	clear(n.stage)
	clear(n.seen)
}

func (n *node) doorway(ctx *sim.Context) {
	ctx.Rule("BD-1")
	n.state = Doorway
	n.choosing = true
	clear(n.read)
	n.nRead = 0
	n.highest = 0
	for j := range n.ids {
		if j != n.self {
			ctx.Send(j, sim.Message{Type: MsgReadNumber})
		}
	}
}

func (n *node) onDoorwayNumber(ctx *sim.Context, j, v int) {
	if n.read[j] {
		return // one read per process; a second answer cannot come on a reliable network
	}
	ctx.Rule("BD-2")
	n.read[j] = true
	n.nRead++
	n.highest = max(n.highest, v)
	if n.nRead < len(n.ids)-1 {
		return
	}
	ctx.Rule("BD-3")
	n.number = 1 + n.highest // its own number is 0: it holds no ticket while RELEASED
	n.choosing = false
	n.state = Bakery
	n.nPassed = 0
	for j := range n.ids {
		if j != n.self {
			n.stage[j] = stageChoosing
			n.readJ(ctx, j)
		}
	}
}

// readJ sends the read of the variable the check of j waits on.
func (n *node) readJ(ctx *sim.Context, j int) {
	n.inFlight[j] = true
	typ := MsgReadChoosing
	if n.stage[j] == stageNumber {
		typ = MsgReadNumber
	}
	ctx.Send(j, sim.Message{Type: typ})
}

// expects reports whether an answer from j about this variable is the one awaited.
func (n *node) expects(j int, stage uint8) bool {
	return n.state == Bakery && n.inFlight[j] && n.stage[j] == stage
}

// wait leaves j for the next poll, arming the timer if it is not.
func (n *node) wait(ctx *sim.Context) {
	if !n.polling {
		n.polling = true
		ctx.SetTimer(TimerPoll, n.poll)
	}
}

func (n *node) onChoosing(ctx *sim.Context, j, v int) {
	ctx.Rule("BW-1")
	n.inFlight[j] = false
	if v != 0 {
		n.wait(ctx)
		return
	}
	n.stage[j] = stageNumber
	n.seen[j] = 0
	n.readJ(ctx, j)
}

func (n *node) onNumber(ctx *sim.Context, j, v int) {
	ctx.Rule("BW-2")
	n.inFlight[j] = false
	n.seen[j] = v
	if n.before(j, v) {
		n.wait(ctx)
		return
	}
	n.stage[j] = stagePassed
	n.nPassed++
	if n.nPassed < len(n.ids)-1 {
		return
	}
	// No poll can be armed here: a process that said "wait" is passed only after a
	// re-read, and the timer fired for that re-read.
	ctx.Rule("BE-1")
	cs.Enter(ctx, &n.state)
}

// before reports whether j, read with ticket v, goes first (BW-2): it holds a ticket
// and (v, j) < (number, self).
func (n *node) before(j, v int) bool {
	return v != 0 && (v < n.number || (v == n.number && n.ids[j] < n.ids[n.self]))
}

// repoll is BP-1: one more read of every variable still waited on.
func (n *node) repoll(ctx *sim.Context) {
	n.polling = false
	if n.state != Bakery {
		return
	}
	ctx.Rule("BP-1")
	for j, st := range n.stage {
		if (st == stageChoosing || st == stageNumber) && !n.inFlight[j] {
			n.rereads++
			n.readJ(ctx, j)
		}
	}
}

// WaitingFor: in the doorway, the processes whose number has not come back; in the
// bakery, those not passed yet.
func (n *node) WaitingFor() []int {
	var out []int
	switch n.state {
	case Doorway:
		for j, ok := range n.read {
			if !ok && j != n.self {
				out = append(out, j)
			}
		}
	case Bakery:
		for j, st := range n.stage {
			if st == stageChoosing || st == stageNumber {
				out = append(out, j)
			}
		}
	}
	return out
}

// idsAt lists the ids of the processes whose check is at this stage.
func (n *node) idsAt(stage uint8) []int {
	return nodeid.Filter(n.ids, func(j int) bool { return n.stage[j] == stage })
}

func (n *node) Encode(w *sim.StateWriter) {
	w.Str("state", n.state)
	w.Bool("choosing", n.choosing)
	w.Int("number", n.number)
	w.Int("highest", n.highest)
	w.Ints("read", nodeid.Where(n.ids, n.read))
	w.Ints("choosingOf", n.idsAt(stageChoosing))
	w.Ints("numberOf", n.idsAt(stageNumber))
	ahead := [][2]int{}
	for j, st := range n.stage {
		// In stageNumber a non-zero seen is a read that said "wait" (a re-read may be
		// on its way).
		if st == stageNumber && n.seen[j] != 0 {
			ahead = append(ahead, [2]int{n.seen[j], n.ids[j]})
		}
	}
	w.Pairs("ahead", ahead)
	w.Ints("passed", n.idsAt(stagePassed))
	w.Ints("reading", nodeid.Where(n.ids, n.inFlight))
	w.Bool("polling", n.polling)
	w.Int("rereads", n.rereads)
}

func (n *node) Clone() sim.Node {
	c := *n
	c.read = append([]bool(nil), n.read...)
	c.stage = append([]uint8(nil), n.stage...)
	c.inFlight = append([]bool(nil), n.inFlight...)
	c.seen = append([]int(nil), n.seen...)
	return &c
}
