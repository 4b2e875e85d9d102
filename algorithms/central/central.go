// Package central is the central coordinator algorithm: one process keeps the right to
// enter the CS and hands it out, first come first served, to whoever asks it.
package central

import (
	"slices"

	"github.com/teach-dist/playground/algorithms/cs"
	"github.com/teach-dist/playground/algorithms/nodeid"
	"github.com/teach-dist/playground/algorithms/params"
	"github.com/teach-dist/playground/runtime/sim"
)

// Cases of CG-1, for the narration.
const (
	WhyGranted = "granted"
	WhyQueued  = "queued"
)

// Message types.
const (
	MsgRequest = "REQUEST"
	MsgGrant   = "GRANT"
	MsgDenied  = "DENIED"
	MsgRelease = "RELEASE"
)

// Spec describes the algorithm for the registry (algorithms.All). Each call builds
// a new one: no caller can change what another sees.
func Spec() *sim.Spec {
	return &sim.Spec{
		Slug:    "central",
		Title:   "Central coordinator",
		Family:  sim.Mutex,
		Summary: "One coordinator owns the CS and lends it out in arrival order: three messages an entry, and everything stops when the coordinator dies.",
		Rules: []sim.Rule{
			{Label: "CI-1", Group: "Initialisation", Lines: []string{
				"state := RELEASED",
				"if i is the coordinator:",
				"    holder := none; queue := empty"},
				Says: "starts outside the CS; the coordinator starts with a free CS and nobody queued"},
			{Label: "CA-1", Group: "Asking for the CS", Lines: []string{
				"state := WAITING",
				"send REQUEST to the coordinator",
				"    // the coordinator passes its own request to itself, no message"},
				Says: "wants the CS and asks the coordinator"},
			{Label: "CG-1", Group: "Coordinator: REQUEST from j", Lines: []string{
				"if holder = none:",
				"    holder := j",
				"    send GRANT to j",
				"else:",
				"    append j to queue",
				"    if the DENIED variant is on: send DENIED to j"},
				Says: "the coordinator grants the CS if it is free, otherwise queues the asker",
				Why: map[string]string{
					WhyGranted: "grants the CS to {from} at once: nobody holds it",
					WhyQueued:  "queues {from}'s request: the CS is taken",
				}},
			{Label: "CD-1", Group: "Client: DENIED", Lines: []string{
				"stay WAITING   // the CS is busy; a GRANT will follow"},
				Says: "learns the CS is busy and keeps waiting for its turn"},
			{Label: "CE-1", Group: "Client: GRANT", Lines: []string{
				"state := HELD",
				"enter the CS"},
				Says: "has the coordinator's permission and enters the CS"},
			{Label: "CL-1", Group: "Leaving the CS", Lines: []string{
				"state := RELEASED",
				"send RELEASE to the coordinator",
				"    // the coordinator releases to itself, no message"},
				Says: "leaves the CS and tells the coordinator"},
			{Label: "CG-2", Group: "Coordinator: RELEASE from the holder", Lines: []string{
				"holder := none",
				"if queue is not empty:",
				"    j := take the head of queue",
				"    holder := j",
				"    send GRANT to j"},
				Says: "the coordinator takes the CS back and grants it to the longest waiter"},
		},
		Vars: []sim.Var{
			{Name: "state", Doc: "RELEASED, WAITING or HELD"},
			{Name: "coordinator", Doc: "id of the coordinator"},
			{Name: "holder", Doc: "coordinator only: id of the process it let into the CS (-1: the CS is free)"},
			{Name: "queue", Doc: "coordinator only: ids waiting for the CS, oldest request first"},
		},
		Messages: []sim.MessageType{
			{Name: MsgRequest, Label: "REQ", Doc: "asks the coordinator for the CS"},
			{Name: MsgGrant, Label: "GRANT", Doc: "the coordinator lets the receiver into the CS"},
			{Name: MsgDenied, Label: "DENY", Doc: "the CS is busy: the request is queued (DENIED variant only)"},
			{Name: MsgRelease, Label: "REL", Doc: "gives the CS back to the coordinator"},
		},
		Costs: []sim.Cost{
			{Name: "messages per CS entry",
				Notes: []sim.NoteFormula{
					{In: []string{"000", "004"}, Formula: "three messages per use of a CS (request, OK, release)", Value: func(int) float64 { return 3 }},
					{In: []string{"001", "003"}, Formula: "3", Value: func(int) float64 { return 3 }},
					{In: []string{"002"}, Formula: "3 messages (ENTER, GRANTED, and RELEASE)", Value: func(int) float64 { return 3 }}},
				Formula: "3 (REQUEST, GRANT, RELEASE); 0 for the coordinator itself; 4 with DENIED when queued",
				Value:   func(int) float64 { return 3 }},
			{Name: "messages to enter the CS",
				Notes:   []sim.NoteFormula{{In: []string{"002"}, Formula: "2", Value: func(int) float64 { return 2 }}},
				Formula: "2 (REQUEST, GRANT); 3 with DENIED when queued",
				Value:   func(int) float64 { return 2 }},
			{Name: "messages to leave the CS", Formula: "1 (RELEASE)", Value: func(int) float64 { return 1 }},
			{Name: "synchronisation delay",
				Notes: []sim.NoteFormula{
					{In: []string{"003"}, Formula: "2 (release + grant)", Value: func(int) float64 { return 2 }}},
				Formula: "2T (RELEASE, then GRANT)", Value: func(int) float64 { return 2 }},
			{Name: "client delay",
				Notes: []sim.NoteFormula{
					{In: []string{"001"}, Formula: "2", Value: func(int) float64 { return 2 }},
					{In: []string{"003"}, Formula: "Entry: 2 (request + grant)", Value: func(int) float64 { return 2 }}},
				Formula: "2T (REQUEST and GRANT)", Value: func(int) float64 { return 2 }},
			{Name: "exit delay",
				Notes:   []sim.NoteFormula{{In: []string{"003"}, Formula: "Exit: 1", Value: func(int) float64 { return 1 }}},
				Formula: "T (the RELEASE); none for the coordinator itself", Value: func(int) float64 { return 1 }},
		},
		Defaults:    sim.Defaults{Nodes: 5, Delay: [2]int{1, 3}, FIFO: false, CS: 2, Until: 500},
		Params:      paramList,
		Stage:       sim.Stage{Mark: "coordinator", MarkLabel: "coordinator"},
		ParseParams: ParseParams,
		New:         newNode,
	}
}

