// Package tokenring is the token ring: one token travels from each process to its
// successor in ring order; whoever holds it may enter the CS. A process that does not
// want the CS passes the token on after a short hop time.
//
// A lost token (dropped, or its holder crashed) stops everything. With the
// "regenerate" time-out on, a process that has not seen the token for that long calls
// a ring election (Chang-Roberts, with the participant flag); the winner sends an
// ELECTED message once round the ring and, when it comes back, creates a new token.
//
// Crashed successors are found the only way an asynchronous process can find them:
// every ELECTION and ELECTED is acknowledged by its receiver, and a sender that hears
// no ACK within a time-out takes its successor for dead and skips it, for the election
// and for the token from then on. Tokens carry a generation number; the winner's is
// higher than any the election saw, and the ELECTED round makes every process destroy
// tokens of older generations, so a token wrongly presumed lost (a time-out too short)
// is destroyed rather than duplicated. What the design cannot survive is said in the
// rules: a lost ELECTION or ACK (network loss, partition) makes a live process look
// dead, and a time-out shorter than a round trip does the same.
package tokenring

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/teach-dist/playground/algorithms/params"
	"github.com/teach-dist/playground/runtime/sim"
)

// Message types.
const (
	MsgToken    = "TOKEN"
	MsgElection = "ELECTION"
	MsgElected  = "ELECTED"
	MsgAck      = "ACK"
	MsgHello    = "HELLO"
)

// States of a process with respect to the CS.
const (
	Released = "RELEASED"
	Wanted   = "WANTED"
	Held     = "HELD"
)

// Timer names (stable: they appear in the trace).
const (
	TimerHop  = "hop"  // an unwanted token is passed on when it fires
	TimerLost = "lost" // no token seen for "regenerate" time units
	TimerAck  = "ack"  // the successor did not acknowledge an election message
)

