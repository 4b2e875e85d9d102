package sim

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ActionJSON is an action as people write it: a scenario's event, a link's
// intervention, a WebSocket act frame (CONTRACT: scenario v1, docs/protocol.md). Node
// ids, not indexes; optional fields are pointers or empty, so a field given is told
// from one left out. Action turns it into the kernel's Action, ActionJSONOf back.
type ActionJSON struct {
	At     int     `json:"at"`
	Do     string  `json:"do"`
	Node   *int    `json:"node,omitempty"`
	Msg    int64   `json:"msg,omitempty"`
	From   *int    `json:"from,omitempty"`
	To     *int    `json:"to,omitempty"`
	Type   string  `json:"type,omitempty"`
	Groups [][]int `json:"groups,omitempty"`

	// network: the parts of the network model that change (each optional, at least one).
	Delay Delay    `json:"delay,omitempty"`
	FIFO  *bool    `json:"fifo,omitempty"`
	Loss  *float64 `json:"loss,omitempty"`
	Hold  *bool    `json:"hold,omitempty"`

	// fire: the name of the node's armed timer to fire now (hold mode; the explorer's
	// counterexamples place time-outs among the deliveries this way).
	Name string `json:"name,omitempty"`
}

// Delay is [min, max], or a single number for a fixed delay.
type Delay []int

// UnmarshalJSON accepts 2, [2] or [1, 3]; its error is a *FieldError naming delay.
func (d *Delay) UnmarshalJSON(b []byte) error {
	var n int
	if err := json.Unmarshal(b, &n); err == nil && string(b) != "null" {
		*d = Delay{n, n}
		return nil
	}
	var v []int
	if err := json.Unmarshal(b, &v); err != nil || v == nil {
		return fieldErr("delay", "expected a number or [min, max]")
	}
	*d = v
	return nil
}

// writtenFields are the fields of ActionJSON a kind may take, in the order a mistake
// is reported.
var writtenFields = []struct {
	name  string
	field actionField
	given func(j *ActionJSON) bool
}{
	{"msg", takesMsg, func(j *ActionJSON) bool { return j.Msg != 0 }},
	{"from", takesFrom, func(j *ActionJSON) bool { return j.From != nil }},
	{"to", takesTo, func(j *ActionJSON) bool { return j.To != nil }},
	{"type", takesType, func(j *ActionJSON) bool { return j.Type != "" }},
	{"groups", takesGroups, func(j *ActionJSON) bool { return j.Groups != nil }},
	{"delay", takesNet, func(j *ActionJSON) bool { return j.Delay != nil }},
	{"fifo", takesNet, func(j *ActionJSON) bool { return j.FIFO != nil }},
	{"loss", takesNet, func(j *ActionJSON) bool { return j.Loss != nil }},
	{"hold", takesNet, func(j *ActionJSON) bool { return j.Hold != nil }},
	{"name", takesName, func(j *ActionJSON) bool { return j.Name != "" }},
}

// Kind reads do and checks all that can be checked without the run: each field given
// belongs to that kind, and the fields it needs are there. Errors are *FieldError.
func (j *ActionJSON) Kind() (ActionKind, error) {
	a, err := j.action(nil)
	if err != nil {
		return 0, err
	}
	return a.Do, a.checkShape()
}

// Action is the kernel's action for a run of spec with these ids (node index -> id):
// ids become indexes, and Check validates the result. Errors are *FieldError.
func (j *ActionJSON) Action(spec *Spec, ids []int) (Action, error) {
	a, err := j.action(ids)
	if err != nil {
		return Action{}, err
	}
	if err := a.Check(spec, ids); err != nil {
		return Action{}, err
	}
	return a, nil
}

