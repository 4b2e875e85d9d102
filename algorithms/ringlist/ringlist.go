// Package ringlist is the ring election with an active list: the election gathers the
// ids of every process still alive as it goes round a one-way ring, so each one can
// pick the highest.
//
// Two variants, both from the course notes:
//   - "list" (default; the notes' Fredrickson-Lynch slides and the step-by-step example
//     where 3 starts and 5 wins): one ELECT message whose list grows by one id per
//     process; back at its initiator, the highest id in it is announced with an ELECTED
//     message that goes round once more. 2N messages for one initiator.
//   - "ids" (the notes' active-list slides and their example with P1 and P4 crashed): an
//     ELECT carries a single id; a process seeing its first one sends its own id and
//     then passes that one on, and adds every id that passes to its active list. Its own
//     id coming back means its list is complete. Every process learns the winner by
//     itself: no ELECTED, but N² messages, and it needs FIFO channels (or the
//     acknowledgements, which send one message at a time). Its elections carry no
//     number, so a crash during one can keep it going for ever.
package ringlist

import (
	"slices"

	"github.com/teach-dist/playground/algorithms/params"
	"github.com/teach-dist/playground/algorithms/ringnext"
	"github.com/teach-dist/playground/runtime/sim"
)

// Message types.
const (
	MsgElect   = "ELECT"
	MsgElected = "ELECTED"
)

// Variants.
const (
	VariantList = "list"
	VariantIDs  = "ids"
)

