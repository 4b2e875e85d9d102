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
	"slices"
	"strconv"
	"strings"

	"github.com/teach-dist/playground/algorithms/cs"
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

// Timer names (stable: they appear in the trace).
const (
	TimerHop  = "hop"  // an unwanted token is passed on when it fires
	TimerLost = "lost" // no token seen for "regenerate" time units
	TimerAck  = "ack"  // the successor did not acknowledge an election message
)

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
	kept        sim.Message   // an ELECTED held back until TR-5: the token in the CS is superseded
	hasKept     bool          // kept is set
	outbox      []sim.Message // ELECTION/ELECTED for next, one at a time
	awaiting    bool          // outbox[0] was sent and waits for its ACK
	sentTo      int           // index outbox[0] was sent to (valid while awaiting)
}

func newNode(self int, setup *sim.Setup) sim.Node {
	p := params.Of(setup, DefaultParams(setup.IDs))
	holder := params.Holder(setup.IDs, p.Holder, holderParam)
	hop := max(p.Hop, 1)
	ackT := p.AckTimeout
	if ackT <= 0 {
		// An ELECTION and its ACK take at most two delays; one more unit keeps a timer
		// due at the same time as the ACK from firing first.
		ackT = 2*setup.MaxDelay + 1
	}
	return &node{self: self, ids: setup.IDs, holder: holder, hop: hop, regen: max(p.Regenerate, 0), ackT: ackT,
		state: cs.Released, next: (self + 1) % len(setup.IDs), fwd: -1}
}

func (n *node) Step(ctx *sim.Context, in *sim.Input) {
	switch in.Kind {
	case sim.Init:
		ctx.Rule("TR-1")
		n.reset()
		if n.self == n.holder {
			n.token = true
			ctx.SetTimer(TimerHop, n.hop)
		} else {
			n.armLost(ctx)
		}
	case sim.Recover:
		ctx.Rule("TR-14")
		n.reset()
		if n.regen > 0 {
			for j := 0; j < ctx.N(); j++ {
				if j != n.self {
					ctx.Send(j, sim.Message{Type: MsgHello})
				}
			}
			n.armLost(ctx)
		}
	case sim.Request, sim.Release:
		cs.Command(ctx, in.Kind, n.state, n.request, n.release)
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

// reset is the state of TR-1 without any token: a recovered process has lost whatever
// it held.
func (n *node) reset() {
	n.state, n.token, n.next, n.gen = cs.Released, false, (n.self+1)%len(n.ids), 0
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
	ctx.Rule("TR-2")
	n.state = cs.Wanted
	if n.token {
		ctx.CancelTimer(TimerHop)
		n.enter(ctx)
	}
}

func (n *node) enter(ctx *sim.Context) {
	cs.Enter(ctx, &n.state)
}

// take is TR-3 once the token is known to be valid.
func (n *node) take(ctx *sim.Context, gen int) {
	n.token, n.gen, n.participant = true, gen, false
	if n.regen > 0 {
		ctx.CancelTimer(TimerLost)
	}
	if n.state == cs.Wanted {
		n.enter(ctx)
		return
	}
	if !n.alone() {
		ctx.SetTimer(TimerHop, n.hop)
	}
}

func (n *node) onToken(ctx *sim.Context, gen int) {
	if gen < n.gen || n.token {
		ctx.Rule("TR-11")
		return
	}
	ctx.Rule("TR-3")
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
	ctx.Rule("TR-5")
	cs.Leave(ctx, &n.state)
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
		if n.token && n.state == cs.Released && !n.alone() {
			ctx.Rule("TR-4")
			n.pass(ctx)
		}
	case TimerLost:
		if n.token || n.regen == 0 {
			return
		}
		ctx.Rule("TR-6")
		n.participant, n.fwd = true, ctx.SelfID()
		n.outbox = append(n.outbox, sim.Message{Type: MsgElection, Arg: ctx.SelfID(), TS: n.gen})
		n.armLost(ctx)
	case TimerAck:
		if !n.awaiting {
			return
		}
		ctx.Rule("TR-13")
		n.awaiting = false
		// A HELLO may already have given a closer successor; otherwise skip the silent one.
		if n.next == n.sentTo {
			n.next = (n.sentTo + 1) % ctx.N()
		}
	}
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

func (n *node) Clone() sim.Node {
	c := *n
	c.outbox = slices.Clone(n.outbox)
	for k := range c.outbox {
		c.outbox[k] = c.outbox[k].Clone()
	}
	c.kept = n.kept.Clone()
	return &c
}

// show writes an election message as TYPE(id,gen).
func show(m *sim.Message) string {
	return m.Type + "(" + strconv.Itoa(m.Arg) + "," + strconv.Itoa(m.TS) + ")"
}

// HoldsToken reports whether the token is here.
func (n *node) HoldsToken() bool { return n.token }