// Params are the algorithm's settings.
type Params struct {
	Coordinator int  `param:"coordinator"` // id of the coordinator
	Denied      bool `param:"denied"`      // answer DENIED to a request that must queue
}

// coordinatorParam picks the highest id by default (the notes suggest the largest
// address).
var coordinatorParam = sim.Param{Name: "coordinator", Kind: sim.ParamNode, Default: sim.HighestID,
	Doc: "the process that hands out the CS"}

// paramList: the silent variant by default, which the notes present first.
var paramList = []sim.Param{
	coordinatorParam,
	{Name: "denied", Kind: sim.ParamBool, Default: "false",
		Doc: "answer DENIED to a request that must queue, so the client knows the CS is busy"},
}

// DefaultParams are the settings of a scenario that gives none.
func DefaultParams(ids []int) Params {
	return Params{Coordinator: params.DefaultID(coordinatorParam, ids)}
}

// ParseParams decodes {"coordinator": id, "denied": bool}; nil, empty or null gives the
// defaults. Errors name the field and what it accepts.
var ParseParams = params.Parser(paramList, DefaultParams)

type node struct {
	self   int
	ids    []int // shared, never written
	coord  int   // index of the coordinator
	denied bool
	state  string
	// Coordinator only.
	holder int   // index, -1: the CS is free
	queue  []int // indexes, in arrival order
}

func newNode(self int, setup *sim.Setup) sim.Node {
	p := params.Of(setup, DefaultParams(setup.IDs))
	coord := params.Holder(setup.IDs, p.Coordinator, coordinatorParam)
	return &node{self: self, ids: setup.IDs, coord: coord, denied: p.Denied, state: cs.Released, holder: -1}
}

func (n *node) isCoord() bool { return n.self == n.coord }

