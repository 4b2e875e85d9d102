// Package lamport is Lamport's distributed mutual exclusion: every process keeps a
// queue of all requests ordered by (timestamp, id), answers every request at once, and
// enters when its own request heads its queue and everyone else has sent it something
// stamped later. It relies on FIFO channels: without them a late message is taken for
// news and two processes can be in the CS together.
package lamport

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
	MsgRelease = "RELEASE"
)

// Spec describes the algorithm for the registry (algorithms.All). Each call builds
// a new one: no caller can change what another sees.
func Spec() *sim.Spec {
	return &sim.Spec{
		Slug:    "lamport",
		Title:   "Lamport's distributed mutual exclusion",
		Family:  sim.Mutex,
		Summary: "Everyone keeps the same timestamp-ordered queue of requests; enter at the head of your own queue once everyone has spoken after you. Correct only over FIFO channels.",
		Rules: []sim.Rule{
			{Label: "LI-1", Group: "Initialisation", Lines: []string{
				"state := RELEASED; clock := 0",
				"queue := empty; latest[j] := 0 for every j",
				"// after a crash the same: the process has forgotten every request it knew"},
				Says: "starts outside the CS with an empty queue"},
			{Label: "LA-1", Group: "Asking for the CS", Lines: []string{
				"clock := clock + 1; T := clock",
				"state := REQUESTED",
				"put (T, i) in my own queue",
				"send REQUEST(T, i) to every other process"},
				Says: "stamps a request, queues it locally and sends it to everyone"},
			{Label: "LH-1", Group: "Receiving REQUEST(Tj, j)", Lines: []string{
				"clock := max(clock, Tj) + 1; latest[j] := max(latest[j], Tj)",
				"put (Tj, j) in my queue, in (timestamp, id) order",
				"clock := clock + 1; send REPLY(clock) to j   // always, at once"},
				Says: "queues the request and answers it at once"},
			{Label: "LH-2", Group: "Receiving REPLY(Tj) from j", Lines: []string{
				"clock := max(clock, Tj) + 1; latest[j] := max(latest[j], Tj)",
				"// a reply only proves that j has seen my request"},
				Says: "notes that the sender has now spoken after its request"},
			{Label: "LH-3", Group: "Receiving RELEASE(Tj) from j", Lines: []string{
				"clock := max(clock, Tj) + 1; latest[j] := max(latest[j], Tj)",
				"remove j's request from my queue   // the oldest one, if a late message left two"},
				Says: "drops the releaser's request from its queue"},
			{Label: "LE-1", Group: "Entering the CS", Lines: []string{
				"if state = REQUESTED",
				"   and (T, i) heads my queue",
				"   and (latest[j], j) > (T, i) for every j ≠ i:",
				"    state := HELD",
				"    enter the CS",
				"// checked after my request and after every message"},
				Says: "heads its own queue and has heard something later from everyone, so it enters"},
			{Label: "LR-1", Group: "Leaving the CS", Lines: []string{
				"state := RELEASED",
				"remove (T, i) from my queue",
				"clock := clock + 1; send RELEASE(clock) to every other process"},
				Says: "leaves the CS and tells everyone to drop its request"},
		},
		Vars: []sim.Var{
			{Name: "state", Doc: "RELEASED, REQUESTED or HELD"},
			{Name: "clock", Doc: "Lamport clock"},
			{Name: "ts", Doc: "timestamp of this process's current request (0 when none)"},
			{Name: "queue", Doc: "requests this process knows of, as [timestamp, id] pairs in (timestamp, id) order"},
			{Name: "latest", Doc: "largest timestamp received from each process, in the order of the ids (own entry 0)"},
			{Name: "heard", Doc: "ids that have sent something stamped later than the current request"},
		},
		Messages: []sim.MessageType{
			{Name: MsgRequest, Label: "REQ", Doc: "asks for the CS: (timestamp, id)", TS: "ts"},
			{Name: MsgReply, Label: "REPLY", Doc: "acknowledges a request (the notes' ACK); its later timestamp is what counts", TS: "ts"},
			{Name: MsgRelease, Label: "REL", Doc: "the sender left the CS: drop its request", TS: "ts"},
		},
		Costs: []sim.Cost{
			{Name: "messages per CS entry",
				Notes: []sim.NoteFormula{
					{In: []string{"002"}, Formula: "3(N-1)", Value: func(n int) float64 { return float64(3 * (n - 1)) }},
					{In: []string{"004"}, Formula: "3(n - 1)", Value: func(n int) float64 { return float64(3 * (n - 1)) }}},
				Formula: "3(N-1): N-1 REQUEST, N-1 REPLY, N-1 RELEASE",
				Value:   func(n int) float64 { return float64(3 * (n - 1)) }},
			{Name: "messages to enter the CS", Formula: "2(N-1): N-1 REQUEST and N-1 REPLY",
				Value: func(n int) float64 { return float64(2 * (n - 1)) }},
			{Name: "messages to leave the CS",
				Notes:   []sim.NoteFormula{{In: []string{"002"}, Formula: "N-1 RELEASE messages", Value: func(n int) float64 { return float64(n - 1) }}},
				Formula: "N-1 RELEASE", Value: func(n int) float64 { return float64(n - 1) }},
			{Name: "synchronisation delay",
				Notes:   []sim.NoteFormula{{In: []string{"004"}, Formula: "max mesg transmission time"}},
				Formula: "T (the RELEASE)", Value: func(int) float64 { return 1 }},
			{Name: "client delay", Formula: "2T (request and reply)", Value: func(int) float64 { return 2 }},
		},
		// FIFO by default: the algorithm needs it; switching it off is the lesson.
		Defaults: sim.Defaults{Nodes: 5, Delay: [2]int{1, 3}, FIFO: true, CS: 2, Until: 500},
		New:      newNode,
		Canon: &sim.Canon{Node: canonNode, Commutes: commutes,
			Horizon: &sim.Horizon{Node: stamp, Msg: msgStamp, CapNode: capNode, CapMsg: capMsg}},
	}
}

