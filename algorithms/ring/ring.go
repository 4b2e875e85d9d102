// Package ring is the Chang-Roberts ring election: the largest id seen so far travels
// round a one-way ring; a process that gets its own id back has the largest id of all
// and announces itself with an ELECTED message that goes round once more. Participant
// flags kill the smaller elections started at the same time.
package ring

import (
	_ "embed"
	"slices"

	"github.com/teach-dist/playground/algorithms/params"
	"github.com/teach-dist/playground/algorithms/ringnext"
	"github.com/teach-dist/playground/runtime/sim"
)

// Message types.
const (
	MsgElection = "ELECTION"
	MsgElected  = "ELECTED"
)

// Params are the settings: only how crashed successors are found.
type Params struct {
	Ring ringnext.Params
}

// DefaultParams are the notes' version: skip crashed successors, told by a perfect
// failure detector, and restart an election that died.
func DefaultParams([]int) Params { return Params{Ring: ringnext.DefaultParams()} }

// ParseParams decodes {"skip": ..., "ack": bool, "ackTimeout": t, "restart": bool};
// nil, empty or null gives the defaults. Errors name the field.
var ParseParams = params.Parser(ringnext.Fields, DefaultParams)

type node struct {
	ringnext.Participation
	ids     []int // shared, never written
	highest int   // the highest id, the initial leader
	leader  int   // id, -1: unknown
	sent    int   // the id this process last sent in an ELECTION (-1: none)
	link    ringnext.Link
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
		Params:      ringnext.Fields,
		Earlier:     []sim.EarlierDefaults{{Epoch: 2, Params: ringnext.Earlier}, {Epoch: 3, Params: ringnext.Earlier3}},
		Stage:       sim.Stage{Ring: true},
		ParseParams: ParseParams,
		New:         newNode,

		// As the notes compare it with Bully: the coordinator, the highest id, has failed.
		CrashLeaderFirst: true,
		CostsCountLive:   true,
	})
	s.Rules = append(s.Rules, ringnext.Rules...)
	s.Vars = append(s.Vars, ringnext.Vars...)
	s.Messages = append(s.Messages, ringnext.AckMessage)
	return s
}

func newNode(self int, setup *sim.Setup) sim.Node {
	p := params.Of(setup, DefaultParams(nil))
	return &node{ids: setup.IDs, highest: slices.Max(setup.IDs), leader: -1, sent: -1,
		link:          ringnext.NewLink(p.Ring, setup.MaxDelay, owner),
		Participation: ringnext.NewParticipation(ringnext.RestartAfter(p.Ring, len(setup.IDs), setup.MaxDelay))}
}

// owner is the id a ring message must end at: its candidate or its leader.
func owner(m *sim.Message) int { return m.Arg }

func (n *node) Step(ctx *sim.Context, in *sim.Input) {
	switch in.Kind {
	case sim.Init:
		ctx.Rule("CR-1")
		n.Participant, n.leader = false, n.highest
		ctx.Leader(n.highest)
	case sim.Recover:
		// The kernel built a fresh state and already forgot this node's leader.
		ctx.Rule("CR-9")
		n.Participant, n.leader = false, -1
		n.elect(ctx)
	case sim.Elect:
		if !n.Participant {
			n.elect(ctx)
		}
	case sim.Timer:
		switch restart, died := n.Expired(in.Timer); {
		case died:
			ctx.Rule("CR-10")
			n.elect(ctx)
		case !restart:
			_, dropped := n.link.Timer(ctx, in.Timer)
			n.lost(ctx, dropped)
		}
	case sim.Deliver:
		m := &in.Msg
		if !n.link.Receive(ctx, m) {
			return
		}
		switch m.Type {
		case MsgElection:
			n.onElection(ctx, m.Arg)
		case MsgElected:
			n.onElected(ctx, m.Arg)
		}
	}
}

func (n *node) elect(ctx *sim.Context) {
	ctx.Rule("CR-2")
	n.Join(ctx)
	n.sendElection(ctx, ctx.SelfID())
}

// sendElection sends ELECTION(k) on; with check on, a candidate found crashed on the
// way (DT-1) is replaced by this process's own id (CR-11).
func (n *node) sendElection(ctx *sim.Context, k int) {
	n.sent = k
	if !n.link.Send(ctx, sim.Message{Type: MsgElection, Arg: k}) && n.link.Checks() && k != ctx.SelfID() {
		ctx.Rule("CR-11")
		n.sendElection(ctx, ctx.SelfID())
	}
}

// lost handles ring messages the link dropped because the process they must end at
// has crashed (found by a check or an ack time-out): with check on, a dead candidate
// is replaced by this process's id (CR-11) and a dead leader starts a new election
// (CR-12).
func (n *node) lost(ctx *sim.Context, dropped []sim.Message) {
	for _, m := range dropped {
		switch {
		case m.Type == MsgElection && n.link.Checks() && m.Arg != ctx.SelfID():
			ctx.Rule("CR-11")
			n.Join(ctx)
			n.sendElection(ctx, ctx.SelfID())
		case m.Type == MsgElected && n.link.Checks():
			n.deadLeader(ctx)
		}
	}
}

// deadLeader is CR-12: the announced leader has crashed, so a new election starts.
func (n *node) deadLeader(ctx *sim.Context) {
	ctx.Rule("CR-12")
	n.Leave(ctx)
	n.elect(ctx)
}

func (n *node) onElection(ctx *sim.Context, k int) {
	me := ctx.SelfID()
	switch {
	case k > me:
		ctx.Rule("CR-3")
		n.Join(ctx)
		n.sendElection(ctx, k)
	case k < me && !n.Participant:
		ctx.Rule("CR-4")
		n.Join(ctx)
		n.sendElection(ctx, me)
	case k < me && n.sent >= 0 && n.link.Crashed(ctx, n.sent):
		ctx.Rule("CR-13")
		n.Join(ctx)
		n.sendElection(ctx, me)
	case k < me:
		ctx.Rule("CR-5")
	case !n.Participant && n.link.Checks():
		ctx.Rule("CR-14")
	default:
		ctx.Rule("CR-6")
		n.Leave(ctx)
		n.leader = me
		ctx.Leader(me)
		n.link.Send(ctx, sim.Message{Type: MsgElected, Arg: me})
	}
}

func (n *node) onElected(ctx *sim.Context, k int) {
	if k == ctx.SelfID() {
		ctx.Rule("CR-8")
		return
	}
	if n.link.Crashed(ctx, k) {
		n.deadLeader(ctx)
		return
	}
	ctx.Rule("CR-7")
	n.Leave(ctx)
	n.leader = k
	ctx.Leader(k)
	n.link.Send(ctx, sim.Message{Type: MsgElected, Arg: k})
}

func (n *node) Encode(w *sim.StateWriter) {
	w.Bool("participant", n.Participant)
	w.Int("leader", n.leader)
	n.link.Encode(w, n.ids)
}

func (n *node) Clone() sim.Node {
	c := *n
	c.link = n.link.Clone()
	return &c
}
