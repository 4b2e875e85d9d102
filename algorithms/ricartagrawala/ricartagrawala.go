// Package ricartagrawala is the Ricart-Agrawala algorithm: permission from every other
// process, requests ordered by Lamport timestamp and process id, replies deferred by
// whoever holds the CS or has the older request.
package ricartagrawala

import (
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

// Spec describes the algorithm for the registry (algorithms.All). Each call builds
// a new one: no caller can change what another sees.
func Spec() *sim.Spec {
	return &sim.Spec{
		Slug:    "ricart-agrawala",
		Title:   "Ricart-Agrawala",
		Family:  sim.Mutex,
		Summary: "Ask everyone, enter when all have said yes: the older request (Lamport timestamp, then id) wins, the younger one is answered later.",
		Rules: []sim.Rule{
			{Label: "RI1", Notes: "000", Group: "Initialisation", Lines: []string{
				"state := RELEASED"},
				Says: "starts outside the CS (RELEASED)"},
			{Label: "RA1", Notes: "000", Group: "Asking for the CS", Lines: []string{
				"state := REQUESTED",
				"T := clock   // the timestamp of this request"},
				Says: "wants the CS and stamps its request with its clock"},
			{Label: "RA2", Notes: "000", Group: "Asking for the CS", Lines: []string{
				"send REQUEST(T, i) to every other process"},
				Says: "asks every other process for permission"},
			{Label: "RA3", Notes: "000", Group: "Asking for the CS", Lines: []string{
				"wait until all n-1 others have replied"},
				Says: "counts a reply and keeps waiting for the rest",
				Why:  map[string]string{WhyCounted: "counts {from}'s reply"}},
			{Label: "RE1", Notes: "000", Group: "Entering the CS", Lines: []string{
				"state := HELD",
				"enter the CS"},
				Says: "has every reply and enters the CS"},
			{Label: "RH1", Notes: "000", Group: "Receiving REQUEST(Tj, j)", Lines: []string{
				"if state = HELD or (state = REQUESTED and (T, i) < (Tj, j))",
				"    queue j's request, do not answer yet",
				"else",
				"    send REPLY to j at once"},
				Says: "decides whether to answer a request now or defer it",
				Why: map[string]string{
					WhyHeld:    "defers {from}'s request: it is in the CS itself",
					WhyOlder:   "defers {from}'s request: its own request is older",
					WhyYounger: "answers {from}'s request at once: {from}'s request is older than its own",
					WhyIdle:    "answers {from}'s request at once: it does not want the CS",
				}},
			{Label: "RR1", Notes: "000", Group: "Leaving the CS", Lines: []string{
				"state := RELEASED",
				"send REPLY to every queued request"},
				Says: "leaves the CS and answers everyone it made wait"},
		},
		Vars: []sim.Var{
			{Name: "state", Doc: "RELEASED, REQUESTED or HELD"},
			{Name: "clock", Doc: "Lamport clock"},
			{Name: "ts", Doc: "timestamp of the current request (0 when none)"},
			{Name: "replied", Doc: "ids that replied to the current request"},
			{Name: "deferred", Doc: "ids whose requests wait for this process to leave the CS"},
		},
		Messages: []sim.MessageType{
			{Name: MsgRequest, Label: "REQ", Doc: "asks for permission: (timestamp, id)", TS: "ts"},
			{Name: MsgReply, Label: "REPLY", Doc: "grants permission", TS: "ts"},
		},
		Costs: []sim.Cost{
			{Name: "messages per CS entry",
				Notes: []sim.NoteFormula{
					{In: []string{"001"}, Formula: "2(n - 1)", Value: func(n int) float64 { return float64(2 * (n - 1)) }},
					{In: []string{"002"}, Formula: "2(N-1)", Value: func(n int) float64 { return float64(2 * (n - 1)) }},
					{In: []string{"003"}, Formula: "2(n-1) if no hardware multicast", Value: func(n int) float64 { return float64(2 * (n - 1)) }},
					{In: []string{"004"}, Formula: "2(n - 1) messages per critical section invocation", Value: func(n int) float64 { return float64(2 * (n - 1)) }}},
				Formula: "2(N-1)", Value: func(n int) float64 { return float64(2 * (n - 1)) }},
			{Name: "messages to enter the CS",
				Notes: []sim.NoteFormula{
					{In: []string{"000"}, Formula: "2(n-1) messages for entering a CS: (n-1) requests and (n-1) replies", Value: func(n int) float64 { return float64(2 * (n - 1)) }},
					{In: []string{"002"}, Formula: "2(N-1)", Value: func(n int) float64 { return float64(2 * (n - 1)) }}},
				Formula: "2(N-1): N-1 REQUEST and N-1 REPLY",
				Value:   func(n int) float64 { return float64(2 * (n - 1)) }},
			{Name: "synchronisation delay",
				Notes: []sim.NoteFormula{
					{In: []string{"003"}, Formula: "1", Value: func(int) float64 { return 1 }},
					{In: []string{"004"}, Formula: "max. message transmission time"}},
				Formula: "T (one message)", Value: func(int) float64 { return 1 }},
			{Name: "client delay",
				Notes: []sim.NoteFormula{
					{In: []string{"001"}, Formula: "2(n - 1)", Value: func(n int) float64 { return float64(2 * (n - 1)) }},
					{In: []string{"003"}, Formula: "Entry: 1 (multicast) + 1", Value: func(int) float64 { return 2 }}},
				Formula: "2T (request and reply)", Value: func(int) float64 { return 2 }},
			{Name: "exit delay",
				Notes:   []sim.NoteFormula{{In: []string{"003"}, Formula: "Exit: 1 (multicast) + 1", Value: func(int) float64 { return 2 }}},
				Formula: "T (the deferred REPLYs, sent at once); none when nobody waits", Value: func(int) float64 { return 1 }},
		},
		Defaults: sim.Defaults{Nodes: 5, Delay: [2]int{1, 3}, FIFO: false, CS: 2, Until: 500},
		New:      newNode,
		Canon:    &sim.Canon{Node: canonNode, Msg: canonMsg, Inert: inert, Commutes: commutes},
	}
}

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
		n.state = cs.Held
		ctx.Enter()
	}
}

func (n *node) release(ctx *sim.Context) {
	ctx.Rule("RR1")
	n.state = cs.Released
	n.ts = 0
	clear(n.replied)
	n.replies = 0
	ctx.Exit()
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

func (n *node) Clone() sim.Node {
	c := *n
	c.replied = append([]bool(nil), n.replied...)
	c.deferred = append([]int(nil), n.deferred...)
	return &c
}

func (n *node) Encode(w *sim.StateWriter) {
	w.Str("state", n.state)
	w.Int("clock", n.clock)
	w.Int("ts", n.ts)
	w.Ints("replied", nodeid.Where(n.ids, n.replied))
	w.Ints("deferred", nodeid.All(n.ids, n.deferred))
}
