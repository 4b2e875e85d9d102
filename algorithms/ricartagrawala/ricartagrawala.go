// Package ricartagrawala is the Ricart-Agrawala algorithm: permission from every other
// process, requests ordered by Lamport timestamp and process id, replies deferred by
// whoever holds the CS or has the older request.
package ricartagrawala

import (
	_ "embed"
	"slices"

	"github.com/teach-dist/playground/algorithms/cs"
	"github.com/teach-dist/playground/algorithms/nodeid"
	"github.com/teach-dist/playground/runtime/sim"
)

// Message types.
const (
	MsgRequest = "REQUEST"
	MsgReply   = "REPLY"
)

// Cases of the rules, for the narration.
const (
	WhyHeld    = "held"
	WhyOlder   = "older"
	WhyYounger = "younger"
	WhyIdle    = "idle"
	WhyCounted = "counted"
)

// inert: a released process has nothing deferred and nothing counted; it answers a
// request at once and ignores a reply, and once nobody will ask again its clock is
// forgotten, so no delivery changes it.
func inert(nd sim.Node) bool { return nd.(*node).state == cs.Released }

// canonNode is what the explorer may store instead of a node. The clock only shapes
// the timestamps of future requests (a reply's timestamp only feeds the receiver's
// clock), so once nobody will ask again it is forgotten. The deferred list's order
// then only orders replies to different processes, on different channels, whose
// timestamps no longer matter either: it is kept sorted. Before that, both stay: the
// order of the deferred replies decides which process gets the larger clock.
func canonNode(nd sim.Node, quiet bool) sim.Node {
	n := nd.(*node)
	if !quiet {
		return n
	}
	c := n.Clone().(*node)
	c.clock = 0
	slices.Sort(c.deferred)
	return c
}

// commutes: once nobody asks again, two deliveries to a process give the same in
// either order when one of them is
//   - a REPLY while it waits, but the last: it only counts (RA3), and the process
//     cannot enter without it (it needs every reply), so it waits while the other
//     step happens;
//   - a REQUEST from a process its own request precedes, while it waits or holds the
//     CS: deferred (RH1) whatever comes first, and answered at its release (RR1),
//     as it would be at once after the release.
//
// The clock, which makes each step's stamps differ, is forgotten once quiet (canonNode).
func commutes(nd sim.Node, m *sim.Message, _ sim.Quiet) bool {
	n := nd.(*node)
	switch m.Type {
	case MsgReply:
		return n.state == cs.Requested && n.replies+2 < len(n.replied)
	case MsgRequest:
		return (n.state == cs.Requested || n.state == cs.Held) &&
			(n.ts < m.TS || (n.ts == m.TS && n.ids[n.self] < n.ids[m.From]))
	}
	return false
}

// canonMsg forgets a reply's timestamp once nobody will ask again (see canonNode).
func canonMsg(m *sim.Message, quiet bool) {
	if quiet && m.Type == MsgReply {
		m.TS = 0
	}
}

type node struct {
	self     int
	ids      []int // shared, never written
	state    string
	clock    int
	ts       int
	replied  []bool // by node index
	replies  int
	deferred []int // node indexes, in arrival order
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
		New:   newNode,
		Canon: &sim.Canon{Node: canonNode, Msg: canonMsg, Inert: inert, Commutes: commutes},
	})
}

func newNode(self int, setup *sim.Setup) sim.Node {
	return &node{self: self, ids: setup.IDs, state: cs.Released, replied: make([]bool, len(setup.IDs))}
}

func (n *node) Step(ctx *sim.Context, in *sim.Input) {
	switch in.Kind {
	case sim.Init, sim.Recover:
		ctx.Rule("RI1")
		n.state = cs.Released
	case sim.Request, sim.Release:
		cs.Command(ctx, in.Kind, n.state, n.request, n.release)
	case sim.Deliver:
		n.clock = max(n.clock, in.Msg.TS) + 1
		switch in.Msg.Type {
		case MsgRequest:
			n.onRequest(ctx, &in.Msg)
		case MsgReply:
			n.onReply(ctx, &in.Msg)
		}
	}
}

func (n *node) request(ctx *sim.Context) {
	ctx.Rule("RA1")
	n.state = cs.Requested
	n.clock++
	n.ts = n.clock
	ctx.Rule("RA2")
	for j := 0; j < ctx.N(); j++ {
		if j != ctx.Self() {
			ctx.Send(j, sim.Message{Type: MsgRequest, TS: n.ts})
		}
	}
}

// older reports whether this process's request (ts, own id) precedes (tj, idj).
func (n *node) older(ctx *sim.Context, tj, idj int) bool {
	return n.ts < tj || (n.ts == tj && ctx.SelfID() < idj)
}

func (n *node) onRequest(ctx *sim.Context, m *sim.Message) {
	switch {
	case n.state == cs.Held:
		ctx.RuleWhy("RH1", WhyHeld)
	case n.state == cs.Requested && n.older(ctx, m.TS, ctx.ID(m.From)):
		ctx.RuleWhy("RH1", WhyOlder)
	case n.state == cs.Requested:
		ctx.RuleWhy("RH1", WhyYounger)
		n.reply(ctx, m.From)
		return
	default:
		ctx.RuleWhy("RH1", WhyIdle)
		n.reply(ctx, m.From)
		return
	}
	n.deferred = append(n.deferred, m.From)
}

func (n *node) reply(ctx *sim.Context, to int) {
	n.clock++
	ctx.Send(to, sim.Message{Type: MsgReply, TS: n.clock})
}

func (n *node) onReply(ctx *sim.Context, m *sim.Message) {
	if n.state != cs.Requested || n.replied[m.From] {
		return
	}
	ctx.RuleWhy("RA3", WhyCounted)
	n.replied[m.From] = true
	n.replies++
	if n.replies == ctx.N()-1 {
		ctx.Rule("RE1")
		cs.Enter(ctx, &n.state)
	}
}

func (n *node) release(ctx *sim.Context) {
	ctx.Rule("RR1")
	cs.Leave(ctx, &n.state)
	n.ts = 0
	clear(n.replied)
	n.replies = 0
	for _, j := range n.deferred {
		n.reply(ctx, j)
	}
	n.deferred = n.deferred[:0]
}

// WaitingFor lists the processes whose reply is still missing.
func (n *node) WaitingFor() []int {
	if n.state != cs.Requested {
		return nil
	}
	var out []int
	for j, ok := range n.replied {
		if !ok && j != n.self {
			out = append(out, j)
		}
	}
	return out
}

func (n *node) Encode(w *sim.StateWriter) {
	w.Str("state", n.state)
	w.Int("clock", n.clock)
	w.Int("ts", n.ts)
	w.Ints("replied", nodeid.Where(n.ids, n.replied))
	w.Ints("deferred", nodeid.All(n.ids, n.deferred))
}

func (n *node) Clone() sim.Node {
	c := *n
	c.replied = append([]bool(nil), n.replied...)
	c.deferred = append([]int(nil), n.deferred...)
	return &c
}
