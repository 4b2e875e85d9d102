// Package maekawa is Maekawa's voting algorithm: a process needs the votes of its own
// voting set only, every two sets share a process, and a process votes for one
// requester at a time. The basic variant is the notes' algorithm and can deadlock; the
// deadlock-free variant orders requests by timestamp and takes votes back with INQUIRE,
// RELINQUISH and FAILED.
package maekawa

import (
	_ "embed"
	"slices"

	"github.com/teach-dist/playground/algorithms/cs"
	"github.com/teach-dist/playground/algorithms/nodeid"
	"github.com/teach-dist/playground/algorithms/params"
	"github.com/teach-dist/playground/runtime/sim"
)

// Message types. Every message carries the timestamp of the request it is about.
const (
	MsgRequest    = "REQUEST"
	MsgReply      = "REPLY"
	MsgRelease    = "RELEASE"
	MsgInquire    = "INQUIRE"
	MsgRelinquish = "RELINQUISH"
	MsgFailed     = "FAILED"
)

// canonNode is what the explorer may store instead of a node: the clock only gives
// the timestamp of the next request (every message carries a request's timestamp, not
// the clock), so once nobody will ask again it is forgotten.
func canonNode(nd sim.Node, quiet bool) sim.Node {
	n := nd.(*node)
	if !quiet || n.clock == 0 {
		return n
	}
	c := n.Clone().(*node)
	c.clock = 0
	return c
}

// entry is a queued request.
type entry struct {
	ts   int
	from int  // index
	told bool // deadlock-free: the requester knows it must wait here (FAILED sent, or it relinquished)
}

type node struct {
	self int
	ids  []int // shared, never written
	df   bool  // deadlock-free variant
	set  []int // indexes, ascending; shared, never written
	// about names the construction of the sets and K (Sets.About), for the inspector.
	about string

	clock int

	// Requester half.
	state     string
	ts        int
	got       []bool // by index: holds that member's vote for the current request
	nGot      int
	failed    []bool // deadlock-free, by index
	yielded   []bool // deadlock-free, by index
	inquiries []bool // deadlock-free, by index: an INQUIRE held unanswered

	// Voter half.
	voted    bool
	cand     int // index, -1: none
	candTS   int
	inquired bool
	queue    []entry

	// Messages to itself, handled within the step that produced them (no network).
	local []sim.Message
}

// text is what the pages show of the algorithm, in a file a teacher can read beside
// this code.
//
//go:embed spec.txt
var text string

// Spec describes the algorithm for the registry (algorithms.All): spec.txt, then what
// is code. Each call builds a new one: no caller can change what another sees.
func Spec() *sim.Spec {
	s := sim.BuildSpec(text, sim.Spec{
		Comparisons: []sim.Comparison{{Other: "ricart-agrawala", In: []string{"002"},
			Claim:  "More efficient than Ricart and Agrawala for large-scale systems, since 3√N < 2(N-1) for N > 4",
			Metric: "messages-per-entry", Formula: "3√N", OtherFormula: "2(N-1)"}},
		// Before epoch 2 the ids were 0..N-1 (the notes' V1 was P0's) and sets other than
		// N=3 and N=7 came from the grid.
		Earlier:     []sim.EarlierDefaults{{Epoch: 2, Params: `{"construction":"grid"}`, IDsFrom0: true}},
		Params:      paramList,
		Stage:       sim.Stage{Group: "set", GroupLabel: "voting set", GroupAbout: "construction"},
		ParseParams: ParseParams,
		New:         newNode,
		Canon:       &sim.Canon{Node: canonNode},
	})
	// The figures in K-1, the other members of a voting set, are counted on the sets
	// that are built: by default, or as a run's params ask.
	for _, c := range []struct {
		name  string
		times float64
	}{
		{"messages per CS entry and exit, no contention", 3},
		{"messages to enter the CS, no contention", 2},
		{"messages to leave the CS", 1},
	} {
		cost := s.Cost(c.name)
		cost.Value = func(n int) float64 { return c.times * meanOthers(n) }
		cost.ValueFor = func(n int, p any) float64 { return c.times * meanOthersIn(p, n) }
	}
	return s
}

func newNode(self int, setup *sim.Setup) sim.Node {
	p := params.Of(setup, DefaultParams(setup.IDs))
	n := len(setup.IDs)
	sets := p.sets(n)
	return &node{
		self:      self,
		ids:       setup.IDs,
		df:        p.Variant == DeadlockFree,
		set:       sets[self],
		about:     p.about(n),
		state:     cs.Released,
		cand:      -1,
		got:       make([]bool, n),
		failed:    make([]bool, n),
		yielded:   make([]bool, n),
		inquiries: make([]bool, n),
	}
}

func (n *node) Step(ctx *sim.Context, in *sim.Input) {
	switch in.Kind {
	case sim.Init, sim.Recover:
		ctx.Rule("MI-1")
	case sim.Request, sim.Release:
		cs.Command(ctx, in.Kind, n.state, n.request, n.release)
	case sim.Deliver:
		n.handle(ctx, &in.Msg)
	}
	// Messages a process sends itself never touch the network: handle them now, in
	// order, each possibly producing more.
	for len(n.local) > 0 {
		m := n.local[0]
		n.local = n.local[1:]
		n.handle(ctx, &m)
	}
	n.local = nil
}

