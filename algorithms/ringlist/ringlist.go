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
	_ "embed"
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

// text is what the pages show of the algorithm, in a file a teacher can read beside
// this code.
//
//go:embed spec.txt
var text string

// Spec describes the algorithm for the registry (algorithms.All): spec.txt, then what
// is code. Each call builds a new one: no caller can change what another sees.
func Spec() *sim.Spec {
	s := sim.BuildSpec(text, sim.Spec{
		Params:      paramList,
		Earlier:     []sim.EarlierDefaults{{Epoch: 2, Params: earlier}, {Epoch: 3, Params: ringnext.Earlier3}},
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
	// Each variant's figures are drawn for its own runs only.
	s.Cost("messages, one initiator (variant list)").When = listVariant
	s.Cost("messages, k concurrent initiators (variant list)").When = listVariant
	s.Cost("messages, one or more initiators (variant ids)").When = func(p any) bool { return !listVariant(p) }
	return s
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
	if k := slices.Max(n.active); n.link.Crashed(ctx, k) {
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

func (n *node) onElected(ctx *sim.Context, k int, list []int) {
	// Asked first, so that the announcer too, when its announcement comes back, finds
	// the leader crashed since it was picked.
	if n.link.Crashed(ctx, k) {
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

func (n *node) Encode(w *sim.StateWriter) {
	w.Bool("participant", n.Participant)
	w.Ints("active", n.active)
	w.Int("leader", n.leader)
	n.link.Encode(w, n.ids)
}

func (n *node) Clone() sim.Node {
	c := *n
	c.active = slices.Clone(n.active)
	c.link = n.link.Clone()
	return &c
}
