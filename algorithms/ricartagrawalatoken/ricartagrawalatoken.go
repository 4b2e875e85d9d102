// Package ricartagrawalatoken is the second Ricart-Agrawala algorithm: one token, and whoever holds
// it may enter the CS. A process asks everyone for it; the holder, on leaving the CS,
// hands it to the next process with a pending request in round-robin order, which it
// tells from the last request timestamps it heard (request[]) against those the token
// remembers (token[]).
package ricartagrawalatoken

import (
	_ "embed"
	"slices"

	"github.com/teach-dist/playground/algorithms/cs"
	"github.com/teach-dist/playground/algorithms/params"
	"github.com/teach-dist/playground/runtime/sim"
)

// Message types.
const (
	MsgRequest = "REQUEST"
	MsgToken   = "TOKEN"
)

// States of a process with respect to the token, as the notes name them.
const (
	NoToken      = "NO-TOKEN"
	TokenPresent = "TOKEN-PRESENT"
	TokenHeld    = "TOKEN-HELD"
)

// Once nobody asks again (quiet), a process that neither has the token nor waits for
// it never gets it (the token goes only to a process that asked): what it knows of
// the requests and its clock (which only stamps requests and the token) are never
// read again, so canonNode forgets them, and such a process is inert (a REQUEST is
// not answered).
func canonNode(nd sim.Node, quiet bool) sim.Node {
	return cs.Forget(nd, quiet, idle, func(n *node) { clear(n.request); n.clock = 0 })
}

func idle(n *node) bool { return n.state == NoToken && !n.waiting }

func inert(nd sim.Node) bool { return idle(nd.(*node)) }

// The horizon (sim.Horizon): clock values only grow by max and +1, and the token's
// entries (clocks) are only ever compared with request timestamps (RR2: request[k] >
// token[k]). Once quiet, the largest request timestamp held anywhere, h, bounds them
// all: a clock or token entry at h or above is "not asked since", whatever its value,
// so it is capped at h.

// stamp is the largest request timestamp a process holds.
func stamp(nd sim.Node) int { return slices.Max(nd.(*node).request) }

func capNode(nd sim.Node, h int) sim.Node {
	n := nd.(*node)
	if n.clock <= h && !slices.ContainsFunc(n.token, func(v int) bool { return v > h }) {
		return n
	}
	c := n.Clone().(*node)
	c.clock = min(c.clock, h)
	for k := range c.token {
		c.token[k] = min(c.token[k], h)
	}
	return c
}

func capMsg(m *sim.Message, h int) {
	if m.Type != MsgToken {
		return
	}
	m.TS = min(m.TS, h)
	for k := range m.Vec {
		m.Vec[k] = min(m.Vec[k], h)
	}
}

// Params are the algorithm's settings.
type Params struct {
	Holder int `param:"holder"` // id of the process that has the token at the start
}

// holderParam gives the token to the lowest id by default. The notes let the first
// holder be anyone; a fixed, predictable choice keeps runs easy to follow.
var holderParam = sim.Param{Name: "holder", Kind: sim.ParamNode, Default: sim.LowestID,
	Doc: "the process that has the token at the start"}

// DefaultParams are the settings of a scenario that gives none.
func DefaultParams(ids []int) Params { return Params{Holder: params.DefaultID(holderParam, ids)} }

// ParseParams decodes {"holder": id}; nil, empty or null gives the defaults. Errors
// name the field and what it accepts.
var ParseParams = params.Parser(paramList, DefaultParams)

var paramList = []sim.Param{holderParam}

type node struct {
	self    int
	ids     []int // shared, never written
	first   bool  // the chosen holder at the start of the run
	state   string
	clock   int
	waiting bool
	request []int // by node index
	token   []int // by node index; nil unless this process has the token
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
		ParseParams: ParseParams,
		New:         newNode,
		Canon: &sim.Canon{Node: canonNode, Inert: inert,
			Horizon: &sim.Horizon{Node: stamp, Msg: sim.RequestStamp(MsgRequest), CapNode: capNode, CapMsg: capMsg}},
	})
}

