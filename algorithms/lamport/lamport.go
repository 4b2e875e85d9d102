// Package lamport is Lamport's distributed mutual exclusion: every process keeps a
// queue of all requests ordered by (timestamp, id), answers every request at once, and
// enters when its own request heads its queue and everyone else has sent it something
// stamped later. It relies on FIFO channels: without them a late message is taken for
// news and two processes can be in the CS together.
package lamport

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
	MsgRelease = "RELEASE"
)

// Once nobody will ask again (quiet), a released process never reads its queue or
// what it heard (it never tries to enter again): canonNode forgets them. Only its
// clock still counts, as the floor of the timestamps it sends.
func canonNode(nd sim.Node, quiet bool) sim.Node {
	return cs.Forget(nd, quiet, func(n *node) bool { return n.state == cs.Released }, func(n *node) {
		n.queue = nil
		clear(n.latest)
	})
}

// commutes: over FIFO channels, once quiet, with the process's clock at the horizon
// (so every stamp it sends is capped alike, and its clock stays there), a delivery
// only inserts the sender's request into the queue in (timestamp, id) order, removes
// it, or raises what was heard from the sender, and answers a REQUEST: the same in
// either order with a delivery from another sender or the release (which removes
// only the own request). The next message from the same sender cannot come first on
// a FIFO channel; without FIFO a RELEASE can overtake its REQUEST, and the order then
// decides whether the request stays queued for ever.
func commutes(nd sim.Node, _ *sim.Message, q sim.Quiet) bool {
	return q.FIFO && q.Horizon >= 0 && nd.(*node).clock >= q.Horizon
}

// The horizon (sim.Horizon): clocks only grow by max and +1, and a timestamp other
// than a request's is only ever compared with a request's (heardFrom), so once
// quiet, a clock at or above the largest request timestamp still held anywhere (h)
// stamps everything later than every request, and a received timestamp above h is
// later than all of them: the clock is capped at h, what it heard at h+1.

// stamp is the largest request timestamp a process holds: its own, and those queued.
func stamp(nd sim.Node) int {
	n := nd.(*node)
	h := n.ts
	for _, e := range n.queue {
		h = max(h, e.ts)
	}
	return h
}

func capNode(nd sim.Node, h int) sim.Node {
	n := nd.(*node)
	if n.clock <= h && !slices.ContainsFunc(n.latest, func(v int) bool { return v > h+1 }) {
		return n
	}
	c := n.Clone().(*node)
	c.clock = min(c.clock, h)
	for j := range c.latest {
		c.latest[j] = min(c.latest[j], h+1)
	}
	return c
}

func capMsg(m *sim.Message, h int) {
	if m.Type != MsgRequest {
		m.TS = min(m.TS, h+1)
	}
}

// entry is one request in a queue: its timestamp and the requester's index.
type entry struct{ ts, j int }

type node struct {
	self   int
	ids    []int // shared, never written
	state  string
	clock  int
	ts     int
	queue  []entry // in (ts, id) order
	latest []int   // by node index
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
		New: newNode,
		Canon: &sim.Canon{Node: canonNode, Commutes: commutes,
			Horizon: &sim.Horizon{Node: stamp, Msg: sim.RequestStamp(MsgRequest), CapNode: capNode, CapMsg: capMsg}},
	})
}

func newNode(self int, setup *sim.Setup) sim.Node {
	return &node{self: self, ids: setup.IDs, state: cs.Released, latest: make([]int, len(setup.IDs))}
}

// before reports whether request a precedes request b: older timestamp, then lower id.
func (n *node) before(a, b entry) bool {
	return a.ts < b.ts || (a.ts == b.ts && n.ids[a.j] < n.ids[b.j])
}

func (n *node) Step(ctx *sim.Context, in *sim.Input) {
	switch in.Kind {
	case sim.Init, sim.Recover:
		// The kernel builds a fresh state on recovery; LI-1 just says so.
		ctx.Rule("LI-1")
	case sim.Request, sim.Release:
		cs.Command(ctx, in.Kind, n.state, n.request, n.release)
	case sim.Deliver:
		m := &in.Msg
		n.clock = max(n.clock, m.TS) + 1
		n.latest[m.From] = max(n.latest[m.From], m.TS)
		switch m.Type {
		case MsgRequest:
			n.onRequest(ctx, m)
		case MsgReply:
			ctx.Rule("LH-2")
		case MsgRelease:
			n.onRelease(ctx, m)
		}
		n.tryEnter(ctx)
	}
}