// Spec registers the algorithm.
var Spec = sim.Spec{
	Slug:    "token-ring",
	Title:   "Token ring",
	Family:  sim.Mutex,
	Ring:    true,
	Summary: "A single token goes round the ring and whoever holds it may enter: simple and fair, but it costs messages when nobody wants it, and a lost token stops everything until an election regenerates it.",
	Rules: []sim.Rule{
		{Label: "TR1", Group: "Initialisation", Lines: []string{
			"state := RELEASED; next := my successor in the ring order",
			"the initial holder gets the token (generation 0) and starts its hop time",
			"if regeneration is on: everyone else starts the lost time-out"},
			Says: "starts outside the CS; the initial holder starts with the token"},
		{Label: "TR2", Group: "Asking for the CS", Lines: []string{
			"state := WANTED",
			"if I hold the token (waiting out its hop):",
			"    stop the hop time; state := HELD; enter the CS",
			"else: wait for the token to come round"},
			Says: "wants the CS: enters at once if the token is here, otherwise waits for it"},
		{Label: "TR3", Group: "Receiving TOKEN(g)", Lines: []string{
			"keep the token; gen := g; participant := false",
			"stop the lost time-out   // the token is not lost",
			"if state = WANTED: state := HELD; enter the CS",
			"else: start the hop time"},
			Says: "receives the token: enters if it wants the CS, otherwise holds it for the hop time"},
		{Label: "TR4", Group: "Passing an unwanted token", Lines: []string{
			"when the hop time is over and I still do not want the CS:",
			"    send TOKEN(gen) to next",
			"    start the lost time-out (if regeneration is on)"},
			Says: "does not want the CS and passes the token to its successor"},
		{Label: "TR5", Group: "Leaving the CS", Lines: []string{
			"state := RELEASED",
			"if a newer generation was announced while I was inside (TR9):",
			"    destroy my token; send the ELECTED I kept back",
			"else: send TOKEN(gen) to next",
			"start the lost time-out (if regeneration is on)"},
			Says: "leaves the CS and passes the token on at once"},
		{Label: "TR6", Group: "Regeneration: suspecting a lost token", Lines: []string{
			"when the lost time-out expires (no token for `regenerate` time units):",
			"    participant := true",
			"    send ELECTION(my id, gen) to next",
			"    start the lost time-out again"},
			Says: "has not seen the token for too long and calls an election to regenerate it"},
		{Label: "TR7", Group: "Regeneration: receiving ELECTION(k, g)", Lines: []string{
			"send ACK to the sender",
			"if I hold the token: drop it   // the token is not lost",
			"else if k > my id:",
			"    if participant and I already passed k on: drop it   // k left the ring",
			"    else participant := true; send ELECTION(k, max(g, gen)) to next",
			"else if k < my id and not participant:",
			"    participant := true; send ELECTION(my id, max(g, gen)) to next",
			"else (k < my id, participant): drop it   // mine or a higher one is out",
			"whenever I pass an ELECTION on: restart the lost time-out   // one is under way"},
			Says: "passes on a higher candidate, replaces a lower one by itself, or stops a duplicate"},
		{Label: "TR8", Group: "Regeneration: receiving ELECTION(k, g)", Lines: []string{
			"if k = my id and participant:   // my own id came round: I am the highest",
			"    participant := false",
			"    gen := max(g, gen) + 1   // newer than every token the election saw",
			"    send ELECTED(my id, gen) to next"},
			Says: "sees its own id come back: it has the highest id and announces a new token generation"},
		{Label: "TR9", Group: "Regeneration: receiving ELECTED(k, g)", Lines: []string{
			"send ACK to the sender",
			"if g <= gen: drop it   // already seen, or older",
			"gen := g; participant := false; restart the lost time-out",
			"if I hold an old token: if state = HELD, keep the ELECTED back until TR5",
			"                        else destroy the token",
			"send ELECTED(k, g) to next (unless kept back)"},
			Says: "learns the new generation, destroys any older token and passes the news on"},
		{Label: "TR10", Group: "Regeneration: receiving ELECTED(k, g)", Lines: []string{
			"if k = my id and g = gen:   // my ELECTED went all the way round",
			"    create TOKEN(g) and take it as in TR3"},
			Says: "sees its ELECTED come back: every process knows the new generation, so it creates the new token"},
		{Label: "TR11", Group: "Regeneration: receiving TOKEN(g)", Lines: []string{
			"if g < gen (or I already hold a token): destroy it   // superseded"},
			Says: "destroys a token of an older generation"},
		{Label: "TR12", Group: "Regeneration: reaching the successor", Lines: []string{
			"ELECTION and ELECTED go to next one at a time;",
			"on ACK from next: stop the ack time-out, send the next queued one"},
			Says: "has its election message acknowledged and sends the next one"},
		{Label: "TR13", Group: "Regeneration: reaching the successor", Lines: []string{
			"when the ack time-out expires (the receiver did not answer):",
			"    next := the process after it   // skip it, for the token too",
			"    send the message again to the new next",
			"    (if next comes back to me, I am alone: handle it myself)"},
			Says: "hears nothing from its successor, takes it for crashed and skips it"},
		{Label: "TR14", Group: "Recovering after a crash", Lines: []string{
			"start as in TR1 but without any token (one held before the crash is lost)",
			"if regeneration is on:",
			"    send HELLO to every other process; start the lost time-out"},
			Says: "comes back without the token and asks to be let back into the ring"},
		{Label: "TR15", Group: "Recovering after a crash", Lines: []string{
			"on HELLO from r:",
			"    if I await r's ACK: send r the message again   // lost in its crash",
			"    else if r lies between me and next in ring order:",
			"        next := r   // take it back as successor",
			"        if I hold an idle token alone: start the hop time"},
			Says: "takes a recovered process back as its successor"},
	},
	Vars: []sim.Var{
		{Name: "state", Doc: "RELEASED, WANTED or HELD"},
		{Name: "token", Doc: "whether this process holds the token"},
		{Name: "next", Doc: "id of the successor the token goes to (a skipped, crashed one is left out)"},
		{Name: "gen", Doc: "regeneration only: newest token generation known; older tokens are destroyed"},
		{Name: "participant", Doc: "regeneration only: taking part in an election"},
		{Name: "candidate", Doc: "regeneration only: highest candidate id this process passed on in the current election (-1: none)"},
		{Name: "kept", Doc: "regeneration only: an ELECTED(leader,gen) held back while this process is in the CS with a superseded token, destroyed on leaving (empty: none)"},
		{Name: "outbox", Doc: "regeneration only: ELECTION(candidate,gen) and ELECTED(leader,gen) queued for next, oldest first"},
		{Name: "awaitingAck", Doc: "regeneration only: id of the process whose ACK for the first outbox message is awaited (-1: none)"},
	},
	Messages: []sim.MessageType{
		{Name: MsgToken, Doc: "the token: its holder may enter the CS", Arg: "gen"},
		{Name: MsgElection, Doc: "regeneration: the highest candidate id so far and the newest generation seen", Arg: "candidate", TS: "gen"},
		{Name: MsgElected, Doc: "regeneration: the winner and the generation of the token it will create", Arg: "leader", TS: "gen"},
		{Name: MsgAck, Doc: "regeneration: the successor received an ELECTION or ELECTED"},
		{Name: MsgHello, Doc: "regeneration: a recovered process asks to be taken back into the ring"},
	},
	Costs: []sim.Cost{
		{Name: "messages per CS entry", Formula: "1 to ∞ (the token keeps moving while nobody wants it)"},
		{Name: "messages to obtain the token", Formula: "1 to N-1 (0 when it is already here)",
			Value: func(n int) float64 { return float64(n - 1) }},
		{Name: "synchronisation delay", Formula: "1 to N-1 hops, N/2 on average"},
		{Name: "client delay", Formula: "0 to N-1 hops"},
		{Name: "messages to regenerate the token (one caller)", Formula: "4N to 6N-2: N to 2N-1 ELECTION and N ELECTED, each acknowledged; more with several callers"},
	},
	Defaults:    sim.Defaults{Nodes: 5, Delay: [2]int{1, 3}, FIFO: false, CS: 2, Until: 500},
	ParseParams: ParseParams,
	New:         newNode,
}