func (n *node) Step(ctx *sim.Context, in *sim.Input) {
	switch in.Kind {
	case sim.Init, sim.Recover:
		// A recovered coordinator comes back with a free CS and an empty queue: it has
		// forgotten who it let in and who was waiting.
		ctx.Rule("CI-1")
		n.state = cs.Released
		n.holder = -1
		n.queue = n.queue[:0]
	case sim.Request, sim.Release:
		cs.Command(ctx, in.Kind, n.state, n.request, n.release)
	case sim.Deliver:
		m := &in.Msg
		switch m.Type {
		case MsgRequest:
			if n.isCoord() {
				n.onRequest(ctx, m.From)
			}
		case MsgRelease:
			if n.isCoord() {
				n.onRelease(ctx, m.From)
			}
		case MsgGrant:
			n.onGrant(ctx)
		case MsgDenied:
			// Over a non-FIFO channel a DENIED can arrive after its GRANT: then it is
			// old news and changes nothing.
			if n.state == cs.Waiting {
				ctx.Rule("CD-1")
			}
		}
	}
}

func (n *node) request(ctx *sim.Context) {
	ctx.Rule("CA-1")
	n.state = cs.Waiting
	if n.isCoord() {
		n.onRequest(ctx, n.self)
		return
	}
	ctx.Send(n.coord, sim.Message{Type: MsgRequest})
}

// onRequest is the coordinator's CG-1 for a request from node j (possibly itself).
func (n *node) onRequest(ctx *sim.Context, j int) {
	// A REQUEST from the holder itself can overtake its RELEASE on a non-FIFO channel;
	// queueing it like any other keeps the CS single-occupied.
	switch {
	case j == n.self:
		ctx.Rule("CG-1") // its own request: no sender to name
	case n.holder >= 0:
		ctx.RuleWhy("CG-1", WhyQueued)
	default:
		ctx.RuleWhy("CG-1", WhyGranted)
	}
	if n.holder >= 0 {
		n.queue = append(n.queue, j)
		if n.denied && j != n.self {
			ctx.Send(j, sim.Message{Type: MsgDenied})
		}
		return
	}
	n.grant(ctx, j)
}

func (n *node) grant(ctx *sim.Context, j int) {
	n.holder = j
	if j == n.self {
		n.onGrant(ctx)
		return
	}
	ctx.Send(j, sim.Message{Type: MsgGrant})
}

func (n *node) onGrant(ctx *sim.Context) {
	// A grant meant for an earlier incarnation (this node crashed and recovered) finds
	// it not waiting; it is ignored, and the coordinator waits for a RELEASE that never
	// comes, as the notes warn for a client that fails.
	if n.state != cs.Waiting {
		return
	}
	ctx.Rule("CE-1")
	n.state = cs.Held
	ctx.Enter()
}

func (n *node) release(ctx *sim.Context) {
	ctx.Rule("CL-1")
	n.state = cs.Released
	ctx.Exit()
	if n.isCoord() {
		n.onRelease(ctx, n.self)
		return
	}
	ctx.Send(n.coord, sim.Message{Type: MsgRelease})
}

// onRelease is the coordinator's CG-2 for a release from node j (possibly itself).
func (n *node) onRelease(ctx *sim.Context, j int) {
	// Only the holder can give the CS back; a RELEASE from anyone else predates a
	// coordinator restart and must not free a CS someone else now holds.
	if j != n.holder {
		return
	}
	ctx.Rule("CG-2")
	n.holder = -1
	if len(n.queue) == 0 {
		return
	}
	next := n.queue[0]
	n.queue = slices.Delete(n.queue, 0, 1)
	n.grant(ctx, next)
}

// WaitingFor: a waiting client waits for the coordinator; the coordinator answers to
// nobody, so it waits for nobody.
func (n *node) WaitingFor() []int {
	if n.state != cs.Waiting || n.isCoord() {
		return nil
	}
	return []int{n.coord}
}

func (n *node) Clone() sim.Node {
	c := *n
	c.queue = slices.Clone(n.queue)
	return &c
}

func (n *node) Encode(w *sim.StateWriter) {
	w.Str("state", n.state)
	w.Int("coordinator", n.ids[n.coord])
	if !n.isCoord() {
		return
	}
	w.Int("holder", nodeid.Of(n.ids, n.holder))
	w.Ints("queue", nodeid.All(n.ids, n.queue))
}
