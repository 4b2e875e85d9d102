// Package central is the central coordinator algorithm: one process keeps the right to
// enter the CS and hands it out, first come first served, to whoever asks it.
package central

import (
	_ "embed"
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

// text is what the pages show of the algorithm, in a file a teacher can read beside
// this code.
//
//go:embed spec.txt
var text string

// Spec describes the algorithm for the registry (algorithms.All): spec.txt, then what
// is code. Each call builds a new one: no caller can change what another sees.
func Spec() *sim.Spec {
	return sim.BuildSpec(text, sim.Spec{
		Params:      paramList,
		Stage:       sim.Stage{Mark: "coordinator", MarkLabel: "coordinator"},
		ParseParams: ParseParams,
		New:         newNode,
	})
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
	cs.Enter(ctx, &n.state)
}

func (n *node) release(ctx *sim.Context) {
	ctx.Rule("CL-1")
	cs.Leave(ctx, &n.state)
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

func (n *node) Encode(w *sim.StateWriter) {
	w.Str("state", n.state)
	w.Int("coordinator", n.ids[n.coord])
	if !n.isCoord() {
		return
	}
	w.Int("holder", nodeid.Of(n.ids, n.holder))
	w.Ints("queue", nodeid.All(n.ids, n.queue))
}

func (n *node) Clone() sim.Node {
	c := *n
	c.queue = slices.Clone(n.queue)
	return &c
}
