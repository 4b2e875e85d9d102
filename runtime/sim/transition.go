package sim

import (
	"fmt"
	"strings"
)

// One transition. Every step of a run (a node's first step, a message arriving or lost
// on its way, a timer firing, a process's time in the CS running out, a workload
// action or intervention) is carried out by Take, on whatever keeps the run's state:
// the kernel (Sim) and the explorer (runtime/explore, which keeps its states compact
// and steps each node once per distinct input) are both Worlds. Take decides what
// happens and in which order, hands the node its input through the world, and
// carries out what the node did; a World keeps the record and, if it has one, the
// trace. Nothing else carries out a step "as the kernel would".

// TransitionKind says what a transition does.
type TransitionKind uint8

const (
	TInit    TransitionKind = iota // node Node takes its first step
	TDeliver                       // message Ref, sent by From, reaches To
	TLose                          // message Ref, on its way to To, is lost (Reason)
	TTimer                         // node Node's armed timer Ref fires; the world has disarmed it
	TEndCS                         // node Node's time in the CS is over
	TAct                           // the workload action or intervention Act
)

// Transition is one step of a run. Ref is the world's own reference to the message or
// timer the step concerns: Take only hands it back.
type Transition struct {
	Kind     TransitionKind
	Node     int
	From, To int
	Ref      uint32
	App      bool   // TDeliver: an application message (ActTell), which reaches no algorithm
	Reason   string // TLose: ReasonLost, ReasonUser ...
	Act      *Action
	// Live: TAct is an intervention made now, refused with an *ActionError when it does
	// not apply; a scheduled action that does not apply is skipped.
	Live bool
}

// View is what Take and the monitors read of a run. Nodes are indexes 0..len(IDs())-1.
type View interface {
	IDs() []int
	// Up says who is up, by node: the record Context.Up reads (read only).
	Up() []bool
	// Groups is each node's side of the partition (read only); nil while the network
	// is whole.
	Groups() []int
	InCS(i int) bool
	// Waiting reports whether node i asked for the CS and is not in it yet.
	Waiting(i int) bool
	// Leader is the id node i takes as leader, -1 while none.
	Leader(i int) int
	// Node is node i's state machine, read only.
	Node(i int) Node
}

// side is node i's side of the partition groups (View.Groups).
func side(groups []int, i int) int {
	if groups == nil {
		return 0
	}
	return groups[i]
}

// Did is one effect of a node's step as Take reads it: what it is; Ref, the world's
// own reference to what it carries (the message sent, the timer's name); and Arg, the
// receiver of a message (Send), the delay of a timer (SetTimer) or the leader's id
// (DeclareLeader).
type Did struct {
	Kind EffectKind
	Ref  uint32
	Arg  int
}

// World is a run's state as Take changes it. The Set methods, Arm and Disarm change the
// record and write nothing; the others are what the trace shows, and a world that keeps
// a trace writes their events (the explorer keeps none).
type World interface {
	View

	// StepNode gives node i an input (Deliver: message ref; Timer: timer ref) through the
	// contract (Context.Call) and returns what it did, in order (read only, valid until
	// the next step).
	StepNode(i int, kind InputKind, ref uint32) ([]Did, error)

	// SetAlive marks node i up or down; up, with a fresh state (Spec.New).
	SetAlive(i int, up bool)
	// SetInCS puts node i in the CS or out of it, and says how many are in it then.
	SetInCS(i int, in bool) (inside int)
	SetWaiting(i int, waiting bool)
	SetLeader(i int, id int)
	// Arm (re)arms node i's timer ref to fire after this long; Disarm takes it out.
	Arm(i int, ref uint32, after int)
	Disarm(i int, ref uint32)
	DisarmAll(i int)

	// Send: node i sends the message of its effect ref (EvSend); sent is the world's
	// reference to it from then on, and ok is false when the network took it at once
	// (a drop the user armed for it).
	Send(i int, ref uint32) (sent uint32, ok bool, err error)
	// Post puts a message that was sent on its way.
	Post(ref uint32) error
	// LoseTo loses every message on its way to node i (EvDrop each, oldest first).
	LoseTo(i int, reason string) error
	Partition(groups [][]int) error // EvPartition
	Heal() error                    // EvHeal

	// Record writes an event that only names node i (request, elect, enter, exit,
	// crash, recover) or reads its record (leader).
	Record(kind EventType, i int) error
	Delivered(ref uint32, to int) error
	Dropped(ref uint32, node int, reason string) error
	Fired(i int, ref uint32) error
	RuleFired(i int, ref uint32) error
	Violation(property, detail string, nodes, cycle []int) error
}