// Params are the algorithm's settings.
type Params struct {
	Holder     int // id of the initial token holder
	Hop        int // time an unwanted token stays before it is passed on (>= 1)
	Regenerate int // lost time-out; 0 turns regeneration off
	AckTimeout int // how long a sender waits for an ACK; 0 derives 2*max delay + 1
}

// DefaultParams gives the token to the first id in ring order, a hop of 1 and no
// regeneration (the notes' plain algorithm).
func DefaultParams(ids []int) Params {
	p := Params{Holder: -1, Hop: 1}
	if len(ids) > 0 {
		p.Holder = ids[0]
	}
	return p
}

// rawParams has pointers so a field left out keeps its default.
type rawParams struct {
	Holder     *int `json:"holder"`
	Hop        *int `json:"hop"`
	Regenerate *int `json:"regenerate"`
	AckTimeout *int `json:"ackTimeout"`
}

// paramsSpec words the decoding errors so they name the field.
var paramsSpec = params.Spec{Fields: []params.Field{
	{Name: "holder", Want: "a node id (an integer)"},
	{Name: "hop", Want: "an integer"},
	{Name: "regenerate", Want: "an integer"},
	{Name: "ackTimeout", Want: "an integer"},
}}

// ParseParams decodes {"holder": id, "hop": t, "regenerate": t, "ackTimeout": t}; nil,
// empty or null gives the defaults. Errors name the field.
func ParseParams(raw []byte, ids []int) (any, error) {
	p := DefaultParams(ids)
	if len(ids) == 0 {
		return nil, errors.New("params.holder: there are no node ids to choose from")
	}
	var r rawParams
	// Params left out leave r empty, so the defaults stand.
	if _, err := params.Decode(raw, &r, paramsSpec); err != nil {
		return nil, err
	}
	if r.Holder != nil {
		if err := params.NodeID("holder", *r.Holder, ids); err != nil {
			return nil, err
		}
		p.Holder = *r.Holder
	}
	if r.Hop != nil {
		// 0 would let the token spin round the ring without time passing.
		if *r.Hop < 1 || *r.Hop > sim.MaxTime {
			return nil, fmt.Errorf("params.hop: must be a positive integer (at most %d), got %d", sim.MaxTime, *r.Hop)
		}
		p.Hop = *r.Hop
	}
	if r.Regenerate != nil {
		if *r.Regenerate < 0 || *r.Regenerate > sim.MaxTime {
			return nil, fmt.Errorf("params.regenerate: must be 0 (off) or a positive integer (at most %d), got %d", sim.MaxTime, *r.Regenerate)
		}
		p.Regenerate = *r.Regenerate
	}
	if r.AckTimeout != nil {
		if *r.AckTimeout < 1 || *r.AckTimeout > sim.MaxTime {
			return nil, fmt.Errorf("params.ackTimeout: must be a positive integer (at most %d), got %d", sim.MaxTime, *r.AckTimeout)
		}
		p.AckTimeout = *r.AckTimeout
	}
	return p, nil
}

