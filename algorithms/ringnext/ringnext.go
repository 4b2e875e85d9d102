// Package ringnext is how a process of a ring election passes a message on: to its
// successor in the ring order (setup.IDs order, successor of index i is (i+1) mod N),
// past a successor that has crashed, and when to give up on an election that died.
//
// The two ring elections (ring, ring-list) share it so that "skipping a crashed
// successor" means the same thing, and costs the same, in both.
//
// The notes make skipping part of the algorithm (002: "if p(i+1) is faulty, p_i skips
// over it and goes to the next process along the ring"; 000: each process knows its
// neighbour's neighbour so a crashed one can be bypassed). How a process learns that
// its successor is down is the "skip" param:
//   - "detector" (default): a perfect failure detector tells it, as 003 assumes
//     ("crashes are reliably detected"). No extra messages, so a ring without crashes
//     costs exactly the notes' counts (Chang-Roberts 2N to 3N-1).
//   - "ack": every ring message is acknowledged, and a sender that hears nothing within
//     the time-out presumes the successor dead and sends to the one after it (000:
//     "a process that gets no response for a period of time suspects a failure"). The
//     ACKs are real messages: every count doubles.
//   - "none": the message goes to the crashed successor and is lost (the earlier
//     default; the notes' point that the ring must then be reconfigured).
//
// A process that crashes during an election can take a ring message with it. With the
// detector and "check" (the default) nobody needs to know how many processes the ring
// has: a sender looks again, one largest delay after sending, whether the process it
// sent to is still up, and if not sends the message again past it (DT-2); the ring
// elections start a new election when they find the candidate or the announced leader
// crashed. The earlier way, "restart" (a participant that hears no outcome within 3N
// hops starts a new election, 000's Bully rule), needs N and is now a variant.
package ringnext

import (
	_ "embed"
	"fmt"
	"slices"
	"strconv"

	"github.com/teach-dist/playground/algorithms/nodeid"
	"github.com/teach-dist/playground/runtime/sim"
)

// Ways of learning that a successor is down (the "skip" param).
const (
	SkipDetector = "detector"
	SkipAck      = "ack"
	SkipNone     = "none"
)

// MsgAck acknowledges one ring message (ack mode only).
const MsgAck = "ACK"

// Timer names (stable: they appear in the trace).
const (
	TimerAck     = "ack"     // the acknowledgement time-out
	TimerRestart = "restart" // a participant's wait for the outcome of its election
	TimerCheck   = "check"   // with the detector: look again at the processes sent to
)

// text is the ring elections' shared part of what the pages show: the rules of
// passing messages on, ack mode's variables and its message.
//
//go:embed spec.txt
var text string

// described is text, read once.
var described = sim.BuildSpec(text, sim.Spec{})

// Rules are the labelled rules of passing messages on; each ring election lists them
// after its own.
var Rules = described.Rules

// AckMessage is the schema of MsgAck.
var AckMessage = described.Messages[0]

// Vars are the inspector variables of ack mode (written only when it is on).
var Vars = described.Vars

// Params say how a crashed successor is passed. A ring election keeps them in its own
// params struct as an untagged field, so their fields are decoded with its own.
type Params struct {
	Skip       string `param:"skip"`       // SkipDetector, SkipAck or SkipNone
	Ack        bool   `param:"ack"`        // the earlier spelling of Skip = SkipAck; true wins
	AckTimeout int    `param:"ackTimeout"` // 0: derived from the network's largest delay
	Restart    bool   `param:"restart"`
	// Check: with the detector, a message lost with a process that crashed is sent
	// again (DT-2), and a crashed candidate or announced leader starts a new election.
	Check bool `param:"check"`
}

// DefaultParams are the notes' version: a perfect failure detector, checking that no
// message was lost with a crashed process; no restart time-out, which would need N.
func DefaultParams() Params { return Params{Skip: SkipDetector, Check: true} }

// Earlier is the params that keep the behaviour of links made before skipping became
// the default (defaults epoch 2): no skipping, no restart.
const Earlier = `{"skip":"none","restart":false}`

// Earlier3 is the params that keep the behaviour of links made before defaults epoch 3:
// the restart time-out of 3N hops, no check.
const Earlier3 = `{"check":false,"restart":true}`