// Once nobody will ask again (quiet), a released process never reads its queue or
// what it heard (it never tries to enter again): canonNode forgets them. Only its
// clock still counts, as the floor of the timestamps it sends.
func canonNode(nd sim.Node, quiet bool) sim.Node {
	n := nd.(*node)
	if !quiet || n.state != cs.Released {
		return n
	}
	c := n.Clone().(*node)
	c.queue = nil
	clear(c.latest)
	return c
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

// msgStamp is a REQUEST's timestamp; the others carry a clock, not a request.
func msgStamp(m *sim.Message) int {
	if m.Type == MsgRequest {
		return m.TS
	}
	return 0
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
	case sim.Request:
		if n.state == cs.Released {
			n.request(ctx)
			n.tryEnter(ctx)
		}
	case sim.Release:
		if n.state == cs.Held {
			n.release(ctx)
		}
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
	n.state = cs.Held
	ctx.Enter()
}

func (n *node) release(ctx *sim.Context) {
	ctx.Rule("LR-1")
	n.state = cs.Released
	n.queue = slices.DeleteFunc(n.queue, func(e entry) bool { return e.j == n.self })
	n.ts = 0
	ctx.Exit()
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

func (n *node) Clone() sim.Node {
	c := *n
	c.queue = slices.Clone(n.queue)
	c.latest = slices.Clone(n.latest)
	return &c
}

func (n *node) Encode(w *sim.StateWriter) {
	w.Str("state", n.state)
	w.Int("clock", n.clock)
	w.Int("ts", n.ts)
	w.Pairs("queue", nodeid.Stamped(n.ids, n.queue, func(e *entry) (int, int) { return e.ts, e.j }))
	w.Ints("latest", n.latest)
	w.Ints("heard", nodeid.Filter(n.ids, func(j int) bool { return n.ts > 0 && j != n.self && n.heardFrom(j) }))
}