func paramsOf(setup *sim.Setup) Params {
	switch v := setup.Params.(type) {
	case Params:
		return v
	case *Params:
		if v != nil {
			return *v
		}
	}
	return DefaultParams(setup.IDs)
}

type node struct {
	self   int
	ids    []int // shared, never written
	holder int   // index of the initial holder
	hop    int
	regen  int // 0: off
	ackT   int

	state string
	token bool
	next  int // index of the successor the token and election messages go to
	gen   int

	// Regeneration.
	participant bool
	fwd         int           // highest candidate id passed on in this participation (-1: none)
	kept        sim.Message   // an ELECTED held back until TR5: the token in the CS is superseded
	hasKept     bool          // kept is set
	outbox      []sim.Message // ELECTION/ELECTED for next, one at a time
	awaiting    bool          // outbox[0] was sent and waits for its ACK
	sentTo      int           // index outbox[0] was sent to (valid while awaiting)
}

func newNode(self int, setup *sim.Setup) sim.Node {
	p := paramsOf(setup)
	holder := slices.Index(setup.IDs, p.Holder)
	if holder < 0 {
		// Hand-built params naming a stranger: fall back to the default holder rather
		// than build a run without a token.
		holder = 0
	}
	hop := max(p.Hop, 1)
	ackT := p.AckTimeout
	if ackT <= 0 {
		// An ELECTION and its ACK take at most two delays; one more unit keeps a timer
		// due at the same time as the ACK from firing first.
		ackT = 2*setup.MaxDelay + 1
	}
	return &node{self: self, ids: setup.IDs, holder: holder, hop: hop, regen: max(p.Regenerate, 0), ackT: ackT,
		state: Released, next: (self + 1) % len(setup.IDs), fwd: -1}
}

func (n *node) Step(ctx *sim.Context, in *sim.Input) {
	switch in.Kind {
	case sim.Init:
		ctx.Rule("TR1")
		n.reset()
		if n.self == n.holder {
			n.token = true
			ctx.SetTimer(TimerHop, n.hop)
		} else {
			n.armLost(ctx)
		}
	case sim.Recover:
		ctx.Rule("TR14")
		n.reset()
		if n.regen > 0 {
			for j := 0; j < ctx.N(); j++ {
				if j != n.self {
					ctx.Send(j, sim.Message{Type: MsgHello})
				}
			}
			n.armLost(ctx)
		}
	case sim.Request:
		if n.state == Released {
			n.request(ctx)
		}
	case sim.Release:
		if n.state == Held {
			n.release(ctx)
		}
	case sim.Timer:
		n.onTimer(ctx, in.Timer)
	case sim.Deliver:
		m := &in.Msg
		switch m.Type {
		case MsgToken:
			n.onToken(ctx, m.Arg)
		case MsgElection, MsgElected:
			n.ring(ctx, m.From, *m)
		case MsgAck:
			n.onAck(ctx, m.From)
		case MsgHello:
			n.onHello(ctx, m.From)
		}
	}
	n.flush(ctx)
}

// reset is the state of TR1 without any token: a recovered process has lost whatever
// it held.
func (n *node) reset() {
	n.state, n.token, n.next, n.gen = Released, false, (n.self+1)%len(n.ids), 0
	n.participant, n.fwd, n.hasKept = false, -1, false
	n.kept = sim.Message{}
	n.outbox, n.awaiting, n.sentTo = n.outbox[:0], false, 0
}

func (n *node) armLost(ctx *sim.Context) {
	if n.regen > 0 {
		ctx.SetTimer(TimerLost, n.regen)
	}
}

// alone reports whether every other process has been skipped as crashed.
func (n *node) alone() bool { return n.next == n.self }

func (n *node) request(ctx *sim.Context) {
	ctx.Rule("TR2")
	n.state = Wanted
	if n.token {
		ctx.CancelTimer(TimerHop)
		n.enter(ctx)
	}
}