// action converts j; with ids nil, node ids are kept as they are (Kind only asks
// which fields are given).
func (j *ActionJSON) action(ids []int) (Action, error) {
	do, ok := ParseActionKind(j.Do)
	if !ok {
		return Action{}, fieldErr("do", "%q is unknown (allowed: %s)", j.Do, strings.Join(ActionNames(), ", "))
	}
	if !do.takes(takesNode) && j.Node != nil {
		return Action{}, fieldErr("node", "%q takes no node", j.Do)
	}
	for _, f := range writtenFields {
		if f.given(j) && !do.takes(f.field) {
			return Action{}, fieldErr(f.name, "%s %s to %s only", f.name, belong(f.name), kindsTaking(f.field))
		}
	}
	index := func(field string, id *int, missing int) (int, error) {
		switch {
		case id == nil:
			return missing, nil
		case ids == nil:
			return *id, nil
		}
		if k := slices.Index(ids, *id); k >= 0 {
			return k, nil
		}
		return 0, fieldErr(field, "%d is not a node id (ids: %s)", *id, joinInts(ids))
	}
	a := Action{At: j.At, Do: do, Msg: j.Msg, Type: j.Type, Timer: j.Name}
	var err error
	missingNode := 0
	if do.takes(takesNode) {
		missingNode = -1 // Check says it is needed
	}
	if a.Node, err = index("node", j.Node, missingNode); err != nil {
		return Action{}, err
	}
	if a.From, err = index("from", j.From, -1); err != nil {
		return Action{}, err
	}
	if a.To, err = index("to", j.To, -1); err != nil {
		return Action{}, err
	}
	for g, group := range j.Groups {
		idx := make([]int, len(group))
		for m, id := range group {
			if idx[m], err = index("groups["+strconv.Itoa(g)+"]["+strconv.Itoa(m)+"]", &id, 0); err != nil {
				return Action{}, err
			}
		}
		a.Groups = append(a.Groups, idx)
	}
	if do == ActNetwork {
		if j.Delay != nil && (len(j.Delay) < 1 || len(j.Delay) > 2) {
			return Action{}, fieldErr("delay", "expected a number or [min, max]")
		}
		a.Net = changeOf(j.Delay, j.FIFO, j.Loss, j.Hold)
	}
	return a, nil
}

// ActionJSONOf writes a kernel action as people write it, with the ids of the run
// (node index -> id): the reverse of Action.
func ActionJSONOf(a *Action, ids []int) (ActionJSON, error) {
	id := func(i int) (*int, error) {
		if i < 0 || i >= len(ids) {
			return nil, fmt.Errorf("node index %d is out of range (%d nodes)", i, len(ids))
		}
		v := ids[i]
		return &v, nil
	}
	if int(a.Do) >= len(actionKinds) {
		return ActionJSON{}, fmt.Errorf("unknown action %d", a.Do)
	}
	j := ActionJSON{At: a.At, Do: a.Do.String()}
	var err error
	if a.Do.takes(takesNode) {
		if j.Node, err = id(a.Node); err != nil {
			return ActionJSON{}, err
		}
	}
	if a.Do.takes(takesMsg) {
		j.Msg = a.Msg
	}
	if a.Do.takes(takesFrom) && a.From >= 0 {
		if j.From, err = id(a.From); err != nil {
			return ActionJSON{}, err
		}
	}
	if a.Do.takes(takesTo) && a.To >= 0 {
		if j.To, err = id(a.To); err != nil {
			return ActionJSON{}, err
		}
	}
	if a.Do.takes(takesType) {
		j.Type = a.Type
	}
	if a.Do.takes(takesName) {
		j.Name = a.Timer
	}
	for _, g := range a.Groups {
		group := make([]int, len(g))
		for m, i := range g {
			v, err := id(i)
			if err != nil {
				return ActionJSON{}, err
			}
			group[m] = *v
		}
		j.Groups = append(j.Groups, group)
	}
	if a.Do.takes(takesNet) {
		c := a.Net
		if c.Set&NetDelay != 0 {
			j.Delay = Delay{c.DelayMin, c.DelayMax}
		}
		if c.Set&NetFIFO != 0 {
			j.FIFO = &c.FIFO
		}
		if c.Set&NetLoss != 0 {
			j.Loss = &c.Loss
		}
		if c.Set&NetHold != 0 {
			j.Hold = &c.Hold
		}
	}
	return j, nil
}

// belong agrees with the field's name: "groups belong", "msg belongs".
func belong(name string) string {
	if name == "groups" {
		return "belong"
	}
	return "belongs"
}

// kindsTaking lists the kinds that take a field: "drop and deliver".
func kindsTaking(f actionField) string {
	var names []string
	for _, k := range actionKinds {
		if k.takes&f != 0 {
			names = append(names, k.name)
		}
	}
	if len(names) > 1 {
		return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
	}
	return strings.Join(names, "")
}

func joinInts(v []int) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, " ")
}
