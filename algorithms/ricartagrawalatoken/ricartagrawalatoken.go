// Package ricartagrawalatoken is the second Ricart-Agrawala algorithm: one token, and whoever holds
// it may enter the CS. A process asks everyone for it; the holder, on leaving the CS,
// hands it to the next process with a pending request in round-robin order, which it
// tells from the last request timestamps it heard (request[]) against those the token
// remembers (token[]).
package ricartagrawalatoken

import (
	"slices"

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

// Spec describes the algorithm for the registry (algorithms.All). Each call builds
// a new one: no caller can change what another sees.
func Spec() *sim.Spec {
	return &sim.Spec{
		Slug:    "ricart-agrawala-token",
		Title:   "Ricart-Agrawala token algorithm",
		Family:  sim.Mutex,
		Summary: "One token is the right to enter: ask everyone for it, and the holder passes it to the next waiting process in round-robin order, so nobody starves. N messages an entry, none when you already hold it.",
		Rules: []sim.Rule{
			{Label: "RI1", Notes: "000 004", Group: "Initialisation", Lines: []string{
				"if i is the chosen holder: state := TOKEN-PRESENT",
				"else: state := NO-TOKEN",
				"// after a crash: NO-TOKEN, even for the first holder; a token held at the crash is lost"},
				Says: "starts with the token (TOKEN-PRESENT) if it is the chosen holder, without it (NO-TOKEN) otherwise"},
			{Label: "RI2", Notes: "000 004", Group: "Initialisation", Lines: []string{
				"token[k] := 0 for every k   // in the token, at its holder",
				"request[k] := 0 for every k; clock := 0",
				"// after a crash the same: the clock restarts at 0, so until it catches up",
				"// a new request can look older than token[i] and be overlooked"},
				Says: "starts with every request and token timestamp at 0"},
			{Label: "RA1", Notes: "000 004", Group: "Asking for and entering the CS", Lines: []string{
				"if state = NO-TOKEN:",
				"    clock := clock + 1; T := clock",
				"    send REQUEST(T, i) to every other process",
				"    wait until the TOKEN arrives",
				"state := TOKEN-HELD",
				"enter the CS"},
				Says: "asks everyone for the token unless it already has it, and enters once it holds it"},
			{Label: "RH1", Notes: "000 004", Group: "Receiving REQUEST(Tj, j)", Lines: []string{
				"request[j] := max(request[j], Tj)"},
				Says: "records the newest request timestamp heard from the sender"},
			{Label: "RH2", Notes: "000 004", Group: "Receiving REQUEST(Tj, j)", Lines: []string{
				"if state = TOKEN-PRESENT:",
				"    pass the token on (RR2)   // it holds the token and does not use it"},
				Says: "holds the token unused, so it passes it on at once"},
			{Label: "RR1", Notes: "000 004", Group: "Leaving the CS", Lines: []string{
				"state := TOKEN-PRESENT"},
				Says: "leaves the CS and keeps the token for now"},
			{Label: "RR2", Notes: "000 004", Group: "Leaving the CS", Lines: []string{
				"for k in i+1, i+2, ..., n, 1, 2, ..., i-1:   // round robin: nobody starves",
				"    if request[k] > token[k]:   // Pk asked after its last turn",
				"        state := NO-TOKEN",
				"        token[i] := clock",
				"        send TOKEN(token[]) to Pk",
				"        stop looking",
				"// nobody waits: keep the token (TOKEN-PRESENT)"},
				Says: "looks for the next waiting process after itself and passes it the token, or keeps it if nobody waits"},
		},
		Vars: []sim.Var{
			{Name: "state", Doc: "NO-TOKEN, TOKEN-PRESENT (has the token, not in the CS) or TOKEN-HELD (in the CS)"},
			{Name: "clock", Doc: "Lamport clock"},
			{Name: "waiting", Doc: "true while a request of this process waits for the token"},
			{Name: "request", Doc: "newest request timestamp heard from each process, in the order of the ids (the search order)"},
			{Name: "token", Doc: "while this process has the token: each process's clock when it last passed the token on, in the order of the ids; empty otherwise"},
		},
		Messages: []sim.MessageType{
			{Name: MsgRequest, Label: "REQ", Doc: "asks for the token: (timestamp, id)", TS: "ts"},
			{Name: MsgToken, Label: "TOKEN", Doc: "the token, with token[] (one timestamp per process, in the order of the ids)", TS: "ts", Vec: "token"},
		},
		Costs: []sim.Cost{
			{Name: "messages per CS entry",
				Notes: []sim.NoteFormula{
					{In: []string{"000", "004"}, Formula: "n messages for entering a CS: (n-1) requests and one reply", Value: func(n int) float64 { return float64(n) }}},
				Formula: "N: N-1 REQUEST and one TOKEN; 0 when the requester already holds the token",
				Value:   func(n int) float64 { return float64(n) }},
			{Name: "synchronisation delay", Formula: "T (the TOKEN)", Value: func(int) float64 { return 1 }},
			{Name: "client delay", Formula: "2T (request and token); 0 with the token at hand", Value: func(int) float64 { return 2 }},
		},
		Defaults:    sim.Defaults{Nodes: 5, Delay: [2]int{1, 3}, FIFO: false, CS: 2, Until: 500},
		Params:      paramList,
		ParseParams: ParseParams,
		New:         newNode,
		Canon: &sim.Canon{Node: canonNode, Inert: inert,
			Horizon: &sim.Horizon{Node: stamp, Msg: msgStamp, CapNode: capNode, CapMsg: capMsg}},
	}
}

// Once nobody asks again (quiet), a process that neither has the token nor waits for
// it never gets it (the token goes only to a process that asked): what it knows of
// the requests and its clock (which only stamps requests and the token) are never
// read again, so canonNode forgets them, and such a process is inert (a REQUEST is
// not answered).
func canonNode(nd sim.Node, quiet bool) sim.Node {
	n := nd.(*node)
	if !quiet || !idle(n) {
		return n
	}
	c := n.Clone().(*node)
	clear(c.request)
	c.clock = 0
	return c
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

// msgStamp is a REQUEST's timestamp; a TOKEN carries clocks.
func msgStamp(m *sim.Message) int {
	if m.Type == MsgRequest {
		return m.TS
	}
	return 0
}

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

func (n *node) Clone() sim.Node {
	c := *n
	c.request = slices.Clone(n.request)
	c.token = slices.Clone(n.token)
	return &c
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

// HoldsToken reports whether this process has the token (present or in use).
func (n *node) HoldsToken() bool { return n.state != NoToken }