// Take carries out transition t on w.
func Take(w World, t *Transition) error {
	switch t.Kind {
	case TInit:
		return step(w, t.Node, Init, 0)
	case TDeliver:
		g := w.Groups()
		if reason := LostOnArrival(w.Up()[t.To], side(g, t.From), side(g, t.To)); reason != "" {
			return w.Dropped(t.Ref, t.To, reason)
		}
		if err := w.Delivered(t.Ref, t.To); err != nil || t.App {
			return err // an application message only carries causality
		}
		did, err := w.StepNode(t.To, Deliver, t.Ref) // step, by hand: the commonest transition
		if err != nil {
			return err
		}
		return effects(w, t.To, did, g)
	case TLose:
		return w.Dropped(t.Ref, t.To, t.Reason)
	case TTimer:
		if err := w.Fired(t.Node, t.Ref); err != nil {
			return err
		}
		return step(w, t.Node, Timer, t.Ref)
	case TEndCS:
		if !w.Up()[t.Node] || !w.InCS(t.Node) {
			return nil
		}
		return step(w, t.Node, Release, 0)
	case TAct:
		return act(w, t.Act, t.Live)
	}
	return fmt.Errorf("sim: unknown transition %d", t.Kind)
}

// Stepping says which node t hands an input to, and which, in w as it stands before
// t; ok is false when no node steps (a message lost on arrival, a crash, an action
// that does not apply ...). An explorer asks it to weigh a transition without taking
// it.
func (t *Transition) Stepping(v View) (node int, kind InputKind, ok bool) {
	switch t.Kind {
	case TInit:
		return t.Node, Init, true
	case TDeliver:
		g := v.Groups()
		return t.To, Deliver, !t.App && LostOnArrival(v.Up()[t.To], side(g, t.From), side(g, t.To)) == ""
	case TTimer:
		return t.Node, Timer, true
	case TEndCS:
		return t.Node, Release, v.Up()[t.Node] && v.InCS(t.Node)
	case TAct:
		var kind InputKind
		switch t.Act.Do {
		case ActRequest:
			kind = Request
		case ActRelease:
			kind = Release
		case ActElect:
			kind = Elect
		case ActRecover:
			kind = Recover
		default:
			return t.Act.Node, 0, false // crash, partition, heal: no node steps
		}
		return t.Act.Node, kind, Applies(v, t.Act)
	}
	return 0, 0, false
}

// LostOnArrival says why a message is lost as it reaches its receiver: the receiver
// is crashed (up false: ReasonCrashed), or on the other side of a partition from the
// sender (their groups differ: ReasonPartition); "" when it is delivered. Take decides
// by it, and an explorer weighs a delivery by it without taking it.
func LostOnArrival(up bool, fromGroup, toGroup int) string {
	switch {
	case !up:
		return ReasonCrashed
	case fromGroup != toGroup:
		return ReasonPartition
	}
	return ""
}

// Applies reports whether action a does something in the run as it stands; a
// scheduled one that does not is skipped (a request from a process that already waits).
func Applies(v View, a *Action) bool { return refusal(v, a) == "" }

// refusal is why action a does not apply now, to be formatted with its node's name,
// or "".
func refusal(v View, a *Action) string {
	i := a.Node
	switch a.Do {
	case ActRequest:
		if !v.Up()[i] {
			return "%s is crashed"
		}
		if v.Waiting(i) || v.InCS(i) {
			return "%s already wants or holds the CS"
		}
	case ActRelease:
		if !v.Up()[i] || !v.InCS(i) {
			return "%s is not in the CS"
		}
	case ActElect, ActFire, ActTell:
		if !v.Up()[i] {
			return "%s is crashed"
		}
	case ActCrash:
		if !v.Up()[i] {
			return "%s is already crashed"
		}
	case ActRecover:
		if v.Up()[i] {
			return "%s is not crashed"
		}
	}
	return ""
}

