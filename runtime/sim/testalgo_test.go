package sim_test

// A tiny algorithm that exists only to drive the kernel. It is not a correct mutual
// exclusion algorithm on purpose: the tests tell each node what to do (whom to ping,
// when to enter, which timers to arm, whom it waits for, whom it elects), so every
// kernel path can be reached and its events predicted exactly.

import (
	"github.com/teach-dist/playground/runtime/sim"
)

// Message types of the test algorithm.
const (
	msgPing  = "PING"
	msgPong  = "PONG"
	msgCoord = "COORD"
)

// Node modes: what a Request makes a node do.
const (
	modePing   = ""       // ping the peer Burst times; enter once every PONG is back
	modeSilent = "silent" // enter at once, no message
	modeHang   = "hang"   // wait forever, no message
)

// timerOp arms (After >= 0) or cancels a named timer.
type timerOp struct {
	Name   string
	After  int
	Cancel bool
}

// params tell each node what to do; indexes are node indexes.
type params struct {
	Mode  []string // per node; missing entries are modePing
	Peer  []int    // per node: whom a Request pings; missing or -1: the next index
	Burst int      // PINGs per request; 0 means 1
	Wait  [][]int  // per node: what WaitingFor returns while the node waits

	Leader   []int // election, per node: the id declared on Elect; missing: its own id
	Announce bool  // election: the declarer sends COORD(leader) to every other node

	Init    [][]timerOp          // per node: timer operations on Init and on Recover
	OnTimer map[string][]timerOp // what a fired timer does next (a heartbeat re-arms)
}

func (p *params) mode(i int) string {
	if i < len(p.Mode) {
		return p.Mode[i]
	}
	return modePing
}

func (p *params) burst() int { return max(p.Burst, 1) }

var pingRules = []sim.Rule{
	{Label: "PI1", Group: "Start", Lines: []string{"state := idle"}, Says: "starts idle"},
	{Label: "PV1", Group: "Start", Lines: []string{"state := idle after a crash"}, Says: "comes back"},
	{Label: "PA1", Group: "Asking", Lines: []string{"state := waiting", "send PING to the peer"}, Says: "asks"},
	{Label: "PH1", Group: "PING", Lines: []string{"answer PONG"}, Says: "answers a ping"},
	{Label: "PH2", Group: "PONG", Lines: []string{"count the PONG"}, Says: "counts a pong"},
	{Label: "PE1", Group: "Entering", Lines: []string{"enter the CS"}, Says: "enters"},
	{Label: "PR1", Group: "Leaving", Lines: []string{"leave the CS"}, Says: "leaves"},
	{Label: "PT1", Group: "Timer", Lines: []string{"note the timer"}, Says: "notes a timer"},
	{Label: "EE1", Group: "Election", Lines: []string{"declare the leader it is told"}, Says: "declares"},
	{Label: "EH1", Group: "Election", Lines: []string{"adopt the announced leader"}, Says: "adopts"},
}

var pingMessages = []sim.MessageType{
	{Name: msgPing, Doc: "asks for a PONG", TS: "ts", Arg: "n"},
	{Name: msgPong, Doc: "answers a PING", TS: "ts", Arg: "n", Vec: "seen", Queue: "q"},
	{Name: msgCoord, Doc: "announces a leader", Arg: "leader"},
}

// pingSpec is the mutual exclusion flavour; electSpec the election one.
var pingSpec = sim.Spec{
	Slug:             "test-ping",
	Title:            "Ping (kernel test)",
	Family:           sim.Mutex,
	Rules:            pingRules,
	Messages:         pingMessages,
	BackgroundTimers: []string{"hb"},
	New:              newPingNode,
}

var electSpec = sim.Spec{
	Slug:             "test-elect",
	Title:            "Told election (kernel test)",
	Family:           sim.Election,
	Rules:            pingRules,
	Messages:         pingMessages,
	BackgroundTimers: []string{"hb"},
	New:              newPingNode,
}

type pingNode struct {
	self      int
	ids       []int   // shared, never written
	p         *params // shared, never written
	state     string  // idle, waiting, inside
	seq       int     // requests made so far
	pongs     int     // PONGs for the current request
	got       []int   // ids of the messages delivered, in order
	fired     int     // timers fired
	last      string  // the last timer that fired
	leader    int     // id, -1: none
	recovered bool
}

