// Package suzukikasami is the Suzuki-Kasami broadcast algorithm: a process that wants
// the CS broadcasts a numbered request; the token carries, for every process, the number
// of its last request that was served, and a queue of processes waiting for it. The
// token goes to the next waiting process when its holder leaves the CS.
package suzukikasami

import (
	"slices"

	"github.com/teach-dist/playground/algorithms/cs"
	"github.com/teach-dist/playground/algorithms/nodeid"
	"github.com/teach-dist/playground/algorithms/params"
	"github.com/teach-dist/playground/runtime/sim"
)

// Message types.
const (
	MsgRequest = "REQUEST"
	MsgToken   = "TOKEN"
)

// Spec describes the algorithm for the registry (algorithms.All). Each call builds
// a new one: no caller can change what another sees.
func Spec() *sim.Spec {
	return &sim.Spec{
		Slug:    "suzuki-kasami",
		Title:   "Suzuki-Kasami",
		Family:  sim.Mutex,
		Summary: "Broadcast a numbered request and wait for the token, which remembers the last request it served for everyone: N messages an entry, none if the token is already here.",
		Rules: []sim.Rule{
			{Label: "SK-1", Group: "Initialisation", Lines: []string{
				"RN[k] := 0 for every k   // highest request number heard from k",
				"state := RELEASED",
				"the initial holder gets the token: LN[k] := 0 for every k, Q := empty"},
				Says: "starts with no request heard; one process starts with the token"},
			{Label: "SK-2", Group: "Asking for the CS", Lines: []string{
				"state := REQUESTED",
				"if I hold the token: state := HELD; enter the CS   // no message",
				"else:",
				"    RN[i] := RN[i] + 1",
				"    send REQUEST(i, RN[i]) to every other process"},
				Says: "wants the CS: enters at once with the token, otherwise broadcasts a numbered request"},
			{Label: "SK-3", Group: "Receiving REQUEST(j, sn)", Lines: []string{
				"RN[j] := max(RN[j], sn)   // an old, overtaken request changes nothing",
				"if I hold the token, am not in the CS and RN[j] = LN[j] + 1:",
				"    send TOKEN(LN, Q) to j   // j's request is outstanding"},
				Says: "records the request and hands over an idle token if the request is new"},
			{Label: "SK-4", Group: "Receiving TOKEN(LN, Q)", Lines: []string{
				"keep the token",
				"state := HELD; enter the CS"},
				Says: "receives the token and enters the CS"},
			{Label: "SK-5", Group: "Leaving the CS", Lines: []string{
				"state := RELEASED",
				"LN[i] := RN[i]   // my request is served",
				"for k = i+1, ..., N, 1, ..., i-1:",
				"    if k is not in Q and RN[k] = LN[k] + 1: append k to Q",
				"if Q is not empty:",
				"    j := take the head of Q; send TOKEN(LN, Q) to j",
				"else keep the token"},
				Says: "leaves the CS, queues every outstanding request and passes the token to the head of the queue"},
			{Label: "SK-6", Group: "Recovering after a crash", Lines: []string{
				"start as in SK-1 but without the token (one held before the crash is lost)",
				"// RN restarts at 0: my next requests carry numbers the others have",
				"// already seen, so they go unanswered: the algorithm assumes no failures",
				"if a TOKEN reaches me while I do not want the CS:",
				"    pass it on as in SK-5, without touching LN"},
				Says: "comes back without the token and with forgotten request numbers"},
		},
		Vars: []sim.Var{
			{Name: "state", Doc: "RELEASED, REQUESTED or HELD"},
			{Name: "token", Doc: "whether this process holds the token"},
			{Name: "RN", Doc: "highest request number heard from each process, in ids order"},
			{Name: "LN", Doc: "token only: number of the last served request of each process, in ids order (empty when the token is elsewhere)"},
			{Name: "Q", Doc: "token only: ids waiting for the token, in order (empty when the token is elsewhere)"},
		},
		Messages: []sim.MessageType{
			{Name: MsgRequest, Label: "REQ", Doc: "asks for the token: the sender's request number", Arg: "sn"},
			{Name: MsgToken, Label: "TOKEN", Doc: "the token: LN in ids order and the queue of waiting ids", Vec: "LN", Queue: "Q"},
		},
		Costs: []sim.Cost{
			{Name: "messages per CS entry", Formula: "N: (N-1) REQUEST + 1 TOKEN; 0 when the token is already here",
				Value: func(n int) float64 { return float64(n) }},
			{Name: "synchronisation delay", Formula: "T (one TOKEN) or 0", Value: func(int) float64 { return 1 }},
			{Name: "client delay", Formula: "2T (REQUEST and TOKEN), 0 with the token", Value: func(int) float64 { return 2 }},
		},
		Defaults:    sim.Defaults{Nodes: 5, Delay: [2]int{1, 3}, FIFO: false, CS: 2, Until: 500},
		Params:      paramList,
		ParseParams: ParseParams,
		New:         newNode,
		Canon:       &sim.Canon{Node: canonNode, Inert: inert},
	}
}

// Once nobody asks again (quiet), a released process without the token never gets it
// (the token goes only to a process whose request is outstanding): its request
// numbers are never read again, so canonNode forgets them, and such a process is
// inert (a REQUEST is not answered).
func canonNode(nd sim.Node, quiet bool) sim.Node {
	n := nd.(*node)
	if !quiet || !idle(n) {
		return n
	}
	c := n.Clone().(*node)
	clear(c.rn)
	return c
}

