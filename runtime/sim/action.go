package sim

import "fmt"

// ActionKind is something done to the run from outside: the scenario's workload, a
// user's intervention, or a choice of the network in hold mode.
type ActionKind uint8

const (
	ActRequest ActionKind = iota
	ActRelease
	ActCrash
	ActRecover
	ActElect
	ActDrop
	ActPartition
	ActHeal
	ActDeliver // hold mode: deliver this held message now
	ActNetwork // change the network model (delay, FIFO, loss, hold) from now on
	ActFire    // fire the node's armed timer Timer now (the explorer's counterexamples)
	ActTell    // node Node sends an application message (AppMessage) to node To
)

// actionField is one field of an action as written (ActionJSON), besides do and at.
type actionField uint16

const (
	takesNode   actionField = 1 << iota // node: the node it is done to (required)
	takesMsg                            // msg: a message id
	takesFrom                           // from: a drop filter's sender
	takesTo                             // to: a drop filter's receiver, or the process told
	takesType                           // type: a drop filter's message type
	takesGroups                         // groups: a partition
	takesNet                            // delay, fifo, loss, hold: a network change
	takesName                           // name: a timer
)

// actionKinds describes each kind: its name in scenarios and frames, the fields it
// takes and the family of algorithms it needs ("": any). Decoding, encoding and the
// checks read this table, so a new kind is a row here and its case in apply (and in
// Check if it has rules of its own).
var actionKinds = [...]struct {
	name   string
	takes  actionField
	family Family
}{
	ActRequest:   {"request", takesNode, Mutex},
	ActRelease:   {"release", takesNode, Mutex},
	ActCrash:     {"crash", takesNode, ""},
	ActRecover:   {"recover", takesNode, ""},
	ActElect:     {"elect", takesNode, Election},
	ActDrop:      {"drop", takesMsg | takesFrom | takesTo | takesType, ""},
	ActPartition: {"partition", takesGroups, ""},
	ActHeal:      {"heal", 0, ""},
	ActDeliver:   {"deliver", takesMsg, ""},
	ActNetwork:   {"network", takesNet, ""},
	ActFire:      {"fire", takesNode | takesName, ""},
	ActTell:      {"tell", takesNode | takesTo, ""},
}

// AppMessage is the type of an application message: one process telling another
// something outside the algorithm (ActTell). It travels through the network like any
// message but is never handed to the algorithm: it only carries causality, the way the
// notes' ordering property assumes processes also talk to each other. It is not one of
// Spec.Messages and not counted in Totals.Messages.
const AppMessage = "APP"

func (k ActionKind) String() string {
	if int(k) < len(actionKinds) {
		return actionKinds[k].name
	}
	return "unknown"
}

func (k ActionKind) takes(f actionField) bool {
	return int(k) < len(actionKinds) && actionKinds[k].takes&f != 0
}

// ParseActionKind maps a scenario's `do` to an ActionKind.
func ParseActionKind(s string) (ActionKind, bool) {
	for i := range actionKinds {
		if actionKinds[i].name == s {
			return ActionKind(i), true
		}
	}
	return 0, false
}

// ActionNames lists the allowed values of `do`.
func ActionNames() []string { return actionNamesFor("") }

// actionNamesFor lists the kinds a family's algorithms take ("": every kind).
func actionNamesFor(family Family) []string {
	var out []string
	for _, k := range actionKinds {
		if family == "" || k.family == "" || k.family == family {
			out = append(out, k.name)
		}
	}
	return out
}

// Action is one intervention. Node and the filter fields are node indexes.
type Action struct {
	At   int // virtual time, for scheduled actions
	Do   ActionKind
	Node int

	// Drop and deliver: a message id, or (drop only, Msg == 0) a filter that picks the
	// oldest matching message in flight, or else the next one sent.
	Msg  int64
	From int // -1: any
	To   int // -1: any; tell: the receiver (required)
	Type string

	Groups [][]int // partition: node indexes per group; unlisted nodes form one more group

	Net NetChange // network: what changes

	Timer string // fire: the name of the timer
}