// Spec registers the algorithm.
var Spec = sim.Spec{
	Slug:    "ring-list",
	Title:   "Ring election with an active list",
	Family:  sim.Election,
	Summary: "The election message collects the id of every live process on its way round the ring, then the highest one is announced: 2N messages, but the messages grow with N.",
	Rules: slices.Concat([]sim.Rule{
		{Label: "RI1", Group: "Initialisation", Lines: []string{
			"participant := false; active := []",
			"leader := the highest id   // the run starts with a working leader"},
			Says: "starts as a non-participant with an empty active list, taking the highest id as leader"},
		{Label: "RE1", Group: "Variant list: noticing the leader is gone", Lines: []string{
			"participant := true",
			"active := [my id]",
			"send ELECT(active) to my successor",
			"// no participant check: a second ELECT only costs messages"},
			Says: "notices the leader is gone and sends an ELECT holding its own id round the ring"},
		{Label: "RH1", Group: "Variant list: receiving ELECT(list)", Lines: []string{
			"if my id is not in list:   // the first time this ELECT comes by",
			"    participant := true",
			"    active := list + [my id]",
			"    send ELECT(active) to my successor"},
			Says: "adds its own id to the list and passes it on"},
		{Label: "RH2", Group: "Variant list: receiving ELECT(list)", Lines: []string{
			"if my id is in list:   // it has been all round: every live process is in it",
			"    active := list from my id on   // ids ahead of mine were skipped: crashed",
			"    leader := the highest id in active; participant := false",
			"    send ELECTED(leader, active) to my successor"},
			Says: "gets its ELECT back with every live id in it, picks the highest and announces it"},
		{Label: "RC1", Group: "Variant list: receiving ELECTED(k, list)", Lines: []string{
			"if list does not start with my id:",
			"    leader := k; active := list; participant := false",
			"    send ELECTED(k, list) to my successor"},
			Says: "records the new leader and the active list, and passes the announcement on"},
		{Label: "RC2", Group: "Variant list: receiving ELECTED(k, list)", Lines: []string{
			"if list starts with my id:",
			"    discard it: my announcement has been all round, the election is over"},
			Says: "sees its own announcement come back: everyone knows, the election is over"},
		{Label: "IE1", Group: "Variant ids: noticing the leader is gone", Lines: []string{
			"if not participant:",
			"    participant := true",
			"    active := [my id]",
			"    send ELECT(my id) to my successor"},
			Says: "notices the leader is gone, starts its active list with itself and sends ELECT(its id)"},
		{Label: "IH1", Group: "Variant ids: receiving ELECT(j)", Lines: []string{
			"if j ≠ my id and not participant:   // the first ELECT I see",
			"    participant := true",
			"    active := [j, my id]",
			"    send ELECT(my id), then send ELECT(j), to my successor",
			"// elections carry no number: after a crash during one, a late ELECT looks",
			"// like a new election to a process that has decided, and rounds can chase",
			"// each other for ever; the list variant has no such problem"},
			Says: "sees its first ELECT: starts its active list, sends its own id, then passes the other on"},
		{Label: "IH2", Group: "Variant ids: receiving ELECT(j)", Lines: []string{
			"if j ≠ my id and participant:",
			"    add j to active",
			"    send ELECT(j) to my successor"},
			Says: "adds the id to its active list and passes it on"},
		{Label: "IH3", Group: "Variant ids: receiving ELECT(j)", Lines: []string{
			"if j = my id:   // my own id went all the way round",
			"    if participant:   // (otherwise a leftover of a decided election: drop it)",
			"        active now holds every live process (FIFO: their ids came first)",
			"        leader := the highest id in active; participant := false"},
			Says: "gets its own id back: its active list is complete and it picks the highest id"},
		{Label: "RR1", Group: "Recovering after a crash", Lines: []string{
			"participant := false; active := []; leader := unknown",
			"start an election (RE1 or IE1)   // the way back into the ring"},
			Says: "comes back knowing no leader and starts an election to learn one"},
	}, ringnext.Rules),
	Vars: slices.Concat([]sim.Var{
		{Name: "participant", Doc: "true while this process takes part in an election it has not seen decided"},
		{Name: "active", Doc: "ids of the live processes this process knows of, in ring order from where the list started"},
		{Name: "leader", Doc: "id of the leader this process believes in (-1: unknown)"},
	}, ringnext.Vars),
	Messages: []sim.MessageType{
		{Name: MsgElect, Label: "ELECT", Doc: "variant list: the ids collected so far; variant ids: one id, elect(j)", Vec: "list"},
		{Name: MsgElected, Label: "ELCTD", Doc: "variant list: announces the winner and the final active list", Arg: "leader", Vec: "list"},
		ringnext.AckMessage,
	},
	Costs: []sim.Cost{
		{Name: "messages, one initiator (variant list)",
			Notes:   []sim.NoteFormula{{In: []string{"002"}, Formula: "2N messages: N for ELECTION message, N for COORDINATOR message", Value: func(n int) float64 { return float64(2 * n) }}},
			Formula: "2N (N ELECT + N ELECTED)",
			Value:   func(n int) float64 { return float64(2 * n) }},
		{Name: "messages, k concurrent initiators (variant list)", Formula: "2kN: every ELECT and every ELECTED goes all round"},
		{Name: "ids per message (variant list)",
			Notes:   []sim.NoteFormula{{In: []string{"002"}, Formula: "messages are larger than in Bully algorithm"}},
			Formula: "up to N: the messages are larger than in the other elections"},
		{Name: "messages, one or more initiators (variant ids)", Formula: "N² ELECT: every process's own id goes all round; no ELECTED",
			Value: func(n int) float64 { return float64(n * n) }},
		{Name: "with acknowledgements on", Formula: "one ACK per delivered message, plus one lost message and one time-out per crashed process passed"},
	},
	// FIFO: the ids variant relies on it (see IH3); the list variant does not care.
	Defaults:    sim.Defaults{Nodes: 6, Delay: [2]int{1, 3}, FIFO: true, CS: 0, Until: 500},
	Params:      paramList,
	Stage:       sim.Stage{Ring: true},
	ParseParams: ParseParams,
	New:         newNode,

	// As the notes compare it with Bully: the coordinator, the highest id, has failed.
	CrashLeaderFirst: true,
}

// Params are the settings.
type Params struct {
	Variant string `param:"variant"` // VariantList or VariantIDs; "" means VariantList
	Ring    ringnext.Params
}

var paramList = slices.Concat([]sim.Param{
	{Name: "variant", Kind: sim.ParamChoice, Choices: []string{VariantList, VariantIDs}, Default: `"list"`,
		Doc: "list: one ELECT gathers every id, then ELECTED; ids: every process sends its own id round (N² messages, FIFO)"},
}, ringnext.Fields)

// ParseParams decodes {"variant": "list"|"ids", "ack": bool, "ackTimeout": t}; nil,
// empty or null gives the defaults (variant list, no acknowledgements). Errors name the
// field.
var ParseParams = params.Parser(paramList, func([]int) Params { return Params{Variant: VariantList} })

type node struct {
	ids         []int // shared, never written
	highest     int   // the highest id, the initial leader
	idsVariant  bool  // the ids variant
	participant bool
	active      []int // ids
	leader      int   // id, -1: unknown
	link        ringnext.Link
}

func newNode(self int, setup *sim.Setup) sim.Node {
	p := params.Of(setup, Params{})
	return &node{ids: setup.IDs, highest: slices.Max(setup.IDs), idsVariant: p.Variant == VariantIDs,
		leader: -1, link: ringnext.NewLink(p.Ring, setup.MaxDelay)}
}