func nameOf(v View, i int) string { return fmt.Sprintf("P%d", v.IDs()[i]) }

// act carries out a workload action: request, release, elect, crash, recover,
// partition, heal. The network's own (drop, deliver, network, fire, tell) are the
// kernel's, which ends them in Take's other transitions.
func act(w World, a *Action, live bool) error {
	if why := refusal(w, a); why != "" {
		return refuse(live, a, why, nameOf(w, a.Node))
	}
	i := a.Node
	switch a.Do {
	case ActRequest:
		w.SetWaiting(i, true)
		if err := w.Record(EvRequest, i); err != nil {
			return err
		}
		return step(w, i, Request, 0)
	case ActRelease:
		return step(w, i, Release, 0)
	case ActElect:
		if err := w.Record(EvElect, i); err != nil {
			return err
		}
		return step(w, i, Elect, 0)
	case ActCrash:
		return crash(w, i)
	case ActRecover:
		w.SetAlive(i, true)
		if err := w.Record(EvRecover, i); err != nil {
			return err
		}
		return step(w, i, Recover, 0)
	case ActPartition:
		return w.Partition(a.Groups)
	case ActHeal:
		return w.Heal()
	}
	return fmt.Errorf("sim: %s is not a workload action", a.Do)
}

// crash stops node i. What it held goes with it, without events of their own: its
// place in the CS (it stopped, it did not exit), its request, its leader and its
// timers; the messages on their way to it are lost.
func crash(w World, i int) error {
	w.SetAlive(i, false)
	if err := w.Record(EvCrash, i); err != nil {
		return err
	}
	w.SetInCS(i, false)
	w.SetWaiting(i, false)
	w.SetLeader(i, -1)
	w.DisarmAll(i)
	return w.LoseTo(i, ReasonCrashed)
}

// step gives node i one input and carries out what it did, in order.
func step(w World, i int, kind InputKind, ref uint32) error {
	did, err := w.StepNode(i, kind, ref)
	if err != nil {
		return err
	}
	return effects(w, i, did, w.Groups())
}

// effects carries out what node i did in a step, in order; groups is the partition
// (View.Groups), which no effect changes.
func effects(w World, i int, did []Did, groups []int) error {
	for k := range did {
		d := &did[k]
		var err error
		switch d.Kind {
		case FireRule:
			err = w.RuleFired(i, d.Ref)
		case Send:
			// A partition drops a message as it leaves.
			ref, ok, e := w.Send(i, d.Ref)
			switch {
			case e != nil || !ok:
				err = e
			case side(groups, i) != side(groups, d.Arg):
				err = w.Dropped(ref, i, ReasonPartition)
			default:
				err = w.Post(ref)
			}
		case SetTimer:
			w.Arm(i, d.Ref, max(d.Arg, 0))
		case CancelTimer:
			w.Disarm(i, d.Ref)
		case EnterCS:
			err = enter(w, i)
		case ExitCS:
			if w.InCS(i) {
				w.SetInCS(i, false)
				err = w.Record(EvExit, i)
			}
		case DeclareLeader:
			w.SetLeader(i, d.Arg)
			err = w.Record(EvLeader, i)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// enter puts node i in the CS, which ends its wait, and checks mutual exclusion.
func enter(w World, i int) error {
	if w.InCS(i) {
		return nil
	}
	inside := w.SetInCS(i, true)
	w.SetWaiting(i, false)
	if err := w.Record(EvEnter, i); err != nil {
		return err
	}
	if inside < 2 {
		return nil
	}
	var names []string
	var in []int
	for j := range w.IDs() {
		if w.InCS(j) {
			in = append(in, j)
			if j != i {
				names = append(names, nameOf(w, j))
			}
		}
	}
	return w.Violation(PropMutex, fmt.Sprintf("%s entered the CS while %s is in it", nameOf(w, i), strings.Join(names, ", ")), in, nil)
}