// TakesStep reports whether applying a live action counts as a step of the run: a
// held message the user delivers is the step the network would otherwise have taken,
// so the timeline can stop between two of the user's picks. Replay and the session
// both ask this, so they number steps alike.
func (a *Action) TakesStep() bool { return a.Do == ActDeliver }

// NetField names the parts of the network model that an ActNetwork changes.
type NetField uint8

const (
	NetDelay NetField = 1 << iota
	NetFIFO
	NetLoss
	NetHold
)

// NetChange is a live change of the network model; the fields not in Set keep their
// value. What it does to the messages already in flight:
//   - delay and loss apply to messages sent from now on; messages in flight keep
//     their arrival time (they passed the loss draw when they were sent);
//   - FIFO turning on: from now on each message on a channel arrives no earlier than
//     every message already in flight on that channel, so the send order holds from
//     the switch on (messages already in flight keep their times, so two of them
//     may still cross each other); turning off: new messages get independent delays;
//   - hold turning on: every message in flight becomes held, in send order;
//   - hold turning off: every held message, in send order, gets an arrival time drawn
//     from the delay in force (and kept in order per channel when FIFO is on).
//
// Algorithms keep the largest delay they were set up with (Setup.MaxDelay): a network
// made slower live can make their time-outs fire early, as a broken synchrony bound does.
type NetChange struct {
	Set                NetField
	DelayMin, DelayMax int
	FIFO               bool
	Loss               float64
	Hold               bool
}

// changeOf is the change that sets the fields given (nil: left as it is); delay is
// [min, max] or one number. Check validates it.
func changeOf(delay []int, fifo *bool, loss *float64, hold *bool) NetChange {
	var c NetChange
	if len(delay) > 0 {
		c.Set |= NetDelay
		c.DelayMin, c.DelayMax = delay[0], delay[len(delay)-1]
	}
	if fifo != nil {
		c.Set |= NetFIFO
		c.FIFO = *fifo
	}
	if loss != nil {
		c.Set |= NetLoss
		c.Loss = *loss
	}
	if hold != nil {
		c.Set |= NetHold
		c.Hold = *hold
	}
	return c
}

// Check validates the change; errors are *FieldError naming the field (delay, loss).
func (c *NetChange) Check() error {
	if c.Set == 0 || c.Set&^(NetDelay|NetFIFO|NetLoss|NetHold) != 0 {
		return fieldErr("", "network: give at least one of delay, fifo, loss, hold")
	}
	if c.Set&NetDelay != 0 && (c.DelayMin < 0 || c.DelayMax < c.DelayMin || c.DelayMax > MaxDelay) {
		return fieldErr("delay", "[%d, %d] must satisfy 0 <= min <= max <= %d", c.DelayMin, c.DelayMax, MaxDelay)
	}
	if c.Set&NetLoss != 0 && (c.Loss < 0 || c.Loss > 1 || c.Loss != c.Loss) {
		return fieldErr("loss", "%v must be between 0 and 1", c.Loss)
	}
	return nil
}

// Apply returns nw with the change made.
func (c *NetChange) Apply(nw Network) Network {
	if c.Set&NetDelay != 0 {
		nw.DelayMin, nw.DelayMax = c.DelayMin, c.DelayMax
	}
	if c.Set&NetFIFO != 0 {
		nw.FIFO = c.FIFO
	}
	if c.Set&NetLoss != 0 {
		nw.Loss = c.Loss
	}
	if c.Set&NetHold != 0 {
		nw.Hold = c.Hold
	}
	return nw
}

func (a *Action) matches(m *Message) bool {
	if a.Msg != 0 {
		return m.ID == a.Msg
	}
	return (a.From < 0 || m.From == a.From) && (a.To < 0 || m.To == a.To) &&
		(a.Type == "" || m.Type == a.Type)
}

// ActionError is an intervention that cannot apply to the run as it stands. Err is
// the *FieldError when the action itself is invalid (Check), nil when the run's
// state refuses it.
type ActionError struct {
	Action ActionKind
	Reason string
	Err    error
}

func (e *ActionError) Error() string { return fmt.Sprintf("%s: %s", e.Action, e.Reason) }

func (e *ActionError) Unwrap() error { return e.Err }