func (n *node) enter(ctx *sim.Context) {
	n.state = Held
	ctx.Enter()
}

// take is TR3 once the token is known to be valid.
func (n *node) take(ctx *sim.Context, gen int) {
	n.token, n.gen, n.participant = true, gen, false
	if n.regen > 0 {
		ctx.CancelTimer(TimerLost)
	}
	if n.state == Wanted {
		n.enter(ctx)
		return
	}
	if !n.alone() {
		ctx.SetTimer(TimerHop, n.hop)
	}
}

func (n *node) onToken(ctx *sim.Context, gen int) {
	if gen < n.gen || n.token {
		ctx.Rule("TR11")
		return
	}
	ctx.Rule("TR3")
	n.take(ctx, gen)
}

// pass sends the token to next; a process left alone keeps it.
func (n *node) pass(ctx *sim.Context) {
	if n.alone() {
		return
	}
	n.token = false
	ctx.Send(n.next, sim.Message{Type: MsgToken, Arg: n.gen})
	n.armLost(ctx)
}

func (n *node) release(ctx *sim.Context) {
	ctx.Rule("TR5")
	n.state = Released
	ctx.Exit()
	if n.hasKept {
		// The token is superseded: destroy it and let the ELECTED go on.
		n.token = false
		n.outbox = append(n.outbox, n.kept)
		n.kept, n.hasKept = sim.Message{}, false
		n.armLost(ctx)
		return
	}
	n.pass(ctx)
}

func (n *node) onTimer(ctx *sim.Context, name string) {
	switch name {
	case TimerHop:
		if n.token && n.state == Released && !n.alone() {
			ctx.Rule("TR4")
			n.pass(ctx)
		}
	case TimerLost:
		if n.token || n.regen == 0 {
			return
		}
		ctx.Rule("TR6")
		n.participant, n.fwd = true, ctx.SelfID()
		n.outbox = append(n.outbox, sim.Message{Type: MsgElection, Arg: ctx.SelfID(), TS: n.gen})
		n.armLost(ctx)
	case TimerAck:
		if !n.awaiting {
			return
		}
		ctx.Rule("TR13")
		n.awaiting = false
		// A HELLO may already have given a closer successor; otherwise skip the silent one.
		if n.next == n.sentTo {
			n.next = (n.sentTo + 1) % ctx.N()
		}
	}
}

// ring handles an ELECTION or ELECTED from node from; from = self when a process left
// alone hands its own outgoing message to itself.
func (n *node) ring(ctx *sim.Context, from int, m sim.Message) {
	if m.Type == MsgElection {
		n.onElection(ctx, from, m.Arg, m.TS)
	} else {
		n.onElected(ctx, from, m.Arg, m.TS)
	}
}

func (n *node) ack(ctx *sim.Context, from int) {
	if from != n.self {
		ctx.Send(from, sim.Message{Type: MsgAck})
	}
}

func (n *node) onElection(ctx *sim.Context, from, k, g int) {
	me := ctx.SelfID()
	if k == me && n.participant && !n.token {
		ctx.Rule("TR8")
		n.ack(ctx, from)
		n.participant = false
		n.gen = max(g, n.gen) + 1
		n.outbox = append(n.outbox, sim.Message{Type: MsgElected, Arg: me, TS: n.gen})
		return
	}
	ctx.Rule("TR7")
	n.ack(ctx, from)
	g = max(g, n.gen)
	switch {
	case n.token:
		// The token is here, so it is not lost: the election stops.
	case k > me:
		if n.participant && n.fwd == k {
			return // k's own ELECTION came round again without k taking it: k is gone
		}
		n.participant, n.fwd = true, k
		n.outbox = append(n.outbox, sim.Message{Type: MsgElection, Arg: k, TS: g})
		n.armLost(ctx) // an election is under way: no need to call another yet
	case k < me && !n.participant:
		n.participant, n.fwd = true, me
		n.outbox = append(n.outbox, sim.Message{Type: MsgElection, Arg: me, TS: g})
		n.armLost(ctx)
	}
	// Otherwise a lower candidate meets a participant (its ELECTION, or a higher one,
	// is already out), or my own id returns after the token passed me: dropped.
}

