// Package ringnext is how a process of a ring election passes a message on: to its
// successor in the ring order (setup.IDs order, successor of index i is (i+1) mod N),
// and, when acknowledgements are switched on, past a successor that stays silent.
//
// The two ring elections (ring, ring-list) share it so that "skipping a crashed
// successor" means the same thing, and costs the same, in both.
//
// Why acknowledgements: the kernel never tells a process that another one crashed, and a
// message sent to a crashed process is simply lost. The only honest way for a sender to
// find out is to expect an answer and give up waiting: with "ack" on, every ring message
// is acknowledged by its receiver, and a sender that hears nothing within the time-out
// presumes the successor dead and sends to the one after it (the notes: "skips over it
// and goes to the next process along the ring"). The ACKs are real messages and the
// notes' message counts leave them out, so they are off by default; without them a
// crashed successor swallows the election, which is the notes' point that the ring must
// be reconfigured around a failed process.
package ringnext

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/teach-dist/playground/algorithms/nodeid"
	"github.com/teach-dist/playground/runtime/sim"
)

// MsgAck acknowledges one ring message (ack mode only).
const MsgAck = "ACK"

// TimerAck is the name of the acknowledgement time-out (stable: it appears in the trace).
const TimerAck = "ack"

// Rules are the labelled rules of ack mode; each ring election lists them after its own.
var Rules = []sim.Rule{
	{Label: "AK1", Group: "Passing messages on (ack mode only)", Lines: []string{
		"to send a ring message m:",
		"    if an earlier one of mine still waits for its ACK:",
		"        queue m behind it   // the successor gets them in the order sent",
		"    else: next := my successor; send m to next; start the ack time-out"},
		Says: "queues the message behind the one still waiting for its acknowledgement"},
	{Label: "AK2", Group: "Passing messages on (ack mode only)", Lines: []string{
		"on receiving a ring message from p:",
		"    send ACK to p first   // 'I am alive and have it'; then handle the message"},
		Says: "acknowledges the ring message it received, so its predecessor knows it is alive"},
	{Label: "AK3", Group: "Passing messages on (ack mode only)", Lines: []string{
		"on ACK from next:   // the message I sent it has arrived",
		"    forget that message; stop the ack time-out",
		"    if one is queued: next := my successor;",
		"        send it to next; start the ack time-out"},
		Says: "hears that its successor has the message, and sends the next queued one, if any"},
	{Label: "AK4", Group: "Passing messages on (ack mode only)", Lines: []string{
		"when the ack time-out expires:   // no ACK from next",
		"    presume next crashed",
		"    if the message must end at next (its candidate, leader or announcer):",
		"        drop it   // nobody else could stop it going round",
		"        and send the queued one, if any, to my successor",
		"    else: next := the process after next; send it there",
		"    start the ack time-out again if a message was sent",
		"// every message starts at the direct successor: a process that",
		"// recovers is back in the ring at once"},
		Says: "hears nothing from its successor in time, presumes it crashed and sends to the one after it"},
}

// AckMessage is the schema of MsgAck.
var AckMessage = sim.MessageType{Name: MsgAck, Label: "ACK", Doc: "ack mode only: the receiver of a ring message is alive and has it"}

// Vars are the inspector variables of ack mode (written only when it is on).
var Vars = []sim.Var{
	{Name: "awaiting", Doc: "ack mode only: id of the process whose ACK this one waits for (-1: none)"},
	{Name: "unacked", Doc: "ack mode only: ring messages not yet acknowledged: the one on its way, then those queued behind it, as TYPE(id) or TYPE[list]"},
}

// Params switch acknowledgements on. A ring election keeps them in its own params
// struct as an untagged field, so their fields are decoded with its own.
type Params struct {
	Ack        bool `param:"ack"`
	AckTimeout int  `param:"ackTimeout"` // 0: derived from the network's largest delay
}

// Fields declare Params as params fields; each ring election lists them after its own.
var Fields = []sim.Param{
	{Name: "ack", Kind: sim.ParamBool, Default: "false",
		Doc: "acknowledge every ring message, so a sender can skip a successor that stays silent"},
	{Name: "ackTimeout", Kind: sim.ParamInt, Min: 1,
		Doc: `how long a sender waits for an ACK, only with "ack": true; left out, 2 × the largest delay + 1`},
}

// Validate: a time-out without acknowledgements would silently do nothing.
func (p Params) Validate(field string) error {
	if p.AckTimeout != 0 && !p.Ack {
		return fmt.Errorf(`%s.ackTimeout: only used with "ack": true`, field)
	}
	return nil
}

// Timeout is the ack time-out for a network whose delays are at most maxDelay: a ring
// message and its ACK take at most 2*maxDelay, and a timer due at the same time as a
// delivery may fire first, so one more unit keeps a live successor from being skipped.
func Timeout(p Params, maxDelay int) int {
	if p.AckTimeout > 0 {
		return p.AckTimeout
	}
	return 2*maxDelay + 1
}

