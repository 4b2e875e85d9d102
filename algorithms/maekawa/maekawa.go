// Package maekawa is Maekawa's voting algorithm: a process needs the votes of its own
// voting set only, every two sets share a process, and a process votes for one
// requester at a time. The basic variant is the notes' algorithm and can deadlock; the
// deadlock-free variant orders requests by timestamp and takes votes back with INQUIRE,
// RELINQUISH and FAILED.
package maekawa

import (
	"math"
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

// Spec describes the algorithm for the registry (algorithms.All). Each call builds
// a new one: no caller can change what another sees.
func Spec() *sim.Spec {
	return &sim.Spec{
		Slug:   "maekawa",
		Title:  "Maekawa's voting algorithm",
		Family: sim.Mutex,
		Summary: "Collect the votes of your own voting set only; sets overlap so no two win at once, but three processes asking together can wait on each other forever. " +
			"Processes are numbered 1..N as in the notes. Sets: the notes' V1..VN for N=3 and N=7 (K=2, 3); for N=q²+q+1, q prime (13, 31, 57), a projective plane of order q (K=q+1, about sqrt(N)); " +
			"for other N that plane on the first q²+q+1 processes, each other process asking one of its lines plus itself (K=q+2); with the grid construction (in Run setup), a row plus a column (K=2 sqrt(N)-1, as in note 003).",
		Rules: []sim.Rule{
			{Label: "MI-1", Group: "Initialisation", Lines: []string{
				"state := RELEASED; voted := false; queue := empty",
				"V_i := my voting set (it includes me); K := |V_i|",
				"// after a crash the process comes back like this: it has forgotten",
				"// whom it voted for, which the notes' fail-free model never allows"},
				Says: "starts outside the CS with its vote free"},
			{Label: "MA-1", Group: "Asking for the CS", Lines: []string{
				"state := WANTED; clock := clock + 1; T := clock",
				"send REQUEST(T) to every other member of V_i",
				"hand my own REQUEST(T) to my own voter half (MH-1), no message"},
				Says: "wants the CS and asks the members of its voting set for their votes"},
			{Label: "MA-2", Group: "Asking for the CS", Lines: []string{
				"on REPLY(T) from j: count j's vote",
				"wait until K votes are in (my own included)"},
				Says: "receives a vote and waits for the rest of its voting set"},
			{Label: "MA-3", Group: "Asking for the CS", Lines: []string{
				"on a REPLY for a request I no longer have (I crashed since):",
				"    send RELEASE back at once   // or that voter stays locked forever"},
				Says: "gives back a vote it did not ask for"},
			{Label: "ME-1", Group: "Entering the CS", Lines: []string{
				"when K votes are in:",
				"    state := HELD; enter the CS"},
				Says: "has the vote of every member of its set and enters the CS"},
			{Label: "MH-1", Group: "Voter: REQUEST(T) from j (j may be me)", Lines: []string{
				"if state = HELD or voted:",
				"    queue j's request   // basic: arrival order; deadlock-free: by (T, id)",
				"else:",
				"    send REPLY(T) to j   // my vote goes to j",
				"    voted := true; candidate := j"},
				Says: "votes for the requester if its vote is free, otherwise queues the request"},
			{Label: "MH-2", Group: "Voter: REQUEST(T) from j (deadlock-free only)", Lines: []string{
				"when MH-1 queued j's request:",
				"if (T, j) is now the oldest in the queue and older than the candidate's:",
				"    send FAILED to the request it displaced from the head, if not yet told",
				"    send INQUIRE to the candidate, unless already sent for this vote",
				"else:",
				"    send FAILED(T) to j   // an older request stands in its way"},
				Says: "asks its candidate to give the vote back for an older request, or tells the newcomer it must wait"},
			{Label: "MF-1", Group: "Requester: FAILED from j (deadlock-free only)", Lines: []string{
				"remember that j will not vote for me now",
				"answer every INQUIRE I was holding with RELINQUISH (MQ-1)"},
				Says: "learns an older request comes first and gives up the votes others asked back"},
			{Label: "MQ-1", Group: "Requester: INQUIRE from j (deadlock-free only)", Lines: []string{
				"if state = HELD: ignore   // my RELEASE will free j",
				"if some member sent FAILED, or I relinquished a vote not yet given back:",
				"    send RELINQUISH to j; forget j's vote   // I cannot win now anyway",
				"else:",
				"    hold the INQUIRE until a FAILED comes (then relinquish) or I enter"},
				Says: "gives a vote back if it cannot enter now, otherwise holds on to it"},
			{Label: "MY-1", Group: "Voter: RELINQUISH from the candidate (deadlock-free only)", Lines: []string{
				"put the candidate's request back in the queue",
				"k := take the head of the queue (the oldest request)",
				"send REPLY to k; candidate := k"},
				Says: "takes its vote back and gives it to the oldest request"},
			{Label: "MR-1", Group: "Leaving the CS", Lines: []string{
				"state := RELEASED",
				"send RELEASE to every other member of V_i",
				"hand my own RELEASE to my own voter half (MV-1), no message"},
				Says: "leaves the CS and frees the votes of its set"},
			{Label: "MV-1", Group: "Voter: RELEASE from the candidate (j may be me)", Lines: []string{
				"if the queue is not empty:",
				"    k := take the head of the queue",
				"    send REPLY to k; voted := true; candidate := k",
				"else:",
				"    voted := false"},
				Says: "its vote is free again: it gives it to the next queued request, if any"},
		},
		Vars: []sim.Var{
			{Name: "state", Doc: "RELEASED, WANTED or HELD"},
			{Name: "set", Doc: "ids of the voting set V_i (it includes this process); K is its size. By default the notes' sets for N=3 and N=7, a projective plane of order q for N=q²+q+1, otherwise that plane extended (see the summary); sets are of equal size only when N is a plane's size"},
			{Name: "construction", Doc: "how this run's voting sets were built and their size K: the notes' sets, a projective plane (extended when N is not a plane's size), a grid, or sets chosen for the run"},
			{Name: "clock", Doc: "Lamport clock: the largest timestamp seen; a new request takes clock+1"},
			{Name: "ts", Doc: "timestamp of this process's current request (0 when none)"},
			{Name: "votes", Doc: "ids of the members whose vote this process holds for its current request"},
			{Name: "voted", Doc: "voter half: true while its vote is given to some request"},
			{Name: "candidate", Doc: "voter half: id of the process it voted for (-1: none)"},
			{Name: "candidateTs", Doc: "voter half: timestamp of the request it voted for (0: none)"},
			{Name: "queue", Doc: "voter half: requests waiting for its vote, as [timestamp, id]; arrival order (basic) or oldest first (deadlock-free)"},
			{Name: "inquired", Doc: "deadlock-free only, voter half: an INQUIRE to the candidate is unanswered"},
			{Name: "failed", Doc: "deadlock-free only: ids that answered FAILED to the current request and have not voted since"},
			{Name: "yielded", Doc: "deadlock-free only: ids it gave a vote back to (RELINQUISH) and that have not voted again"},
			{Name: "inquiries", Doc: "deadlock-free only: ids whose INQUIRE it holds without answering yet"},
			{Name: "told", Doc: "deadlock-free only, voter half: queued ids that know they must wait (sent FAILED, or gave the vote back)"},
		},
		Messages: []sim.MessageType{
			{Name: MsgRequest, Label: "REQ", Doc: "asks a member of the voting set for its vote", TS: "ts"},
			{Name: MsgReply, Label: "REPLY", Doc: "the vote: the sender votes for the receiver's request", TS: "ts"},
			{Name: MsgRelease, Label: "REL", Doc: "the sender left the CS (or hands back a vote): the vote is free", TS: "ts"},
			{Name: MsgInquire, Label: "INQ", Doc: "deadlock-free: an older request waits, can the candidate give the vote back?", TS: "ts"},
			{Name: MsgRelinquish, Label: "RLNQ", Doc: "deadlock-free: the candidate gives the vote back", TS: "ts"},
			{Name: MsgFailed, Label: "FAIL", Doc: "deadlock-free: an older request has priority, the receiver must wait", TS: "ts"},
		},
		Costs: []sim.Cost{
			{Name: "messages per CS entry and exit, no contention",
				Notes: []sim.NoteFormula{
					{In: []string{"002"}, Formula: "3√N", Value: func(n int) float64 { return 3 * math.Sqrt(float64(n)) }},
					{In: []string{"003"}, Formula: "3√n if no hardware multicast", Value: func(n int) float64 { return 3 * math.Sqrt(float64(n)) }}},
				Formula:  "3(K-1): REQUEST, REPLY and RELEASE with the K-1 other members; a process's vote for itself costs no message. The notes' 3 sqrt(N) counts that own vote too (K = sqrt(N) for the optimal sets). N=7 with the notes' sets: K=3, 6 messages; the value is averaged over processes when the sets differ in size",
				Value:    func(n int) float64 { return 3 * meanOthers(n) },
				ValueFor: func(n int, p any) float64 { return 3 * meanOthersIn(p, n) }},
			{Name: "messages to enter the CS, no contention",
				Notes:   []sim.NoteFormula{{In: []string{"002"}, Formula: "2√N", Value: func(n int) float64 { return 2 * math.Sqrt(float64(n)) }}},
				Formula: "2(K-1)", Value: func(n int) float64 { return 2 * meanOthers(n) },
				ValueFor: func(n int, p any) float64 { return 2 * meanOthersIn(p, n) }},
			{Name: "messages to leave the CS",
				Notes:   []sim.NoteFormula{{In: []string{"002"}, Formula: "√N", Value: func(n int) float64 { return math.Sqrt(float64(n)) }}},
				Formula: "K-1 RELEASE", Value: func(n int) float64 { return meanOthers(n) },
				ValueFor: func(n int, p any) float64 { return meanOthersIn(p, n) }},
			{Name: "messages per entry with contention, deadlock-free variant",
				Notes:   []sim.NoteFormula{{In: []string{"002"}, Formula: "The algorithm can be made deadlock-free with additional messages"}},
				Formula: "about 5(K-1): FAILED, INQUIRE and RELINQUISH come on top; a request that is made to give votes back more than once costs more"},
			{Name: "client delay",
				Notes:   []sim.NoteFormula{{In: []string{"003"}, Formula: "Entry: 2 (multicast)", Value: func(int) float64 { return 2 }}},
				Formula: "2T (REQUEST, then REPLY)", Value: func(int) float64 { return 2 }},
			{Name: "exit delay",
				Notes:   []sim.NoteFormula{{In: []string{"003"}, Formula: "Exit: 1 (multicast)", Value: func(int) float64 { return 1 }}},
				Formula: "T (RELEASE to the voting set at once)", Value: func(int) float64 { return 1 }},
			{Name: "synchronisation delay",
				Notes:   []sim.NoteFormula{{In: []string{"003"}, Formula: "2, any two voting sets overlap", Value: func(int) float64 { return 2 }}},
				Formula: "2T (RELEASE to a shared voter, then its REPLY)", Value: func(int) float64 { return 2 }},
			{Name: "liveness",
				Notes: []sim.NoteFormula{
					{In: []string{"002"}, Formula: "Deadlock can occur"},
					{In: []string{"003"}, Formula: "Deadlock can happen with three processes!"}},
				Formula: "basic: deadlock possible (three processes asking at once with the N=3 sets); deadlock-free variant: none"},
		},
		// The notes number the processes 1..N and give V_i for p_i: with ids 1..N, the
		// process labelled P1 on the page asks the notes' V1.
		Comparisons: []sim.Comparison{{Other: "ricart-agrawala", In: []string{"002"},
			Claim:  "More efficient than Ricart and Agrawala for large-scale systems, since 3√N < 2(N-1) for N > 4",
			Metric: "messages-per-entry", Formula: "3√N", OtherFormula: "2(N-1)"}},
		Defaults: sim.Defaults{Nodes: 7, Delay: [2]int{1, 3}, FIFO: true, CS: 2, Until: 500, FirstID: 1},
		// Before epoch 2 the ids were 0..N-1 (the notes' V1 was P0's) and sets other than
		// N=3 and N=7 came from the grid.
		Earlier:     []sim.EarlierDefaults{{Epoch: 2, Params: `{"construction":"grid"}`, IDsFrom0: true}},
		Params:      paramList,
		Stage:       sim.Stage{Group: "set", GroupLabel: "voting set", GroupAbout: "construction"},
		ParseParams: ParseParams,
		New:         newNode,
		Canon:       &sim.Canon{Node: canonNode},
	}
}

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
	n.state = cs.Released
	ctx.Exit()
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
