// Package ringlist is the ring election with an active list: the election gathers the
// ids of every process still alive as it goes round a one-way ring, so each one can
// pick the highest.
//
// Two variants, both from the course notes:
//   - "list" (default; the notes' Fredrickson-Lynch slides and the step-by-step example
//     where 3 starts and 5 wins): one ELECT message whose list grows by one id per
//     process; back at its initiator, the highest id in it is announced with an ELECTED
//     message that goes round once more. 2N messages for one initiator.
//   - "ids" (004's active-list slides and their example with P1 and P4 crashed): an
//     ELECT carries a single id; a process seeing its first one sends its own id and
//     then passes that one on, and adds every id that passes to its active list. Its own
//     id coming back means its list is complete: it picks the highest and, as in 004's
//     example ("P2 chooses P3 ... and sends an Elected(P3) message"), sends ELECTED
//     (param "announce", default true; false is the earlier version with no ELECTED).
//     N² ELECT messages, and it needs FIFO channels (or acknowledgements, which send
//     one message at a time). Its elections carry no number, so a crash during one can
//     keep it going for ever.
//
// The notes disagree on which to call the ring election: 002 (Fredrickson and Lynch)
// and 004's step-by-step example (3 starts, 5 wins) grow one list; only 004's
// active-list slides send single ids. The majority is the default.
//
// As the notes have it, a process skips a crashed successor: by default a perfect
// failure detector tells it which one is down (003), so the counts are the notes'
// (see package ringnext for the variants); a message lost with a process that crashed
// is sent again (DT-2), and a leader picked or announced that has crashed starts a new
// election (AL-14). The earlier time-out and restart (AL-13) needs N: a variant.
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