// Fields declare Params as params fields; each ring election lists them after its own.
var Fields = []sim.Param{
	{Name: "skip", Kind: sim.ParamChoice, Choices: []string{SkipDetector, SkipAck, SkipNone}, Default: `"detector"`,
		Doc: "how a process finds its successor crashed and passes over it: detector (told at once, as 003 assumes; no extra messages), ack (every ring message acknowledged, a silent successor skipped after a time-out), none (the message is lost at the crashed process)"},
	{Name: "ack", Kind: sim.ParamBool, Default: "false",
		Doc: `the earlier way to ask for acknowledgements: true is "skip": "ack" (and wins over skip)`},
	{Name: "ackTimeout", Kind: sim.ParamInt, Min: 1,
		Doc: `how long a sender waits for an ACK, only with acknowledgements; left out, 2 × the largest delay + 1`},
	{Name: "restart", Kind: sim.ParamBool, Default: "false",
		Doc: "a participant that hears no outcome within 3N hops (the election died) starts a new one; it needs every process to know N, so it is off by default; only when crashed successors are skipped"},
	{Name: "check", Kind: sim.ParamBool, Default: "true",
		Doc: "with the detector: a sender looks again one largest delay after sending and re-sends a message lost with a crashed process; a crashed candidate or announced leader starts a new election (needs no N)"},
}

// Validate: a time-out without acknowledgements would silently do nothing.
func (p Params) Validate(field string) error {
	if p.AckTimeout != 0 && p.Mode() != SkipAck {
		return fmt.Errorf(`%s.ackTimeout: only used with "skip": "ack"`, field)
	}
	return nil
}

// Mode is how crashed successors are passed: Skip, or SkipAck when Ack is set.
func (p Params) Mode() string {
	if p.Ack {
		return SkipAck
	}
	if p.Skip == "" {
		return SkipDetector
	}
	return p.Skip
}

// RestartAfter is the restart time-out for n processes on a network whose delays are
// at most maxDelay (0: no restart). An election takes at most 3N hops (N-1 to reach
// the highest id, N back, N for the announcement); with acknowledgements a hop may
// also wait a time-out per crashed process passed and for the messages queued ahead
// of it, so it is given N time-outs. A restart that comes too early costs messages,
// never the outcome: the highest id still goes all round.
func RestartAfter(p Params, n, maxDelay int) int {
	if !p.Restart || p.Mode() == SkipNone {
		return 0
	}
	hop := max(maxDelay, 1)
	if p.Mode() == SkipAck {
		hop += n * Timeout(p, maxDelay)
	}
	return 3*n*hop + 1
}

// Participation is a process's part in the election under way: the notes' participant
// flag, and the process's wait for the outcome (TimerRestart), restarted by every
// message it sends on, each a sign that the election is alive. Both ring elections
// embed it.
type Participation struct {
	Participant bool
	restart     int // the restart time-out; 0: never
}

// NewParticipation waits restart for an election's outcome (RestartAfter; 0: never).
func NewParticipation(restart int) Participation { return Participation{restart: restart} }

// Join makes the process a participant and (re)starts its wait for the outcome.
func (p *Participation) Join(ctx *sim.Context) {
	p.Participant = true
	if p.restart > 0 {
		ctx.SetTimer(TimerRestart, p.restart)
	}
}

// Leave ends the process's part in the election: it knows the outcome.
func (p *Participation) Leave(ctx *sim.Context) {
	p.Participant = false
	if p.restart > 0 {
		ctx.CancelTimer(TimerRestart)
	}
}

// Expired reads a timer: restart when it is the restart time-out (no other timer's
// business), died when the process was still a participant, so the election it waited
// for died: it stops taking part, and the caller starts a new election.
func (p *Participation) Expired(timer string) (restart, died bool) {
	if timer != TimerRestart {
		return false, false
	}
	died = p.Participant
	p.Participant = false
	return true, died
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
	ack        bool
	detector   bool
	check      bool                     // detector mode: look again at the processes sent to (DT-2)
	sent       []sim.Message            // check: the messages sent since the last check, To set
	owner      func(m *sim.Message) int // the id a message must end at (-1: none)
	timeout    int
	checkAfter int           // check: the largest delay and one
	to         int           // index the head of pending went to; -1: none
	pending    []sim.Message // the message on its way first, then the queued ones
}

// NewLink builds a link for these params on a network whose delays are at most maxDelay.
// owner returns the id of the process a message must end at (-1: none): a message whose
// owner is found crashed is dropped, since nobody else could stop it going round.
func NewLink(p Params, maxDelay int, owner func(m *sim.Message) int) Link {
	detector := p.Mode() == SkipDetector
	return Link{ack: p.Mode() == SkipAck, detector: detector, check: detector && p.Check,
		owner: owner, timeout: Timeout(p, maxDelay), checkAfter: max(maxDelay, 1) + 1, to: -1}
}

// Checks says whether the link runs with the detector and check on: the ring
// elections then also start a new election when they find the candidate or the
// announced leader crashed.
func (l *Link) Checks() bool { return l.check }

