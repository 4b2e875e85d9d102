// Package bully is the Bully election (Garcia-Molina): a process that suspects the
// coordinator asks every higher id whether it is alive; silence until a time-out means
// it is the highest alive and takes over, an answer means a higher process will. It is
// only safe on a synchronous network: a time-out shorter than a round trip elects two.
//
// Labels: RE1, RH1 and RH2 are the notes' (000) and keep their meaning: RE1 calls an
// election and acts on its two time-outs, RH1 answers an ELECTION, RH2 joins in when
// no election is on. The other rules are the project's own and carry its scheme's tag
// (BU-1 ... BU-6; the failure detector's FD-1 ... FD-3): the notes fold receiving an
// ANSWER into RE1's "else wait for a coordinator message" and leave initialisation,
// COORDINATOR handling, recovery and suspicion without a label.
package bully

import (
	_ "embed"
	"slices"

	"github.com/teach-dist/playground/algorithms/heartbeat"
	"github.com/teach-dist/playground/algorithms/nodeid"
	"github.com/teach-dist/playground/algorithms/params"
	"github.com/teach-dist/playground/runtime/sim"
)

// WhyAnswer is RH1's case, for the narration.
const WhyAnswer = "answer"

// Message types.
const (
	MsgElection    = "ELECTION"
	MsgAnswer      = "ANSWER"
	MsgCoordinator = "COORDINATOR"
)

// Election states, as the course notes name them.
const (
	Off = "ELECTION-OFF"
	On  = "ELECTION-ON"
)

// What a process in an election waits for.
const (
	WaitNone        = "none"
	WaitAnswer      = "answer"
	WaitCoordinator = "coordinator"
)

// Timer names (stable: they appear in the trace).
const (
	TimerAnswer      = "answer"
	TimerCoordinator = "coordinator"
)

// Params are the time-outs; 0 derives one from the network's largest delay.
type Params struct {
	AnswerTimeout      int `param:"answerTimeout"`      // how long a caller waits for an ANSWER
	CoordinatorTimeout int `param:"coordinatorTimeout"` // how long it then waits for the COORDINATOR
	// Heartbeat turns on the failure detector: the coordinator beats, the others
	// suspect it after a silence and call an election by themselves.
	Heartbeat heartbeat.Params `param:"heartbeat"`
}

var paramList = []sim.Param{
	{Name: "answerTimeout", Kind: sim.ParamInt, Min: 1,
		Doc: "how long a caller waits for an ANSWER; left out, 2 × the largest delay + 1"},
	{Name: "coordinatorTimeout", Kind: sim.ParamInt, Min: 1,
		Doc: "how long it then waits for the COORDINATOR; left out, derived from the answer time-out and the largest delay"},
	heartbeat.Param,
}

// ParseParams decodes {"answerTimeout": t, "coordinatorTimeout": t, "heartbeat":
// {"period": T, "delay": D} or, from earlier links, {"period": T, "timeout": t}}; nil, empty or null gives the defaults (derived from the
// network, no failure detector). Errors name the field.
var ParseParams = params.Parser(paramList, func([]int) Params { return Params{} })

// timeouts resolves the time-outs for a network whose delays are at most d.
//
// An ELECTION and its ANSWER take at most 2d, so an answer time-out of 2d+1 never
// expires while an answer is on its way (a timer due at the same time as a delivery may
// fire first). After an ANSWER that left its sender at time s, the highest live process
// has an ELECTION by s+d, wins at most one answer time-out later and its COORDINATOR
// lands by s+2d+answer <= arrival+2d+answer: one more unit makes the bound strict and
// one more is slack. On a synchronous network neither time-out then fires spuriously.
func timeouts(p Params, d int) (answer, coordinator int) {
	answer = p.AnswerTimeout
	if answer <= 0 {
		answer = 2*d + 1
	}
	coordinator = p.CoordinatorTimeout
	if coordinator <= 0 {
		coordinator = answer + 2*d + 2
	}
	return answer, coordinator
}

type node struct {
	ids         []int // shared, never written
	highest     int   // the highest id, the initial coordinator
	answerT     int
	coordT      int
	state       string
	waiting     string
	leader      int    // id, -1: unknown
	answered    []bool // by node index, for the current election
	numAnswered int
	fd          heartbeat.Detector
	detector    bool // the failure detector is on
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
		BackgroundTimers:   heartbeat.Timers,
		BackgroundMessages: []string{heartbeat.Msg},
		Params:             paramList,
		CrashLeaderFirst:   true,
		ParseParams:        ParseParams,
		New:                newNode,
	})
	s.Rules = append(s.Rules, heartbeat.Rules...)
	s.Messages = append(s.Messages, heartbeat.Message)
	return s
}

func newNode(self int, setup *sim.Setup) sim.Node {
	p := params.Of(setup, Params{})
	a, c := timeouts(p, setup.MaxDelay)
	return &node{
		ids: setup.IDs, highest: slices.Max(setup.IDs), answerT: a, coordT: c,
		state: Off, waiting: WaitNone, leader: -1, answered: make([]bool, len(setup.IDs)),
		fd: heartbeat.New(p.Heartbeat, setup.MaxDelay), detector: p.Heartbeat.On(),
	}
}

