package tokenring

// Regeneration: the Chang-Roberts election that replaces a lost token (TR-6-TR-10), the
// stop-and-wait link that finds crashed successors (TR-12, TR-13) and the way back into
// the ring after a crash (TR-15). The package comment tells the design.

import (
	"slices"

	"github.com/teach-dist/playground/algorithms/cs"
	"github.com/teach-dist/playground/runtime/sim"
)

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
		ctx.Rule("TR-8")
		n.ack(ctx, from)
		n.participant = false
		n.gen = max(g, n.gen) + 1
		n.outbox = append(n.outbox, sim.Message{Type: MsgElected, Arg: me, TS: n.gen})
		return
	}
	ctx.Rule("TR-7")
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
			ctx.Rule("TR-10")
			n.ack(ctx, from)
			n.take(ctx, g)
			return
		}
		ctx.Rule("TR-9") // an older round of mine: only acknowledged
		n.ack(ctx, from)
		return
	}
	ctx.Rule("TR-9")
	n.ack(ctx, from)
	if g <= n.gen {
		return
	}
	n.gen, n.participant = g, false
	fwd := sim.Message{Type: MsgElected, Arg: k, TS: g}
	if n.token {
		if n.state == cs.Held {
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
	ctx.Rule("TR-12")
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
		ctx.Rule("TR-15")
		n.send(ctx)
		return
	}
	if n.dist(r) >= n.dist(n.next) {
		return
	}
	ctx.Rule("TR-15")
	wasAlone := n.alone()
	n.next = r
	if wasAlone && n.token && n.state == cs.Released {
		ctx.SetTimer(TimerHop, n.hop)
	}
}