func (n *node) request(ctx *sim.Context) {
	ctx.Rule("LA-1")
	n.clock++
	n.ts = n.clock
	n.state = cs.Requested
	n.insert(entry{n.ts, n.self})
	for j := 0; j < ctx.N(); j++ {
		if j != n.self {
			ctx.Send(j, sim.Message{Type: MsgRequest, TS: n.ts})
		}
	}
	n.tryEnter(ctx) // alone, or everyone else already spoke later
}

func (n *node) insert(e entry) {
	k := 0
	for k < len(n.queue) && n.before(n.queue[k], e) {
		k++
	}
	n.queue = slices.Insert(n.queue, k, e)
}

func (n *node) onRequest(ctx *sim.Context, m *sim.Message) {
	ctx.Rule("LH-1")
	n.insert(entry{m.TS, m.From})
	n.clock++
	ctx.Send(m.From, sim.Message{Type: MsgReply, TS: n.clock})
}

// onRelease removes the sender's oldest request. On FIFO channels there is exactly one;
// without FIFO a RELEASE can arrive before the REQUEST it releases (nothing to remove,
// and the late REQUEST then stays queued for ever) or after the sender's next REQUEST.
func (n *node) onRelease(ctx *sim.Context, m *sim.Message) {
	ctx.Rule("LH-3")
	if k := slices.IndexFunc(n.queue, func(e entry) bool { return e.j == m.From }); k >= 0 {
		n.queue = slices.Delete(n.queue, k, k+1)
	}
}

// heardFrom reports whether j has sent something stamped later than the own request.
func (n *node) heardFrom(j int) bool {
	return n.before(entry{n.ts, n.self}, entry{n.latest[j], j})
}

func (n *node) tryEnter(ctx *sim.Context) {
	if n.state != cs.Requested || len(n.queue) == 0 || n.queue[0].j != n.self {
		return
	}
	for j := range n.latest {
		if j != n.self && !n.heardFrom(j) {
			return
		}
	}
	ctx.Rule("LE-1")
	cs.Enter(ctx, &n.state)
}

func (n *node) release(ctx *sim.Context) {
	ctx.Rule("LR-1")
	cs.Leave(ctx, &n.state)
	n.queue = slices.DeleteFunc(n.queue, func(e entry) bool { return e.j == n.self })
	n.ts = 0
	n.clock++
	for j := 0; j < ctx.N(); j++ {
		if j != n.self {
			ctx.Send(j, sim.Message{Type: MsgRelease, TS: n.clock})
		}
	}
}

// WaitingFor lists whom a requester waits for: the holders of older requests in its
// queue (their RELEASE) and the processes it has not yet heard from since asking.
func (n *node) WaitingFor() []int {
	if n.state != cs.Requested {
		return nil
	}
	waits := make([]bool, len(n.latest))
	for _, e := range n.queue {
		if e.j == n.self {
			break
		}
		waits[e.j] = true
	}
	var out []int
	for j := range n.latest {
		if j != n.self && (waits[j] || !n.heardFrom(j)) {
			out = append(out, j)
		}
	}
	return out
}

func (n *node) Encode(w *sim.StateWriter) {
	w.Str("state", n.state)
	w.Int("clock", n.clock)
	w.Int("ts", n.ts)
	w.Pairs("queue", nodeid.Stamped(n.ids, n.queue, func(e *entry) (int, int) { return e.ts, e.j }))
	w.Ints("latest", n.latest)
	w.Ints("heard", nodeid.Filter(n.ids, func(j int) bool { return n.ts > 0 && j != n.self && n.heardFrom(j) }))
}

func (n *node) Clone() sim.Node {
	c := *n
	c.queue = slices.Clone(n.queue)
	c.latest = slices.Clone(n.latest)
	return &c
}