// send sends m to node j, or queues it for this very step when j is this process.
func (n *node) send(ctx *sim.Context, j int, m sim.Message) {
	if j == n.self {
		m.From, m.To = n.self, n.self
		n.local = append(n.local, m)
		return
	}
	ctx.Send(j, m)
}

func (n *node) handle(ctx *sim.Context, m *sim.Message) {
	n.clock = max(n.clock, m.TS)
	switch m.Type {
	case MsgRequest:
		n.onRequest(ctx, m.From, m.TS)
	case MsgReply:
		n.onReply(ctx, m.From, m.TS)
	case MsgRelease:
		n.onRelease(ctx, m.From, m.TS)
	case MsgInquire:
		if n.df {
			n.onInquire(ctx, m.From, m.TS)
		}
	case MsgRelinquish:
		if n.df {
			n.onRelinquish(ctx, m.From, m.TS)
		}
	case MsgFailed:
		if n.df {
			n.onFailed(ctx, m.From, m.TS)
		}
	}
}

// ---- Requester half ----

func (n *node) request(ctx *sim.Context) {
	ctx.Rule("MA-1")
	n.state = cs.Wanted
	n.clock++
	n.ts = n.clock
	n.resetRequest()
	for _, j := range n.set {
		n.send(ctx, j, sim.Message{Type: MsgRequest, TS: n.ts})
	}
}

func (n *node) resetRequest() {
	clear(n.got)
	clear(n.failed)
	clear(n.yielded)
	clear(n.inquiries)
	n.nGot = 0
}

func (n *node) onReply(ctx *sim.Context, j, ts int) {
	if n.state == cs.Released || ts != n.ts {
		// A vote for a request this process no longer has (it crashed since): give it
		// back, or the voter stays locked.
		ctx.Rule("MA-3")
		n.send(ctx, j, sim.Message{Type: MsgRelease, TS: ts})
		return
	}
	if n.state != cs.Wanted || n.got[j] {
		// A second vote for the current request cannot come on a reliable network;
		// giving it back would free a vote this process is using, so it is ignored.
		return
	}
	ctx.Rule("MA-2")
	n.got[j] = true
	n.nGot++
	n.failed[j] = false
	n.yielded[j] = false
	if n.nGot == len(n.set) {
		ctx.Rule("ME-1")
		n.state = cs.Held
		clear(n.inquiries) // the RELEASE after the CS answers them
		ctx.Enter()
		return
	}
	if n.df && n.inquiries[j] && n.blocked() {
		// The INQUIRE overtook this vote (non-FIFO): answer it now.
		n.relinquish(ctx, j)
	}
}

// blocked reports whether some member is known not to vote for this request now: it
// answered FAILED, or this process gave its vote back and has not had it again.
func (n *node) blocked() bool {
	for _, k := range n.set {
		if !n.got[k] && (n.failed[k] || n.yielded[k]) {
			return true
		}
	}
	return false
}

func (n *node) relinquish(ctx *sim.Context, j int) {
	n.inquiries[j] = false
	n.got[j] = false
	n.nGot--
	n.yielded[j] = true
	n.send(ctx, j, sim.Message{Type: MsgRelinquish, TS: n.ts})
}

func (n *node) onFailed(ctx *sim.Context, j, ts int) {
	// A FAILED overtaken by the vote that followed it (non-FIFO) is old news.
	if n.state != cs.Wanted || ts != n.ts || n.got[j] {
		return
	}
	ctx.Rule("MF-1")
	n.failed[j] = true
	for _, k := range n.set {
		if n.inquiries[k] && n.got[k] {
			n.relinquish(ctx, k)
		}
	}
}

func (n *node) onInquire(ctx *sim.Context, j, ts int) {
	if n.state == cs.Released || ts != n.ts {
		return // about a request that is over
	}
	ctx.Rule("MQ-1")
	switch {
	case n.state == cs.Held:
		// Leaving the CS sends RELEASE, which gives the vote back.
	case !n.got[j]:
		n.inquiries[j] = true // overtook the vote itself: answered when it comes
	case n.blocked():
		n.relinquish(ctx, j)
	default:
		n.inquiries[j] = true
	}
}

func (n *node) release(ctx *sim.Context) {
	ctx.Rule("MR-1")
	cs.Leave(ctx, &n.state)
	for _, j := range n.set {
		n.send(ctx, j, sim.Message{Type: MsgRelease, TS: n.ts})
	}
	n.ts = 0
	n.resetRequest()
}

// ---- Voter half ----

// older reports whether request (ta, a) precedes (tb, b): timestamps, then ids.
func (n *node) older(ta, a, tb, b int) bool {
	return ta < tb || (ta == tb && n.ids[a] < n.ids[b])
}

func (n *node) onRequest(ctx *sim.Context, j, ts int) {
	ctx.Rule("MH-1")
	if n.state == cs.Held || n.voted {
		n.enqueue(entry{ts: ts, from: j})
		if n.df {
			n.contend(ctx, j, ts)
		}
		return
	}
	n.vote(ctx, j, ts)
}