// owner is the id a ring message must end at: in the ids variant the id it carries,
// for ELECTED its announcer (first in its list); a list-variant ELECT ends wherever a
// process finds its own id in it, so it has none.
func (n *node) owner(m *sim.Message) int {
	if (n.idsVariant || m.Type == MsgElected) && len(m.Vec) > 0 {
		return m.Vec[0]
	}
	return -1
}

func (n *node) Step(ctx *sim.Context, in *sim.Input) {
	switch in.Kind {
	case sim.Init:
		ctx.Rule("RI1")
		n.participant, n.active, n.leader = false, n.active[:0], n.highest
		ctx.Leader(n.highest)
	case sim.Recover:
		// The kernel built a fresh state and already forgot this node's leader.
		ctx.Rule("RR1")
		n.participant, n.active, n.leader = false, n.active[:0], -1
		n.elect(ctx)
	case sim.Elect:
		n.elect(ctx)
	case sim.Timer:
		n.link.Timer(ctx, in.Timer, n.owner)
	case sim.Deliver:
		m := &in.Msg
		if !n.link.Receive(ctx, m) {
			return
		}
		switch {
		case m.Type == MsgElect && n.idsVariant:
			if len(m.Vec) == 1 {
				n.onElectID(ctx, m.Vec[0])
			}
		case m.Type == MsgElect:
			n.onElectList(ctx, m.Vec)
		case m.Type == MsgElected && !n.idsVariant:
			n.onElected(ctx, m.Arg, m.Vec)
		}
	}
}

func (n *node) elect(ctx *sim.Context) {
	me := ctx.SelfID()
	if n.idsVariant {
		if n.participant {
			return
		}
		ctx.Rule("IE1")
	} else {
		ctx.Rule("RE1")
	}
	n.participant = true
	n.active = append(n.active[:0], me)
	n.link.Send(ctx, sim.Message{Type: MsgElect, Vec: []int{me}})
}

func (n *node) onElectList(ctx *sim.Context, list []int) {
	me := ctx.SelfID()
	k := slices.Index(list, me)
	if k < 0 {
		ctx.Rule("RH1")
		n.participant = true
		n.active = append(append(n.active[:0], list...), me)
		n.link.Send(ctx, sim.Message{Type: MsgElect, Vec: slices.Clone(n.active)})
		return
	}
	ctx.Rule("RH2")
	// The ELECT came back past every process after this one; those listed ahead of it
	// were passed over on the way back, so they are down (in ack mode; without ACKs a
	// message to a crashed process is lost and cannot come back at all).
	n.active = append(n.active[:0], list[k:]...)
	n.participant, n.leader = false, slices.Max(n.active)
	ctx.Leader(n.leader)
	n.link.Send(ctx, sim.Message{Type: MsgElected, Arg: n.leader, Vec: slices.Clone(n.active)})
}

func (n *node) onElected(ctx *sim.Context, k int, list []int) {
	if len(list) > 0 && list[0] == ctx.SelfID() {
		ctx.Rule("RC2")
		return
	}
	ctx.Rule("RC1")
	n.participant, n.leader = false, k
	n.active = append(n.active[:0], list...)
	ctx.Leader(k)
	n.link.Send(ctx, sim.Message{Type: MsgElected, Arg: k, Vec: slices.Clone(list)})
}

func (n *node) onElectID(ctx *sim.Context, j int) {
	me := ctx.SelfID()
	switch {
	case j != me && !n.participant:
		ctx.Rule("IH1")
		n.participant = true
		n.active = append(n.active[:0], j, me)
		n.link.Send(ctx, sim.Message{Type: MsgElect, Vec: []int{me}})
		n.link.Send(ctx, sim.Message{Type: MsgElect, Vec: []int{j}})
	case j != me:
		ctx.Rule("IH2")
		if !slices.Contains(n.active, j) {
			n.active = append(n.active, j)
		}
		n.link.Send(ctx, sim.Message{Type: MsgElect, Vec: []int{j}})
	default:
		ctx.Rule("IH3")
		if !n.participant {
			return
		}
		n.participant, n.leader = false, slices.Max(n.active)
		ctx.Leader(n.leader)
	}
}

func (n *node) Clone() sim.Node {
	c := *n
	c.active = slices.Clone(n.active)
	c.link = n.link.Clone()
	return &c
}

func (n *node) Encode(w *sim.StateWriter) {
	w.Bool("participant", n.participant)
	w.Ints("active", n.active)
	w.Int("leader", n.leader)
	n.link.Encode(w, n.ids)
}