func newNode(self int, setup *sim.Setup) sim.Node {
	p := params.Of(setup, DefaultParams(setup.IDs))
	holder := params.Holder(setup.IDs, p.Holder, holderParam)
	return &node{self: self, ids: setup.IDs, first: self == holder, state: NoToken,
		request: make([]int, len(setup.IDs))}
}

func (n *node) Step(ctx *sim.Context, in *sim.Input) {
	switch in.Kind {
	case sim.Init, sim.Recover:
		n.init(ctx, in.Kind == sim.Init && n.first)
	case sim.Request:
		if n.state != TokenHeld && !n.waiting {
			n.ask(ctx)
		}
	case sim.Release:
		if n.state == TokenHeld {
			n.release(ctx)
		}
	case sim.Deliver:
		m := &in.Msg
		n.clock = max(n.clock, m.TS) + 1
		switch m.Type {
		case MsgRequest:
			n.onRequest(ctx, m)
		case MsgToken:
			n.onToken(ctx, m)
		}
	}
}

// init is RI1 and RI2. A recovered process never has the token: if it held it when it
// crashed, the token died with it.
func (n *node) init(ctx *sim.Context, withToken bool) {
	ctx.Rule("RI1")
	n.state = NoToken
	n.waiting = false
	n.token = nil
	if withToken {
		n.state = TokenPresent
	}
	ctx.Rule("RI2")
	n.clock = 0
	clear(n.request)
	if withToken {
		n.token = make([]int, len(n.request))
	}
}

// ask is RA1: with the token at hand it enters at once; otherwise it asks everyone and
// the rest of RA1 runs when the token arrives.
func (n *node) ask(ctx *sim.Context) {
	ctx.Rule("RA1")
	if n.state == NoToken {
		n.clock++
		for j := 0; j < ctx.N(); j++ {
			if j != n.self {
				ctx.Send(j, sim.Message{Type: MsgRequest, TS: n.clock})
			}
		}
		n.waiting = true
		return
	}
	n.enter(ctx)
}

func (n *node) enter(ctx *sim.Context) {
	n.state = TokenHeld
	n.waiting = false
	ctx.Enter()
}

func (n *node) onRequest(ctx *sim.Context, m *sim.Message) {
	ctx.Rule("RH1")
	n.request[m.From] = max(n.request[m.From], m.TS)
	if n.state == TokenPresent {
		ctx.Rule("RH2")
		n.pass(ctx)
	}
}

func (n *node) onToken(ctx *sim.Context, m *sim.Message) {
	n.token = slices.Clone(m.Vec)
	if n.waiting {
		// The end of RA1: the wait is over.
		ctx.Rule("RA1")
		n.enter(ctx)
		return
	}
	// Nobody sends the token unasked, except to a process that asked, crashed and came
	// back having forgotten it: it keeps the token and passes it on if someone waits.
	n.state = TokenPresent
	n.pass(ctx)
}

func (n *node) release(ctx *sim.Context) {
	ctx.Rule("RR1")
	n.state = TokenPresent
	ctx.Exit()
	n.pass(ctx)
}

// pass is RR2: the first process after this one, in round-robin order, that asked
// after its last turn gets the token.
func (n *node) pass(ctx *sim.Context) {
	ctx.Rule("RR2")
	for d := 1; d < ctx.N(); d++ {
		k := (n.self + d) % ctx.N()
		if n.request[k] > n.token[k] {
			n.state = NoToken
			n.token[n.self] = n.clock
			ctx.Send(k, sim.Message{Type: MsgToken, TS: n.clock, Vec: slices.Clone(n.token)})
			n.token = nil
			return
		}
	}
}

func (n *node) Encode(w *sim.StateWriter) {
	w.Str("state", n.state)
	w.Int("clock", n.clock)
	w.Bool("waiting", n.waiting)
	w.Ints("request", n.request)
	token := n.token
	if token == nil {
		token = []int{}
	}
	w.Ints("token", token)
}

func (n *node) Clone() sim.Node {
	c := *n
	c.request = slices.Clone(n.request)
	c.token = slices.Clone(n.token)
	return &c
}

// HoldsToken reports whether this process has the token (present or in use).
func (n *node) HoldsToken() bool { return n.state != NoToken }