// Spec describes the algorithm for the registry (algorithms.All). Each call builds
// a new one: no caller can change what another sees.
func Spec() *sim.Spec {
	return &sim.Spec{
		Slug:    "ring-list",
		Title:   "Ring election with an active list",
		Family:  sim.Election,
		Summary: "The election message collects the id of every live process on its way round the ring, past crashed ones, then the highest one is announced: 2N messages, but the messages grow with N. The notes differ: 002 and 004's step-by-step example grow one list (the default, as the majority), 004's active-list slides send single ids (variant ids, with its Elected; it needs FIFO channels and cannot survive every crash during an election); a perfect failure detector (003) skips crashed processes by default.",
		Rules: slices.Concat([]sim.Rule{
			{Label: "AL-1", Group: "Initialisation", Lines: []string{
				"participant := false; active := []",
				"leader := the highest id   // the run starts with a working leader"},
				Says: "starts as a non-participant with an empty active list, taking the highest id as leader"},
			{Label: "AL-2", Group: "Variant list: noticing the leader is gone", Lines: []string{
				"participant := true",
				"active := [my id]",
				"send ELECT(active) to my successor",
				"// no participant check: a second ELECT only costs messages"},
				Says: "notices the leader is gone and sends an ELECT holding its own id round the ring"},
			{Label: "AL-3", Group: "Variant list: receiving ELECT(list)", Lines: []string{
				"if my id is not in list:   // the first time this ELECT comes by",
				"    participant := true",
				"    active := list + [my id]",
				"    send ELECT(active) to my successor"},
				Says: "adds its own id to the list and passes it on"},
			{Label: "AL-4", Group: "Variant list: receiving ELECT(list)", Lines: []string{
				"if my id is in list:   // it has been all round: every live process is in it",
				"    active := list from my id on   // ids ahead of mine were skipped: crashed",
				"    leader := the highest id in active; participant := false",
				"    send ELECTED(leader, active) to my successor"},
				Says: "gets its ELECT back with every live id in it, picks the highest and announces it"},
			{Label: "AL-5", Group: "Variant list: receiving ELECTED(k, list)", Lines: []string{
				"if list does not start with my id:",
				"    leader := k; active := list; participant := false",
				"    send ELECTED(k, list) to my successor"},
				Says: "records the new leader and the active list, and passes the announcement on"},
			{Label: "AL-6", Group: "Variant list: receiving ELECTED(k, list)", Lines: []string{
				"if list starts with my id:",
				"    discard it: my announcement has been all round, the election is over"},
				Says: "sees its own announcement come back: everyone knows, the election is over"},
			{Label: "AL-7", Group: "Variant ids: noticing the leader is gone", Lines: []string{
				"if not participant:",
				"    participant := true",
				"    active := [my id]",
				"    send ELECT(my id) to my successor"},
				Says: "notices the leader is gone, starts its active list with itself and sends ELECT(its id)"},
			{Label: "AL-8", Group: "Variant ids: receiving ELECT(j)", Lines: []string{
				"if j ≠ my id and not participant:   // the first ELECT I see",
				"    participant := true",
				"    active := [j, my id]",
				"    send ELECT(my id), then send ELECT(j), to my successor",
				"// elections carry no number: after a crash during one, a late ELECT looks",
				"// like a new election to a process that has decided, and rounds can chase",
				"// each other for ever; the list variant has no such problem"},
				Says: "sees its first ELECT: starts its active list, sends its own id, then passes the other on"},
			{Label: "AL-9", Group: "Variant ids: receiving ELECT(j)", Lines: []string{
				"if j ≠ my id and participant:",
				"    add j to active",
				"    send ELECT(j) to my successor"},
				Says: "adds the id to its active list and passes it on"},
			{Label: "AL-10", Group: "Variant ids: receiving ELECT(j)", Lines: []string{
				"if j = my id:   // my own id went all the way round",
				"    if participant:   // (otherwise a leftover of a decided election: drop it)",
				"        active now holds every live process (FIFO: their ids came first)",
				"        leader := the highest id in active; participant := false",
				"        send ELECTED(leader) to my successor   // with announce (004's example)"},
				Says: "gets its own id back: its active list is complete, it picks the highest id and announces it"},
			{Label: "AL-12", Group: "Variant ids: receiving ELECTED(k)", Lines: []string{
				"if participant:   // my own id is still on its way round",
				"    leader := k   // my own list will say the same when it comes back",
				"else: discard it   // I decided already, from my own list",
				"// never passed on: every process announces its own decision to the next",
				"// one, so an ELECTED cannot outlive the election or start a new one"},
				Says: "takes the announced leader while its own id is still on its way, or discards the announcement if it has decided already"},
			{Label: "AL-11", Group: "Recovering after a crash", Lines: []string{
				"participant := false; active := []; leader := unknown",
				"start an election (AL-2 or AL-7)   // the way back into the ring"},
				Says: "comes back knowing no leader and starts an election to learn one"},
			{Label: "AL-13", Group: "An election that died", Lines: []string{
				"// set when I send an ELECT on, stopped when I learn the leader",
				"when I learned no leader within the restart time-out:",
				"    // the election died with a process that crashed during it",
				"    participant := false",
				"    start an election (AL-2 or AL-7)"},
				Says: "has learned no leader for too long: the election died with a crashed process, so it starts a new one"},
			{Label: "AL-14", Group: "Variant list: the leader crashed", Lines: []string{
				"// check on: the failure detector is asked about the leader",
				"on picking, or being told, a leader k that has crashed:",
				"    // it is skipped: a dead process cannot lead",
				"    participant := false",
				"    start an election (AL-2)   // not announced: the new one tells everyone"},
				Says: "finds the leader picked or announced crashed, and starts a new election instead"},
		}, ringnext.Rules),
		Vars: slices.Concat([]sim.Var{
			{Name: "participant", Doc: "true while this process takes part in an election it has not seen decided"},
			{Name: "active", Doc: "ids of the live processes this process knows of, in ring order from where the list started"},
			{Name: "leader", Doc: "id of the leader this process believes in (-1: unknown)"},
		}, ringnext.Vars),
		Messages: []sim.MessageType{
			{Name: MsgElect, Label: "ELECT", Doc: "variant list: the ids collected so far; variant ids: one id, elect(j)", Vec: "list"},
			{Name: MsgElected, Label: "ELCTD", Doc: "announces the winner; variant list: with the final active list", Arg: "leader", Vec: "list"},
			ringnext.AckMessage,
		},
		Costs: []sim.Cost{
			{Name: "messages, one initiator (variant list)",
				Notes:      []sim.NoteFormula{{In: []string{"002"}, Formula: "Requires 2N messages", Value: func(n int) float64 { return float64(2 * n) }}},
				Formula:    "2N (N ELECT + N ELECTED)",
				Value:      func(n int) float64 { return float64(2 * n) },
				Initiators: 1, When: listVariant},
			{Name: "messages, k concurrent initiators (variant list)", Formula: "2kN: every ELECT and every ELECTED goes all round",
				ValueK: func(n, k int) float64 { return float64(2 * k * n) }, When: listVariant},
			{Name: "ids per message (variant list)",
				Notes:   []sim.NoteFormula{{In: []string{"002"}, Formula: "messages are larger than in Bully algorithm"}},
				Formula: "up to N: the messages are larger than in the other elections"},
			{Name: "messages, one or more initiators (variant ids)", Formula: "N² ELECT: every process's own id goes all round; then at most N ELECTED (none without announce)",
				Value: func(n int) float64 { return float64(n * n) },
				When:  func(p any) bool { return !listVariant(p) }},
			{Name: `with "skip": "ack"`, Formula: "one ACK per delivered message, plus one lost message and one time-out per crashed process passed"},
		},
		// FIFO: the ids variant relies on it (see AL-10); the list variant does not care.
		Defaults:    sim.Defaults{Nodes: 6, Delay: [2]int{1, 3}, FIFO: true, CS: 0, Until: 500},
		Params:      paramList,
		Earlier:     []sim.EarlierDefaults{{Epoch: 2, Params: earlier}, {Epoch: 3, Params: ringnext.Earlier3}},
		Stage:       sim.Stage{Ring: true},
		ParseParams: ParseParams,
		New:         newNode,

		// As the notes compare it with Bully: the coordinator, the highest id, has failed.
		CrashLeaderFirst: true,
		CostsCountLive:   true,
	}
}

