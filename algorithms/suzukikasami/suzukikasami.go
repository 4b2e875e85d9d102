// Package suzukikasami is the Suzuki-Kasami broadcast algorithm: a process that wants
// the CS broadcasts a numbered request; the token carries, for every process, the number
// of its last request that was served, and a queue of processes waiting for it. The
// token goes to the next waiting process when its holder leaves the CS.
package suzukikasami

import (
	_ "embed"
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

// Once nobody asks again (quiet), a released process without the token never gets it
// (the token goes only to a process whose request is outstanding): its request
// numbers are never read again, so canonNode forgets them, and such a process is
// inert (a REQUEST is not answered).
func canonNode(nd sim.Node, quiet bool) sim.Node {
	return cs.Forget(nd, quiet, idle, func(n *node) { clear(n.rn) })
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
		Canon:       &sim.Canon{Node: canonNode, Inert: inert},
	})
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
		cs.Enter(ctx, &n.state)
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
		cs.Enter(ctx, &n.state)
		return
	}
	// Sent to an earlier incarnation of this process (SK-6): pass it on.
	ctx.Rule("SK-6")
	n.dispatch(ctx)
}

func (n *node) release(ctx *sim.Context) {
	ctx.Rule("SK-5")
	cs.Leave(ctx, &n.state)
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

func (n *node) Encode(w *sim.StateWriter) {
	w.Str("state", n.state)
	w.Bool("token", n.token)
	w.Ints("RN", n.rn)
	w.Ints("LN", n.ln)
	w.Ints("Q", nodeid.All(n.ids, n.q))
}

func (n *node) Clone() sim.Node {
	c := *n
	c.rn = slices.Clone(n.rn)
	c.ln = slices.Clone(n.ln)
	c.q = slices.Clone(n.q)
	return &c
}

// HoldsToken reports whether the token is here.
func (n *node) HoldsToken() bool { return n.token }