func newPingNode(self int, setup *sim.Setup) sim.Node {
	p, _ := setup.Params.(*params)
	if p == nil {
		p = &params{}
	}
	return &pingNode{self: self, ids: setup.IDs, p: p, state: "idle", leader: -1}
}

func (n *pingNode) timers(ctx *sim.Context, ops []timerOp) {
	for _, op := range ops {
		if op.Cancel {
			ctx.CancelTimer(op.Name)
		} else {
			ctx.SetTimer(op.Name, op.After)
		}
	}
}

func (n *pingNode) initTimers(ctx *sim.Context) {
	if n.self < len(n.p.Init) {
		n.timers(ctx, n.p.Init[n.self])
	}
}

func (n *pingNode) peer(ctx *sim.Context) int {
	if n.self < len(n.p.Peer) && n.p.Peer[n.self] >= 0 {
		return n.p.Peer[n.self]
	}
	return (n.self + 1) % ctx.N()
}

func (n *pingNode) Step(ctx *sim.Context, in *sim.Input) {
	switch in.Kind {
	case sim.Init:
		ctx.Rule("PI1")
		n.initTimers(ctx)
	case sim.Recover:
		ctx.Rule("PV1")
		n.recovered = true
		n.initTimers(ctx)
	case sim.Request:
		ctx.Rule("PA1")
		n.state = "waiting"
		n.seq++
		n.pongs = 0
		switch n.p.mode(n.self) {
		case modeSilent:
			n.enter(ctx)
		case modeHang:
		default:
			to := n.peer(ctx)
			for k := 1; k <= n.p.burst(); k++ {
				ctx.Send(to, sim.Message{Type: msgPing, TS: n.seq, Arg: k})
			}
		}
	case sim.Release:
		if n.state == "inside" {
			ctx.Rule("PR1")
			n.state = "idle"
			ctx.Exit()
		}
	case sim.Timer:
		ctx.Rule("PT1")
		n.fired++
		n.last = in.Timer
		n.timers(ctx, n.p.OnTimer[in.Timer])
	case sim.Elect:
		ctx.Rule("EE1")
		l := ctx.SelfID()
		if n.self < len(n.p.Leader) {
			l = n.p.Leader[n.self]
		}
		n.leader = l
		ctx.Leader(l)
		if n.p.Announce {
			for j := 0; j < ctx.N(); j++ {
				if j != n.self {
					ctx.Send(j, sim.Message{Type: msgCoord, Arg: l})
				}
			}
		}
	case sim.Deliver:
		n.got = append(n.got, int(in.Msg.ID))
		switch in.Msg.Type {
		case msgPing:
			ctx.Rule("PH1")
			ctx.Send(in.Msg.From, sim.Message{Type: msgPong, TS: in.Msg.TS, Arg: in.Msg.Arg,
				Vec: []int{ctx.SelfID(), in.Msg.Arg}, Queue: []int{len(n.got)}})
		case msgPong:
			ctx.Rule("PH2")
			if n.state == "waiting" && in.Msg.TS == n.seq {
				n.pongs++
				if n.pongs == n.p.burst() {
					n.enter(ctx)
				}
			}
		case msgCoord:
			ctx.Rule("EH1")
			n.leader = in.Msg.Arg
			ctx.Leader(in.Msg.Arg)
		}
	}
}

func (n *pingNode) enter(ctx *sim.Context) {
	ctx.Rule("PE1")
	n.state = "inside"
	ctx.Enter()
}

// WaitingFor answers what the test told it, while the node waits.
func (n *pingNode) WaitingFor() []int {
	if n.state != "waiting" || n.self >= len(n.p.Wait) {
		return nil
	}
	return n.p.Wait[n.self]
}

func (n *pingNode) Clone() sim.Node {
	c := *n
	c.got = append([]int(nil), n.got...)
	return &c
}

func (n *pingNode) Encode(w *sim.StateWriter) {
	w.Str("state", n.state)
	w.Int("seq", n.seq)
	w.Int("pongs", n.pongs)
	w.Ints("got", n.got)
	w.Int("fired", n.fired)
	w.Str("last", n.last)
	w.Int("leader", n.leader)
	w.Bool("recovered", n.recovered)
}