// Params are the settings.
type Params struct {
	Variant  string `param:"variant"`  // VariantList or VariantIDs; "" means VariantList
	Announce bool   `param:"announce"` // variant ids: a process that decides sends ELECTED
	Ring     ringnext.Params
}

// earlier keeps links made before defaults epoch 2: no skipping, no restart, and the
// ids variant without ELECTED.
const earlier = `{"skip":"none","restart":false,"announce":false}`

// DefaultParams are the notes' version: variant list, skipping crashed successors told
// by a perfect failure detector, and ELECTED in the ids variant.
func DefaultParams([]int) Params {
	return Params{Variant: VariantList, Announce: true, Ring: ringnext.DefaultParams()}
}

var paramList = slices.Concat([]sim.Param{
	{Name: "variant", Kind: sim.ParamChoice, Choices: []string{VariantList, VariantIDs}, Default: `"list"`,
		Doc: "list: one ELECT gathers every id, then ELECTED; ids: every process sends its own id round (N² messages, FIFO)"},
	{Name: "announce", Kind: sim.ParamBool, Default: "true",
		Doc: "variant ids only: a process that has decided sends ELECTED(leader), as in 004's example; false: each decides alone and nothing is announced"},
}, ringnext.Fields)

// listVariant says whether params (this algorithm's Params, or nil for the defaults)
// run the list variant: which of the costs above a run is measured against.
func listVariant(p any) bool {
	v, ok := p.(Params)
	return !ok || v.Variant != VariantIDs
}

// ParseParams decodes {"variant": "list"|"ids", "announce": bool, and ringnext's
// fields}; nil, empty or null gives the defaults. Errors name the field.
var ParseParams = params.Parser(paramList, DefaultParams)

type node struct {
	ringnext.Participation
	ids        []int // shared, never written
	highest    int   // the highest id, the initial leader
	idsVariant bool  // the ids variant
	announce   bool  // the ids variant sends ELECTED
	active     []int // ids
	leader     int   // id, -1: unknown
	link       ringnext.Link
}

func newNode(self int, setup *sim.Setup) sim.Node {
	p := params.Of(setup, DefaultParams(nil))
	ring := p.Ring
	if p.Variant == VariantIDs {
		// Its elections carry no number: a message sent again could start rounds that
		// chase each other; the check is the list variant's.
		ring.Check = false
	}
	return &node{ids: setup.IDs, highest: slices.Max(setup.IDs), idsVariant: p.Variant == VariantIDs,
		announce: p.Announce, leader: -1, link: ringnext.NewLink(ring, setup.MaxDelay, ownerOf(p.Variant == VariantIDs)),
		Participation: ringnext.NewParticipation(restartAfter(p, len(setup.IDs), setup.MaxDelay))}
}

// restartAfter is ringnext's restart time-out, N times longer in the ids variant: every
// link carries N ids there, not one message per round.
func restartAfter(p Params, n, maxDelay int) int {
	t := ringnext.RestartAfter(p.Ring, n, maxDelay)
	if p.Variant == VariantIDs {
		t *= n
	}
	return t
}

// ownerOf gives the id a ring message must end at: in the ids variant the id an ELECT
// carries, for a list-variant ELECTED its announcer (first in its list); a list-variant
// ELECT ends wherever a process finds its own id in it, and an ids-variant ELECTED at
// the first process that has decided, so they have none.
func ownerOf(idsVariant bool) func(m *sim.Message) int {
	return func(m *sim.Message) int {
		if (idsVariant != (m.Type == MsgElected)) && len(m.Vec) > 0 {
			return m.Vec[0]
		}
		return -1
	}
}

func (n *node) Step(ctx *sim.Context, in *sim.Input) {
	switch in.Kind {
	case sim.Init:
		ctx.Rule("AL-1")
		n.Participant, n.active, n.leader = false, n.active[:0], n.highest
		ctx.Leader(n.highest)
	case sim.Recover:
		// The kernel built a fresh state and already forgot this node's leader.
		ctx.Rule("AL-11")
		n.Participant, n.active, n.leader = false, n.active[:0], -1
		n.elect(ctx)
	case sim.Elect:
		n.elect(ctx)
	case sim.Timer:
		switch restart, died := n.Expired(in.Timer); {
		case died:
			ctx.Rule("AL-13")
			n.elect(ctx)
		case !restart:
			n.link.Timer(ctx, in.Timer)
		}
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
		case m.Type == MsgElected:
			n.onElectedID(ctx, m.Arg)
		}
	}
}