func (n *node) onElected(ctx *sim.Context, from, k, g int) {
	if k == ctx.SelfID() {
		if g == n.gen && !n.token {
			ctx.Rule("TR10")
			n.ack(ctx, from)
			n.take(ctx, g)
			return
		}
		ctx.Rule("TR9") // an older round of mine: only acknowledged
		n.ack(ctx, from)
		return
	}
	ctx.Rule("TR9")
	n.ack(ctx, from)
	if g <= n.gen {
		return
	}
	n.gen, n.participant = g, false
	fwd := sim.Message{Type: MsgElected, Arg: k, TS: g}
	if n.token {
		if n.state == Held {
			// Destroying the token under a process in the CS would not get it out: it
			// keeps the news back until it leaves, so the new token cannot be created
			// while it is still inside.
			n.kept, n.hasKept = fwd, true
			return
		}
		n.token = false
		ctx.CancelTimer(TimerHop)
	}
	n.outbox = append(n.outbox, fwd)
	n.armLost(ctx)
}

func (n *node) onAck(ctx *sim.Context, from int) {
	// A late ACK from a successor already skipped is ignored.
	if !n.awaiting || from != n.sentTo {
		return
	}
	ctx.Rule("TR12")
	ctx.CancelTimer(TimerAck)
	n.awaiting = false
	n.outbox = slices.Delete(n.outbox, 0, 1)
}

// flush sends the head of the outbox when nothing awaits an ACK; a process left alone
// handles its own messages.
func (n *node) flush(ctx *sim.Context) {
	for len(n.outbox) > 0 && !n.awaiting {
		if n.alone() {
			m := n.outbox[0]
			n.outbox = slices.Delete(n.outbox, 0, 1)
			n.ring(ctx, n.self, m)
			continue
		}
		n.send(ctx)
	}
}

func (n *node) send(ctx *sim.Context) {
	ctx.Send(n.next, n.outbox[0])
	n.awaiting, n.sentTo = true, n.next
	ctx.SetTimer(TimerAck, n.ackT)
}

// dist is how many steps forward in ring order j lies from this process (N for itself).
func (n *node) dist(j int) int {
	d := (j - n.self + len(n.ids)) % len(n.ids)
	if d == 0 {
		return len(n.ids)
	}
	return d
}

func (n *node) onHello(ctx *sim.Context, r int) {
	if n.regen == 0 {
		return
	}
	if n.awaiting && r == n.sentTo {
		// r crashed and came back before I noticed: what I sent it was lost with the
		// crash, so send it again rather than skip a process that is up.
		ctx.Rule("TR15")
		n.send(ctx)
		return
	}
	if n.dist(r) >= n.dist(n.next) {
		return
	}
	ctx.Rule("TR15")
	wasAlone := n.alone()
	n.next = r
	if wasAlone && n.token && n.state == Released {
		ctx.SetTimer(TimerHop, n.hop)
	}
}

func (n *node) Clone() sim.Node {
	c := *n
	c.outbox = slices.Clone(n.outbox)
	for k := range c.outbox {
		c.outbox[k] = c.outbox[k].Clone()
	}
	c.kept = n.kept.Clone()
	return &c
}

func (n *node) Encode(w *sim.StateWriter) {
	w.Str("state", n.state)
	w.Bool("token", n.token)
	w.Int("next", n.ids[n.next])
	if n.regen == 0 {
		return
	}
	w.Int("gen", n.gen)
	w.Bool("participant", n.participant)
	w.Int("candidate", n.fwd)
	kept := ""
	if n.hasKept {
		kept = show(&n.kept)
	}
	w.Str("kept", kept)
	out := make([]string, len(n.outbox))
	for k := range n.outbox {
		out[k] = show(&n.outbox[k])
	}
	w.Str("outbox", strings.Join(out, " "))
	awaiting := -1
	if n.awaiting {
		awaiting = n.ids[n.sentTo]
	}
	w.Int("awaitingAck", awaiting)
}

// show writes an election message as TYPE(id,gen).
func show(m *sim.Message) string {
	return m.Type + "(" + strconv.Itoa(m.Arg) + "," + strconv.Itoa(m.TS) + ")"
}

// HoldsToken reports whether the token is here.
func (n *node) HoldsToken() bool { return n.token }