func (n *node) Step(ctx *sim.Context, in *sim.Input) {
	switch in.Kind {
	case sim.Init:
		ctx.Rule("BU-1")
		n.state, n.waiting = Off, WaitNone
		n.leader = n.highest
		ctx.Leader(n.highest)
		n.follow(ctx)
	case sim.Recover:
		// The kernel already forgot this node's leader when it crashed.
		ctx.Rule("BU-5")
		n.state, n.waiting, n.leader = Off, WaitNone, -1
		n.elect(ctx)
	case sim.Elect:
		if n.state == Off {
			n.elect(ctx)
		}
	case sim.Timer:
		n.onTimer(ctx, in.Timer)
	case sim.Deliver:
		switch in.Msg.Type {
		case MsgElection:
			n.onElection(ctx, &in.Msg)
		case MsgAnswer:
			n.onAnswer(ctx, &in.Msg)
		case MsgCoordinator:
			n.onCoordinator(ctx, &in.Msg)
		case heartbeat.Msg:
			n.fd.Heard(ctx, in.Msg.From)
		}
	}
}

// elect is RE1: ask every higher id and wait for an answer. The highest id waits too,
// with nobody to ask: this follows the rule as written, and a top process that is
// already ON ignores the other callers' ELECTIONs instead of re-announcing each time.
func (n *node) elect(ctx *sim.Context) {
	ctx.Rule("RE1")
	n.state, n.waiting = On, WaitAnswer
	n.forgetAnswers()
	me := ctx.SelfID()
	for j := 0; j < ctx.N(); j++ {
		if ctx.ID(j) > me {
			ctx.Send(j, sim.Message{Type: MsgElection})
		}
	}
	ctx.SetTimer(TimerAnswer, n.answerT)
}

func (n *node) forgetAnswers() {
	clear(n.answered)
	n.numAnswered = 0
}

// follow points the failure detector at the current leader: the leader beats, the
// others watch it.
func (n *node) follow(ctx *sim.Context) {
	if !n.detector {
		return
	}
	if n.leader == ctx.SelfID() {
		n.fd.Lead(ctx)
		return
	}
	if i, ok := ctx.Index(n.leader); ok {
		n.fd.Watch(ctx, i)
	}
}

func (n *node) onTimer(ctx *sim.Context, name string) {
	if mine, suspect := n.fd.Timer(ctx, name); mine {
		if suspect {
			ctx.Rule("BU-6")
			if n.state == Off {
				n.elect(ctx)
			}
		}
		return
	}
	switch {
	case name == TimerAnswer && n.state == On && n.waiting == WaitAnswer:
		// RE1, first branch: nobody higher answered, so nobody higher is alive.
		ctx.Rule("RE1")
		n.win(ctx)
	case name == TimerCoordinator && n.state == On && n.waiting == WaitCoordinator:
		// RE1, second branch: whoever answered died before announcing; elect() fires RE1.
		n.elect(ctx)
	}
}

func (n *node) win(ctx *sim.Context) {
	me := ctx.SelfID()
	n.state, n.waiting, n.leader = Off, WaitNone, me
	ctx.Leader(me)
	n.follow(ctx)
	for j := 0; j < ctx.N(); j++ {
		if ctx.ID(j) < me {
			ctx.Send(j, sim.Message{Type: MsgCoordinator, Arg: me})
		}
	}
}

func (n *node) onElection(ctx *sim.Context, m *sim.Message) {
	ctx.RuleWhy("RH1", WhyAnswer)
	ctx.Send(m.From, sim.Message{Type: MsgAnswer})
	ctx.Rule("RH2")
	if n.state == Off {
		n.elect(ctx)
	}
}

func (n *node) onAnswer(ctx *sim.Context, m *sim.Message) {
	// A late ANSWER after the election ended (a time-out too short) changes nothing.
	if n.state != On || n.answered[m.From] {
		return
	}
	ctx.Rule("BU-2")
	n.answered[m.From] = true
	n.numAnswered++
	if n.waiting == WaitAnswer {
		ctx.CancelTimer(TimerAnswer)
		n.waiting = WaitCoordinator
		ctx.SetTimer(TimerCoordinator, n.coordT)
	}
}

func (n *node) onCoordinator(ctx *sim.Context, m *sim.Message) {
	k := m.Arg
	if k > ctx.SelfID() {
		ctx.Rule("BU-3")
		switch n.waiting {
		case WaitAnswer:
			ctx.CancelTimer(TimerAnswer)
		case WaitCoordinator:
			ctx.CancelTimer(TimerCoordinator)
		}
		n.state, n.waiting, n.leader = Off, WaitNone, k
		n.forgetAnswers()
		ctx.Leader(k)
		n.follow(ctx)
		return
	}
	// Winners announce only to lower ids, so this needs a COORDINATOR from elsewhere
	// (a different variant, a test); the notes still say what to do with it.
	ctx.Rule("BU-4")
	if n.state == Off {
		n.elect(ctx)
	}
}

func (n *node) Encode(w *sim.StateWriter) {
	w.Str("state", n.state)
	w.Str("waiting", n.waiting)
	w.Int("leader", n.leader)
	w.Ints("answered", nodeid.Where(n.ids, n.answered))
	if n.detector {
		w.Int("watching", nodeid.Of(n.ids, n.fd.Watched()))
	}
}

func (n *node) Clone() sim.Node {
	c := *n
	c.answered = slices.Clone(n.answered)
	return &c
}