// Successor is the index after i in the ring of n.
func Successor(i, n int) int { return (i + 1) % n }

// Link is one process's way forward round the ring. In ack mode it sends one message at
// a time and waits for its ACK (stop and wait): the successor gets them in the order they
// were sent, and each starts at the direct successor, so a detour around a crashed
// process never outlives the message that found it.
type Link struct {
	ack     bool
	timeout int
	to      int           // index the head of pending went to; -1: none
	pending []sim.Message // the message on its way first, then the queued ones
}

// NewLink builds a link for these params on a network whose delays are at most maxDelay.
func NewLink(p Params, maxDelay int) Link {
	return Link{ack: p.Ack, timeout: Timeout(p, maxDelay), to: -1}
}

// Send passes m on to the successor; in ack mode it waits in line while an earlier
// message is not acknowledged.
func (l *Link) Send(ctx *sim.Context, m sim.Message) {
	if !l.ack {
		ctx.Send(Successor(ctx.Self(), ctx.N()), m)
		return
	}
	l.pending = append(l.pending, m.Clone())
	if len(l.pending) == 1 {
		l.sendHead(ctx, Successor(ctx.Self(), ctx.N()))
		return
	}
	ctx.Rule("AK1")
}

func (l *Link) sendHead(ctx *sim.Context, to int) {
	l.to = to
	ctx.Send(to, l.pending[0].Clone())
	ctx.SetTimer(TimerAck, l.timeout)
}

// next forgets the head and sends the queued one after it, if any, to the successor.
func (l *Link) next(ctx *sim.Context) {
	l.pending[0] = sim.Message{} // drop its slices
	l.pending = slices.Delete(l.pending, 0, 1)
	l.to = -1
	if len(l.pending) > 0 {
		l.sendHead(ctx, Successor(ctx.Self(), ctx.N()))
	}
}

// Receive sees every delivered message first. It consumes an ACK (AK3) and, in ack
// mode, acknowledges a ring message (AK2). It reports whether the algorithm should go
// on and handle m.
func (l *Link) Receive(ctx *sim.Context, m *sim.Message) bool {
	if m.Type == MsgAck {
		// An ACK from a process already skipped (a time-out that was too short) or with
		// nothing waiting changes nothing.
		if len(l.pending) > 0 && m.From == l.to {
			ctx.Rule("AK3")
			ctx.CancelTimer(TimerAck)
			l.next(ctx)
		}
		return false
	}
	if l.ack {
		ctx.Rule("AK2")
		ctx.Send(m.From, sim.Message{Type: MsgAck})
	}
	return true
}

// Timer handles the ack time-out (AK4) and reports whether name was it. owner returns
// the id of the process a message must end at (-1: none); a message whose owner is the
// skipped process is dropped, since it could otherwise go round for ever.
func (l *Link) Timer(ctx *sim.Context, name string, owner func(m *sim.Message) int) bool {
	if name != TimerAck {
		return false
	}
	if len(l.pending) == 0 {
		return true
	}
	ctx.Rule("AK4")
	if owner(&l.pending[0]) == ctx.ID(l.to) {
		l.next(ctx)
		return true
	}
	// Wraps round to this process itself when all the others are silent.
	l.sendHead(ctx, Successor(l.to, ctx.N()))
	return true
}

// Clone deep-copies the link.
func (l Link) Clone() Link {
	if l.pending != nil {
		p := make([]sim.Message, len(l.pending))
		for i := range l.pending {
			p[i] = l.pending[i].Clone()
		}
		l.pending = p
	}
	return l
}

// Encode writes the ack-mode variables (nothing when acknowledgements are off).
func (l *Link) Encode(w *sim.StateWriter, ids []int) {
	if !l.ack {
		return
	}
	w.Int("awaiting", nodeid.Of(ids, l.to))
	// The messages themselves, not just how many: they are re-sent on a time-out, so
	// two links holding different ones behave differently (the explorer relies on
	// Encode telling such states apart).
	unacked := make([]string, len(l.pending))
	for k := range l.pending {
		unacked[k] = MessageString(&l.pending[k])
	}
	w.Strs("unacked", unacked)
}

// MessageString writes a ring message compactly: TYPE(arg), TYPE[list] or
// TYPE(arg)[list] (a list with arg 0 leaves the arg out), then @ts if it has one.
func MessageString(m *sim.Message) string {
	s := m.Type
	if m.Vec == nil || m.Arg != 0 {
		s += "(" + strconv.Itoa(m.Arg) + ")"
	}
	if m.Vec != nil {
		s += "["
		for i, v := range m.Vec {
			if i > 0 {
				s += ","
			}
			s += strconv.Itoa(v)
		}
		s += "]"
	}
	if m.TS != 0 {
		s += "@" + strconv.Itoa(m.TS)
	}
	return s
}