func (n *node) elect(ctx *sim.Context) {
	me := ctx.SelfID()
	if n.idsVariant {
		if n.Participant {
			return
		}
		ctx.Rule("AL-7")
	} else {
		ctx.Rule("AL-2")
	}
	n.Join(ctx)
	n.active = append(n.active[:0], me)
	n.link.Send(ctx, sim.Message{Type: MsgElect, Vec: []int{me}})
}

func (n *node) onElectList(ctx *sim.Context, list []int) {
	me := ctx.SelfID()
	k := slices.Index(list, me)
	if k < 0 {
		ctx.Rule("AL-3")
		n.Join(ctx)
		n.active = append(append(n.active[:0], list...), me)
		n.link.Send(ctx, sim.Message{Type: MsgElect, Vec: slices.Clone(n.active)})
		return
	}
	ctx.Rule("AL-4")
	// The ELECT came back past every process after this one; those listed ahead of it
	// were passed over on the way back, so they are down (in ack mode; without ACKs a
	// message to a crashed process is lost and cannot come back at all).
	n.active = append(n.active[:0], list[k:]...)
	n.Leave(ctx)
	if k := slices.Max(n.active); n.link.Checks() && !upID(ctx, k) {
		n.deadLeader(ctx)
		return
	}
	n.leader = slices.Max(n.active)
	ctx.Leader(n.leader)
	n.link.Send(ctx, sim.Message{Type: MsgElected, Arg: n.leader, Vec: slices.Clone(n.active)})
}

// deadLeader is AL-14: the leader picked or announced has crashed, so a new election
// starts.
func (n *node) deadLeader(ctx *sim.Context) {
	ctx.Rule("AL-14")
	n.Leave(ctx)
	n.elect(ctx)
}

// upID says whether the failure detector sees process id up.
func upID(ctx *sim.Context, id int) bool {
	i, ok := ctx.Index(id)
	return ok && ctx.Up(i)
}

func (n *node) onElected(ctx *sim.Context, k int, list []int) {
	// Asked first, so that the announcer too, when its announcement comes back, finds
	// the leader crashed since it was picked.
	if n.link.Checks() && !upID(ctx, k) {
		n.deadLeader(ctx)
		return
	}
	if len(list) > 0 && list[0] == ctx.SelfID() {
		ctx.Rule("AL-6")
		return
	}
	ctx.Rule("AL-5")
	n.Leave(ctx)
	n.leader = k
	n.active = append(n.active[:0], list...)
	ctx.Leader(k)
	n.link.Send(ctx, sim.Message{Type: MsgElected, Arg: k, Vec: slices.Clone(list)})
}

func (n *node) onElectID(ctx *sim.Context, j int) {
	me := ctx.SelfID()
	switch {
	case j != me && !n.Participant:
		ctx.Rule("AL-8")
		n.Join(ctx)
		n.active = append(n.active[:0], j, me)
		n.link.Send(ctx, sim.Message{Type: MsgElect, Vec: []int{me}})
		n.link.Send(ctx, sim.Message{Type: MsgElect, Vec: []int{j}})
	case j != me:
		ctx.Rule("AL-9")
		n.Join(ctx)
		if !slices.Contains(n.active, j) {
			n.active = append(n.active, j)
		}
		n.link.Send(ctx, sim.Message{Type: MsgElect, Vec: []int{j}})
	default:
		ctx.Rule("AL-10")
		if !n.Participant {
			return
		}
		n.Leave(ctx)
		n.leader = slices.Max(n.active)
		ctx.Leader(n.leader)
		if n.announce {
			n.link.Send(ctx, sim.Message{Type: MsgElected, Arg: n.leader})
		}
	}
}

func (n *node) onElectedID(ctx *sim.Context, k int) {
	ctx.Rule("AL-12")
	if !n.Participant || n.leader == k {
		return
	}
	// It stays a participant: leaving now would make the ids still going round look
	// like a new election (AL-8) and start rounds that chase each other for ever.
	n.leader = k
	ctx.Leader(k)
}

func (n *node) Clone() sim.Node {
	c := *n
	c.active = slices.Clone(n.active)
	c.link = n.link.Clone()
	return &c
}

func (n *node) Encode(w *sim.StateWriter) {
	w.Bool("participant", n.Participant)
	w.Ints("active", n.active)
	w.Int("leader", n.leader)
	n.link.Encode(w, n.ids)
}
