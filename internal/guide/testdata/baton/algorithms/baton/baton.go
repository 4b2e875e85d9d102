// Package baton is the worked example of docs/adding-an-algorithm.md, an algorithm
// added by following that guide to the letter (internal/guide tests that it still
// passes every test): one baton, kept by a keeper process, is the right to enter the
// CS. A process asks the keeper for it, gets it, and gives it back on leaving; the
// keeper lends it out in the order it was asked. It is not one of the notes'
// algorithms, so every label is the project's own (EX-1 ...). Like the central
// coordinator, it does not survive the keeper's crash: a recovered keeper believes
// the baton is home again.
package baton

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
	MsgAsk   = "ASK"
	MsgBaton = "BATON"
)

// keeperParam declares the one setting; its Default drives DefaultParams too.
var keeperParam = sim.Param{Name: "keeper", Kind: sim.ParamNode, Default: sim.FirstID,
	Doc: "the process that keeps the baton and lends it out"}

// Params are the settings, tagged with their params field names.
type Params struct {
	Keeper int `param:"keeper"` // id of the keeper
}

// DefaultParams are the declared defaults: the first id keeps the baton.
func DefaultParams(ids []int) Params {
	return Params{Keeper: params.DefaultID(keeperParam, ids)}
}

// ParseParams decodes {"keeper": id}.
var ParseParams = params.Parser([]sim.Param{keeperParam}, DefaultParams)

// text is what the pages show of the algorithm: its spec.txt, embedded.
//
//go:embed spec.txt
var text string

// Spec registers the algorithm: spec.txt, then what is code. A new value at each
// call, so that no caller changes what another sees.
func Spec() *sim.Spec {
	return sim.BuildSpec(text, sim.Spec{
		Params:      []sim.Param{keeperParam},
		Stage:       sim.Stage{Mark: "keeper", MarkLabel: "keeper"},
		ParseParams: ParseParams,
		New: func(self int, setup *sim.Setup) sim.Node {
			p := params.Of(setup, DefaultParams(setup.IDs))
			return &node{self: self, ids: setup.IDs, keeper: params.Holder(setup.IDs, p.Keeper, keeperParam)}
		},
	})
}

type node struct {
	self, keeper int   // indexes
	ids          []int // shared, never written
	state        string
	here         bool  // keeper only: the baton is here
	queue        []int // keeper only: indexes
}

func (n *node) Step(ctx *sim.Context, in *sim.Input) {
	switch in.Kind {
	case sim.Init, sim.Recover:
		ctx.Rule("EX-1")
		n.state, n.here, n.queue = cs.Released, n.self == n.keeper, nil
	case sim.Request:
		if n.state == cs.Released {
			ctx.Rule("EX-2")
			n.state = cs.Wanted
			n.send(ctx, n.keeper, MsgAsk)
		}
	case sim.Release:
		if n.state == cs.Held {
			ctx.Rule("EX-5")
			cs.Leave(ctx, &n.state)
			n.send(ctx, n.keeper, MsgBaton)
		}
	case sim.Deliver:
		n.receive(ctx, in.Msg.Type, in.Msg.From)
	}
}

// send delivers to itself at once, since a process sends the network nothing for
// itself.
func (n *node) send(ctx *sim.Context, to int, typ string) {
	if to == n.self {
		n.receive(ctx, typ, n.self)
		return
	}
	ctx.Send(to, sim.Message{Type: typ})
}

// receive handles a message from node from (itself, for what it sends itself). A
// baton from the keeper to a process that wants it is a loan; any other baton reaching
// the keeper is one given back.
func (n *node) receive(ctx *sim.Context, typ string, from int) {
	switch {
	case typ == MsgAsk && n.self == n.keeper:
		ctx.Rule("EX-3")
		n.queue = append(n.queue, from)
		n.lend(ctx)
	case typ == MsgBaton && from == n.keeper && n.state == cs.Wanted:
		ctx.Rule("EX-4")
		cs.Enter(ctx, &n.state)
	case typ == MsgBaton && n.self == n.keeper:
		ctx.Rule("EX-6")
		n.here = true
		n.lend(ctx)
	}
}

func (n *node) lend(ctx *sim.Context) {
	if !n.here || len(n.queue) == 0 {
		return
	}
	j := n.queue[0]
	n.queue, n.here = slices.Delete(n.queue, 0, 1), false
	n.send(ctx, j, MsgBaton)
}

// WaitingFor: a process that wants the baton waits for the keeper.
func (n *node) WaitingFor() []int {
	if n.state == cs.Wanted && n.self != n.keeper {
		return []int{n.keeper}
	}
	return nil
}

func (n *node) Clone() sim.Node {
	c := *n
	c.queue = slices.Clone(n.queue)
	return &c
}

// Encode writes everything that decides what the process does next: the explorer
// takes two processes that encode alike for the same state.
func (n *node) Encode(w *sim.StateWriter) {
	w.Str("state", n.state)
	w.Int("keeper", n.ids[n.keeper])
	if n.self == n.keeper {
		w.Bool("baton", n.here)
		w.Ints("queue", nodeid.All(n.ids, n.queue))
	}
}
