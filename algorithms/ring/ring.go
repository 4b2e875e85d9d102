// Package ring is the Chang-Roberts ring election: the largest id seen so far travels
// round a one-way ring; a process that gets its own id back has the largest id of all
// and announces itself with an ELECTED message that goes round once more. Participant
// flags kill the smaller elections started at the same time.
package ring

import (
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

// Spec describes the algorithm for the registry (algorithms.All). Each call builds
// a new one: no caller can change what another sees.
func Spec() *sim.Spec {
	return &sim.Spec{
		Slug:    "ring",
		Title:   "Ring election (Chang-Roberts)",
		Family:  sim.Election,
		Summary: "The largest id seen so far goes round a one-way ring, past crashed processes, until its owner gets it back and announces itself: between 2N and 3N-1 messages, and participant flags silence competing elections. By default a perfect failure detector (003) tells a process its successor is down, so the counts are the notes'; acknowledgements are a variant.",
		Rules: slices.Concat([]sim.Rule{
			{Label: "CR-1", Group: "Initialisation", Lines: []string{
				"participant := false",
				"leader := the highest id   // the run starts with a working leader"},
				Says: "starts as a non-participant that takes the highest id as leader"},
			{Label: "CR-2", Group: "Noticing the leader is gone", Lines: []string{
				"if not participant:",
				"    participant := true",
				"    send ELECTION(my id) to my successor",
				"// a participant already took part: the election under way will tell it"},
				Says: "notices the leader is gone and sends its own id round the ring"},
			{Label: "CR-3", Group: "Receiving ELECTION(k)", Lines: []string{
				"if k > my id:",
				"    participant := true",
				"    send ELECTION(k) to my successor   // always, participant or not"},
				Says: "passes on a larger id unchanged"},
			{Label: "CR-4", Group: "Receiving ELECTION(k)", Lines: []string{
				"if k < my id and not participant:",
				"    participant := true",
				"    send ELECTION(my id) to my successor   // mine replaces k"},
				Says: "replaces a smaller id with its own and joins the election"},
			{Label: "CR-5", Group: "Receiving ELECTION(k)", Lines: []string{
				"if k < my id and participant:",
				"    discard the message   // I already sent an id at least as large as mine"},
				Says: "swallows a smaller id: it has already sent on one at least as large"},
			{Label: "CR-13", Group: "Receiving ELECTION(k)", Lines: []string{
				"// check on: the failure detector is asked before swallowing (CR-5)",
				"if k < my id and participant and the id I sent on has crashed:",
				"    // the election I took part in died with it",
				"    send ELECTION(my id) to my successor   // mine replaces k, as in CR-4"},
				Says: "would swallow a smaller id, but the id it sent on has crashed: that election is dead, so it sends its own"},
			{Label: "CR-14", Group: "Receiving ELECTION(k)", Lines: []string{
				"// check on: a message sent again after a crash (DT-2) can come twice",
				"if k = my id and not participant:",
				"    discard it   // a copy of an election I have already won"},
				Says: "gets its own id back once more, a copy of an election it has already won, and discards it"},
			{Label: "CR-6", Group: "Receiving ELECTION(k)", Lines: []string{
				"if k = my id:   // my id went all the way round: nobody alive is larger",
				"    participant := false; leader := my id",
				"    send ELECTED(my id) to my successor"},
				Says: "gets its own id back, so it has the largest id and announces itself"},
			{Label: "CR-12", Group: "Receiving ELECTED(k)", Lines: []string{
				"// check on: the failure detector is asked about the announced leader",
				"if k has crashed:   // it is skipped: a dead process cannot lead",
				"    participant := false",
				"    start an election (CR-2)   // not passed on: the new one tells everyone"},
				Says: "finds the announced leader crashed and starts a new election instead of passing the announcement on"},
			{Label: "CR-7", Group: "Receiving ELECTED(k)", Lines: []string{
				"if k ≠ my id:",
				"    participant := false; leader := k",
				"    send ELECTED(k) to my successor"},
				Says: "records the new leader and passes the announcement on"},
			{Label: "CR-8", Group: "Receiving ELECTED(k)", Lines: []string{
				"if k = my id:",
				"    discard it: the announcement has been all round, the election is over"},
				Says: "sees its own announcement come back: everyone knows, the election is over"},
			{Label: "CR-9", Group: "Recovering after a crash", Lines: []string{
				"participant := false; leader := unknown",
				"start an election (CR-2)   // the way back into the ring"},
				Says: "comes back knowing no leader and starts an election to learn one"},
			{Label: "CR-10", Group: "An election that died", Lines: []string{
				"// set when I become a participant, stopped when an ELECTED reaches me",
				"when no ELECTED arrived within the restart time-out:",
				"    // the election died with a process that crashed during it",
				"    participant := false",
				"    start an election (CR-2)"},
				Says: "has heard no outcome for too long: the election died with a crashed process, so it starts a new one"},
			{Label: "CR-11", Group: "The candidate crashed", Lines: []string{
				"// check on: ELECTION(k) must go on, but k has crashed (DT-1 skips it)",
				"send ELECTION(my id) to my successor   // a dead candidate cannot win"},
				Says: "finds the candidate of the ELECTION it passes on crashed, and sends its own id in its place"},
		}, ringnext.Rules),
		Vars: slices.Concat([]sim.Var{
			{Name: "participant", Doc: "true once it sent an ELECTION, until an ELECTED passes (or it wins)"},
			{Name: "leader", Doc: "id of the leader this process believes in (-1: unknown)"},
		}, ringnext.Vars),
		Messages: []sim.MessageType{
			{Name: MsgElection, Label: "ELEC", Doc: "carries the largest id seen so far round the ring", Arg: "candidate"},
			{Name: MsgElected, Label: "ELCTD", Doc: "announces the winner; goes round the ring once", Arg: "leader"},
			ringnext.AckMessage,
		},
		Costs: []sim.Cost{
			{Name: "messages, best case (one initiator, it has the highest id)", Formula: "2N (N ELECTION + N ELECTED)",
				Value: func(n int) float64 { return float64(2 * n) }, Initiators: 1},
			{Name: "messages, worst case (one initiator, just after the highest id)",
				Notes: []sim.NoteFormula{
					{In: []string{"000"}, Formula: "3n - 1", Value: func(n int) float64 { return float64(3*n - 1) }}},
				Formula: "3N-1 (N-1 to reach the highest, N back to it, N ELECTED)",
				Value:   func(n int) float64 { return float64(3*n - 1) }, Initiators: 1},
			{Name: "messages on average (one initiator, each process as likely)",
				Notes:   []sim.NoteFormula{{In: []string{"000"}, Formula: "2n + n/2", Value: func(n int) float64 { return 2*float64(n) + float64(n)/2 }}},
				Formula: "about 2N + N/2 (exactly 2N + (N-1)/2)",
				Value:   func(n int) float64 { return float64(2*n) + float64(n-1)/2 }, Initiators: 1},
			{Name: "ELECTED messages", Formula: "N", Value: func(n int) float64 { return float64(n) }},
			// 003 names no case: its figure is per election, as it says.
			{Name: "messages per election",
				Notes: []sim.NoteFormula{{In: []string{"003"}, Formula: "3N -1 messages per election", Value: func(n int) float64 { return float64(3*n - 1) }}}},
			{Name: "messages, every process starts at once (FIFO channels)", Formula: "from 3N-1 (ids increasing round the ring) to N(N+1)/2 + N (decreasing): O(N²)"},
			{Name: `with "skip": "ack"`, Formula: "one ACK per delivered message, plus one lost message and one time-out per crashed process passed"},
		},
		Defaults:    sim.Defaults{Nodes: 6, Delay: [2]int{1, 3}, FIFO: false, CS: 0, Until: 500},
		Params:      ringnext.Fields,
		Earlier:     []sim.EarlierDefaults{{Epoch: 2, Params: ringnext.Earlier}, {Epoch: 3, Params: ringnext.Earlier3}},
		Stage:       sim.Stage{Ring: true},
		ParseParams: ParseParams,
		New:         newNode,

		// As the notes compare it with Bully: the coordinator, the highest id, has failed.
		CrashLeaderFirst: true,
		CostsCountLive:   true,
	}
}

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

// upID says whether the failure detector sees process id up.
func upID(ctx *sim.Context, id int) bool {
	i, ok := ctx.Index(id)
	return ok && ctx.Up(i)
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
	case k < me && n.link.Checks() && n.sent >= 0 && !upID(ctx, n.sent):
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
	if n.link.Checks() && !upID(ctx, k) {
		n.deadLeader(ctx)
		return
	}
	ctx.Rule("CR-7")
	n.Leave(ctx)
	n.leader = k
	ctx.Leader(k)
	n.link.Send(ctx, sim.Message{Type: MsgElected, Arg: k})
}

func (n *node) Clone() sim.Node {
	c := *n
	c.link = n.link.Clone()
	return &c
}

func (n *node) Encode(w *sim.StateWriter) {
	w.Bool("participant", n.Participant)
	w.Int("leader", n.leader)
	n.link.Encode(w, n.ids)
}