func idle(n *node) bool { return n.state == cs.Released && !n.token }

func inert(nd sim.Node) bool { return idle(nd.(*node)) }

// Params are the algorithm's settings.
type Params struct {
	Holder int `param:"holder"` // id of the process that starts with the token
}

// holderParam gives the token to the first id by default.
var holderParam = sim.Param{Name: "holder", Kind: sim.ParamNode, Default: sim.FirstID,
	Doc: "the process that starts with the token"}

var paramList = []sim.Param{holderParam}

// DefaultParams are the settings of a scenario that gives none.
func DefaultParams(ids []int) Params { return Params{Holder: params.DefaultID(holderParam, ids)} }

// ParseParams decodes {"holder": id}; nil, empty or null gives the defaults. Errors name
// the field.
var ParseParams = params.Parser(paramList, DefaultParams)

type node struct {
	self   int
	ids    []int // shared, never written
	holder int   // index of the initial holder
	state  string
	rn     []int // by node index
	token  bool
	ln     []int // by node index; nil without the token
	q      []int // node indexes; empty without the token
}

func newNode(self int, setup *sim.Setup) sim.Node {
	p := params.Of(setup, DefaultParams(setup.IDs))
	holder := params.Holder(setup.IDs, p.Holder, holderParam)
	return &node{self: self, ids: setup.IDs, holder: holder, state: cs.Released, rn: make([]int, len(setup.IDs))}
}

func (n *node) Step(ctx *sim.Context, in *sim.Input) {
	switch in.Kind {
	case sim.Init:
		ctx.Rule("SK-1")
		n.reset()
		if n.self == n.holder {
			n.token = true
			n.ln = make([]int, len(n.ids))
		}
	case sim.Recover:
		ctx.Rule("SK-6")
		n.reset()
	case sim.Request, sim.Release:
		cs.Command(ctx, in.Kind, n.state, n.request, n.release)
	case sim.Deliver:
		switch in.Msg.Type {
		case MsgRequest:
			n.onRequest(ctx, in.Msg.From, in.Msg.Arg)
		case MsgToken:
			n.onToken(ctx, &in.Msg)
		}
	}
}

func (n *node) reset() {
	n.state, n.token, n.ln, n.q = cs.Released, false, nil, nil
	clear(n.rn)
}

func (n *node) request(ctx *sim.Context) {
	ctx.Rule("SK-2")
	n.state = cs.Requested
	if n.token {
		n.state = cs.Held
		ctx.Enter()
		return
	}
	n.rn[n.self]++
	for j := 0; j < ctx.N(); j++ {
		if j != n.self {
			ctx.Send(j, sim.Message{Type: MsgRequest, Arg: n.rn[n.self]})
		}
	}
}

func (n *node) onRequest(ctx *sim.Context, j, sn int) {
	ctx.Rule("SK-3")
	n.rn[j] = max(n.rn[j], sn)
	if n.token && n.state != cs.Held && n.rn[j] == n.ln[j]+1 {
		n.sendToken(ctx, j)
	}
}

// sendToken gives the token away; the queue travels as ids, so the trace shows them.
func (n *node) sendToken(ctx *sim.Context, j int) {
	ctx.Send(j, sim.Message{Type: MsgToken, Vec: slices.Clone(n.ln), Queue: nodeid.All(n.ids, n.q)})
	n.token, n.ln, n.q = false, nil, nil
}

func (n *node) onToken(ctx *sim.Context, m *sim.Message) {
	if n.token {
		return // a second token cannot exist while nobody fails; keep the one held
	}
	n.token = true
	n.ln = slices.Clone(m.Vec)
	n.q = make([]int, 0, len(m.Queue))
	for _, id := range m.Queue {
		if k, ok := ctx.Index(id); ok {
			n.q = append(n.q, k)
		}
	}
	if n.state == cs.Requested {
		ctx.Rule("SK-4")
		n.state = cs.Held
		ctx.Enter()
		return
	}
	// Sent to an earlier incarnation of this process (SK-6): pass it on.
	ctx.Rule("SK-6")
	n.dispatch(ctx)
}

func (n *node) release(ctx *sim.Context) {
	ctx.Rule("SK-5")
	n.state = cs.Released
	ctx.Exit()
	n.ln[n.self] = n.rn[n.self]
	for d := 1; d < ctx.N(); d++ {
		k := (n.self + d) % ctx.N()
		if n.rn[k] == n.ln[k]+1 && !slices.Contains(n.q, k) {
			n.q = append(n.q, k)
		}
	}
	n.dispatch(ctx)
}

// dispatch sends the token to the head of Q, if anyone waits.
func (n *node) dispatch(ctx *sim.Context) {
	if len(n.q) == 0 {
		return
	}
	j := n.q[0]
	n.q = slices.Delete(n.q, 0, 1)
	n.sendToken(ctx, j)
}

func (n *node) Clone() sim.Node {
	c := *n
	c.rn = slices.Clone(n.rn)
	c.ln = slices.Clone(n.ln)
	c.q = slices.Clone(n.q)
	return &c
}

func (n *node) Encode(w *sim.StateWriter) {
	w.Str("state", n.state)
	w.Bool("token", n.token)
	w.Ints("RN", n.rn)
	w.Ints("LN", n.ln)
	w.Ints("Q", nodeid.All(n.ids, n.q))
}

// HoldsToken reports whether the token is here.
func (n *node) HoldsToken() bool { return n.token }