func (n *node) enqueue(e entry) {
	if !n.df {
		n.queue = append(n.queue, e)
		return
	}
	k := 0
	for k < len(n.queue) && n.older(n.queue[k].ts, n.queue[k].from, e.ts, e.from) {
		k++
	}
	n.queue = slices.Insert(n.queue, k, e)
}

// contend is MH-2: j's request was just queued.
func (n *node) contend(ctx *sim.Context, j, ts int) {
	ctx.Rule("MH-2")
	if n.queue[0].from == j && n.older(ts, j, n.candTS, n.cand) {
		// Only the head of the queue can be untold; once displaced it must learn that
		// it waits, or it could hold other votes forever (see MQ-1).
		if len(n.queue) > 1 && !n.queue[1].told {
			n.queue[1].told = true
			n.send(ctx, n.queue[1].from, sim.Message{Type: MsgFailed, TS: n.queue[1].ts})
		}
		if !n.inquired {
			n.inquired = true
			n.send(ctx, n.cand, sim.Message{Type: MsgInquire, TS: n.candTS})
		}
		return
	}
	for k := range n.queue {
		if n.queue[k].from == j {
			n.queue[k].told = true
		}
	}
	n.send(ctx, j, sim.Message{Type: MsgFailed, TS: ts})
}

func (n *node) vote(ctx *sim.Context, j, ts int) {
	n.voted = true
	n.cand = j
	n.candTS = ts
	n.inquired = false
	n.send(ctx, j, sim.Message{Type: MsgReply, TS: ts})
}

// voteNext gives the vote to the head of the queue, or frees it.
func (n *node) voteNext(ctx *sim.Context) {
	if len(n.queue) == 0 {
		n.voted = false
		n.cand = -1
		n.candTS = 0
		n.inquired = false
		return
	}
	e := n.queue[0]
	n.queue = slices.Delete(n.queue, 0, 1)
	n.vote(ctx, e.from, e.ts)
}

func (n *node) onRelease(ctx *sim.Context, j, ts int) {
	// Only the candidate can free the vote; anything else predates a crash.
	if !n.voted || n.cand != j || n.candTS != ts {
		return
	}
	ctx.Rule("MV-1")
	n.voteNext(ctx)
}

func (n *node) onRelinquish(ctx *sim.Context, j, ts int) {
	if !n.voted || n.cand != j || n.candTS != ts {
		return
	}
	ctx.Rule("MY-1")
	n.enqueue(entry{ts: ts, from: j, told: true}) // it knows it waits: it gave the vote back
	n.voteNext(ctx)
}

// WaitingFor: a requester waits for every other member of its set whose vote it lacks;
// a voter whose vote is out and who has requests queued (its own, perhaps) waits for
// its candidate to give the vote back. In the notes' example each process voted for
// itself, so the cycle is P1 -> P2 -> P3 -> P1: each lacks the vote of the next.
func (n *node) WaitingFor() []int {
	var out []int
	if n.state == cs.Wanted {
		for _, j := range n.set {
			if !n.got[j] && j != n.self {
				out = append(out, j)
			}
		}
	}
	if n.voted && n.cand != n.self && len(n.queue) > 0 && !slices.Contains(out, n.cand) {
		out = append(out, n.cand)
		slices.Sort(out)
	}
	return out
}

// idsWhere lists, in set order, the ids of the members for which flag is true.
func (n *node) idsWhere(flag []bool) []int {
	out := []int{}
	for _, j := range n.set {
		if flag[j] {
			out = append(out, n.ids[j])
		}
	}
	return out
}

func (n *node) Encode(w *sim.StateWriter) {
	w.Str("state", n.state)
	w.Ints("set", nodeid.All(n.ids, n.set))
	w.Str("construction", n.about)
	w.Int("clock", n.clock)
	w.Int("ts", n.ts)
	w.Ints("votes", n.idsWhere(n.got))
	w.Bool("voted", n.voted)
	w.Int("candidate", nodeid.Of(n.ids, n.cand))
	w.Int("candidateTs", n.candTS)
	w.Pairs("queue", nodeid.Stamped(n.ids, n.queue, func(e *entry) (int, int) { return e.ts, e.from }))
	if !n.df {
		return
	}
	w.Bool("inquired", n.inquired)
	w.Ints("failed", n.idsWhere(n.failed))
	w.Ints("yielded", n.idsWhere(n.yielded))
	w.Ints("inquiries", n.idsWhere(n.inquiries))
	told := []int{}
	for _, e := range n.queue {
		if e.told {
			told = append(told, n.ids[e.from])
		}
	}
	w.Ints("told", told)
}

func (n *node) Clone() sim.Node {
	c := *n
	c.got = slices.Clone(n.got)
	c.failed = slices.Clone(n.failed)
	c.yielded = slices.Clone(n.yielded)
	c.inquiries = slices.Clone(n.inquiries)
	c.queue = slices.Clone(n.queue)
	c.local = nil // always empty between steps
	return &c
}
