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
)

var actionNames = [...]string{"request", "release", "crash", "recover", "elect", "drop",
	"partition", "heal", "deliver"}

func (k ActionKind) String() string {
	if int(k) < len(actionNames) {
		return actionNames[k]
	}
	return "unknown"
}

// ParseActionKind maps a scenario's `do` to an ActionKind.
func ParseActionKind(s string) (ActionKind, bool) {
	for i, n := range actionNames {
		if n == s {
			return ActionKind(i), true
		}
	}
	return 0, false
}

// ActionNames lists the allowed values of `do`.
func ActionNames() []string { return append([]string(nil), actionNames[:]...) }

// Action is one intervention. Node and the filter fields are node indexes.
type Action struct {
	At   int // virtual time, for scheduled actions
	Do   ActionKind
	Node int

	// Drop and deliver: a message id, or (drop only, Msg == 0) a filter that picks the
	// oldest matching message in flight, or else the next one sent.
	Msg  int64
	From int // -1: any
	To   int // -1: any
	Type string

	Groups [][]int // partition: node indexes per group; unlisted nodes form one more group
}

func (a *Action) matches(m *Message) bool {
	if a.Msg != 0 {
		return m.ID == a.Msg
	}
	return (a.From < 0 || m.From == a.From) && (a.To < 0 || m.To == a.To) &&
		(a.Type == "" || m.Type == a.Type)
}

// ActionError is an intervention that cannot apply to the run as it stands.
type ActionError struct {
	Action ActionKind
	Reason string
}

func (e *ActionError) Error() string { return fmt.Sprintf("%s: %s", e.Action, e.Reason) }