// Crashed says whether, with the detector and check on (Checks), the detector sees
// process id crashed: the candidate or leader a ring election must then replace.
func (l *Link) Crashed(ctx *sim.Context, id int) bool {
	if !l.check {
		return false
	}
	i, ok := ctx.Index(id)
	return !ok || !ctx.Up(i)
}

// Send passes m on to the successor; in ack mode it waits in line while an earlier
// message is not acknowledged. It reports false when m was dropped because the
// process it must end at has crashed (DT-1).
func (l *Link) Send(ctx *sim.Context, m sim.Message) bool {
	if !l.ack {
		to := l.next1(ctx, &m)
		if to < 0 {
			return false
		}
		ctx.Send(to, m)
		if l.check {
			m = m.Clone()
			m.To = to
			l.sent = append(l.sent, m)
			// From the last send: every message recorded has arrived or was lost by then.
			ctx.SetTimer(TimerCheck, l.checkAfter)
		}
		return true
	}
	l.pending = append(l.pending, m.Clone())
	if len(l.pending) == 1 {
		l.sendHead(ctx, Successor(ctx.Self(), ctx.N()))
		return true
	}
	ctx.Rule("AK-1")
	return true
}

// next1 is the process m goes to without acknowledgements: the successor, or with the
// detector the first one after it that is up (DT-1; this process itself when all the
// others are down); -1 when m must end at a crashed process it skips.
func (l *Link) next1(ctx *sim.Context, m *sim.Message) int {
	to := Successor(ctx.Self(), ctx.N())
	if !l.detector || ctx.Up(to) {
		return to
	}
	ctx.Rule("DT-1")
	for to != ctx.Self() && !ctx.Up(to) {
		if l.owner(m) == ctx.ID(to) {
			return -1
		}
		to = Successor(to, ctx.N())
	}
	return to
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

// Receive sees every delivered message first. It consumes an ACK (AK-3) and, in ack
// mode, acknowledges a ring message (AK-2). It reports whether the algorithm should go
// on and handle m.
func (l *Link) Receive(ctx *sim.Context, m *sim.Message) bool {
	if m.Type == MsgAck {
		// An ACK from a process already skipped (a time-out that was too short) or with
		// nothing waiting changes nothing.
		if len(l.pending) > 0 && m.From == l.to {
			ctx.Rule("AK-3")
			ctx.CancelTimer(TimerAck)
			l.next(ctx)
		}
		return false
	}
	if l.ack {
		ctx.Rule("AK-2")
		ctx.Send(m.From, sim.Message{Type: MsgAck})
	}
	return true
}

// Timer handles the ack time-out (AK-4) and the check (DT-2), and reports whether name
// was one of them; a message whose owner is the skipped process is dropped, since it
// could otherwise go round for ever, and returned in dropped so that the election can
// start anew when its candidate or leader has crashed.
func (l *Link) Timer(ctx *sim.Context, name string) (handled bool, dropped []sim.Message) {
	if name == TimerCheck {
		return true, l.recheck(ctx)
	}
	if name != TimerAck {
		return false, nil
	}
	if len(l.pending) == 0 {
		return true, nil
	}
	ctx.Rule("AK-4")
	if l.owner(&l.pending[0]) == ctx.ID(l.to) {
		m := l.pending[0].Clone()
		l.next(ctx)
		return true, []sim.Message{m}
	}
	// Wraps round to this process itself when all the others are silent.
	l.sendHead(ctx, Successor(l.to, ctx.N()))
	return true, nil
}

// recheck is DT-2: every message sent since the last check whose receiver has crashed
// since may have been lost with it, so it goes again, past the crashed process.
func (l *Link) recheck(ctx *sim.Context) (dropped []sim.Message) {
	sent := l.sent
	l.sent = nil
	fired := false
	for k := range sent {
		m := sent[k]
		if ctx.Up(m.To) {
			continue
		}
		if !fired {
			ctx.Rule("DT-2")
			fired = true
		}
		m.To = 0
		if !l.Send(ctx, m) {
			dropped = append(dropped, m)
		}
	}
	return dropped
}

// Clone deep-copies the link.
func (l Link) Clone() Link {
	if l.sent != nil {
		sent := make([]sim.Message, len(l.sent))
		for i := range l.sent {
			sent[i] = l.sent[i].Clone()
		}
		l.sent = sent
	}
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
	if l.check {
		// The messages a check may send again: two links holding different ones behave
		// differently. Written only when there are some, so runs without crashes keep
		// their states.
		if len(l.sent) > 0 {
			s := make([]string, len(l.sent))
			for k := range l.sent {
				s[k] = MessageString(&l.sent[k]) + "->" + strconv.Itoa(nodeid.Of(ids, l.sent[k].To))
			}
			w.Strs("unchecked", s)
		}
		return
	}
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
