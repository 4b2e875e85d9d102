package sim

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// FieldError is an action (or a part of a configuration) that cannot be, naming the
// field at fault as written in a scenario event or a frame: "node", "groups[1][0]",
// "delay". Field is empty when the action as a whole is at fault.
type FieldError struct {
	Field  string
	Reason string
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Reason
	}
	return e.Field + ": " + e.Reason
}

func fieldErr(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

func validate(cfg *Config) error {
	if cfg.Spec == nil {
		return errors.New("no algorithm")
	}
	n := len(cfg.IDs)
	if n < MinNodes || n > MaxNodes {
		return fmt.Errorf("nodes: %d is out of range (%d to %d)", n, MinNodes, MaxNodes)
	}
	nw := cfg.Network
	if nw.DelayMin < 0 || nw.DelayMax < nw.DelayMin || nw.DelayMax > MaxDelay {
		return fmt.Errorf("network.delay: [%d, %d] must satisfy 0 <= min <= max <= %d", nw.DelayMin, nw.DelayMax, MaxDelay)
	}
	if nw.Loss < 0 || nw.Loss > 1 || nw.Loss != nw.Loss {
		return fmt.Errorf("network.loss: %v must be between 0 and 1", nw.Loss)
	}
	if cfg.Until < 0 || cfg.Until > MaxTime {
		return fmt.Errorf("until: %d is out of range (0 to %d)", cfg.Until, MaxTime)
	}
	if cfg.CS < 0 || cfg.CS > MaxTime {
		return fmt.Errorf("cs: %d is out of range (0 to %d)", cfg.CS, MaxTime)
	}
	for i := range cfg.Actions {
		a := &cfg.Actions[i]
		if a.At < 0 || a.At > MaxTime {
			return fmt.Errorf("events[%d].at: %d is out of range (0 to %d)", i, a.At, MaxTime)
		}
		if err := a.Check(cfg.Spec, cfg.IDs); err != nil {
			return fmt.Errorf("events[%d]: %w", i, err)
		}
	}
	return nil
}

// Check is the one validation of an action, whether it comes from a scenario, a link,
// a WebSocket frame or code: a run of spec with these ids (node index -> id) can take
// it. Errors are *FieldError. Whether the run's state allows it now (crashing a
// crashed node) is Apply's to say.
func (a *Action) Check(spec *Spec, ids []int) error {
	if err := a.checkShape(); err != nil {
		return err
	}
	if family := actionKinds[a.Do].family; family != "" && spec.Family != family {
		what := "is mutual exclusion"
		if spec.Family == Election {
			what = "elects a leader"
		}
		needs := "a mutual exclusion"
		if family == Election {
			needs = "an election"
		}
		return fieldErr("do", "%q needs %s algorithm; %s %s (allowed: %s)", a.Do, needs, spec.Slug, what, strings.Join(actionNamesFor(spec.Family), ", "))
	}
	n := len(ids)
	inRange := func(i int) bool { return i >= 0 && i < n }
	if a.Do.takes(takesNode) && !inRange(a.Node) {
		return fieldErr("node", "index %d does not exist", a.Node)
	}
	switch a.Do {
	case ActTell:
		if !inRange(a.To) {
			return fieldErr("to", "index %d does not exist", a.To)
		}
		if a.To == a.Node {
			return fieldErr("to", "P%d would tell itself: a process tells another process", ids[a.To])
		}
	case ActDrop:
		if a.From >= n {
			return fieldErr("from", "index %d does not exist", a.From)
		}
		if a.To >= n {
			return fieldErr("to", "index %d does not exist", a.To)
		}
		if a.Type != "" && a.Type != AppMessage && spec.MessageType(a.Type) == nil {
			names := make([]string, len(spec.Messages))
			for i, m := range spec.Messages {
				names[i] = m.Name
			}
			return fieldErr("type", "%q is not a message of %s (allowed: %s, or %s for an application message)", a.Type, spec.Slug, strings.Join(names, ", "), AppMessage)
		}
	case ActPartition:
		seen := make([]bool, n)
		for g, group := range a.Groups {
			for m, i := range group {
				f := "groups[" + strconv.Itoa(g) + "][" + strconv.Itoa(m) + "]"
				if !inRange(i) {
					return fieldErr(f, "index %d does not exist", i)
				}
				if seen[i] {
					return fieldErr(f, "%d is in two groups", ids[i])
				}
				seen[i] = true
			}
		}
	}
	return nil
}

// checkShape checks what an action must be whatever the run: a known kind, with the
// fields that kind needs (-1 stands for a node not given).
func (a *Action) checkShape() error {
	if int(a.Do) >= len(actionKinds) {
		return fieldErr("do", "unknown action %d", a.Do)
	}
	if a.Do.takes(takesNode) && a.Node < 0 {
		return fieldErr("node", "%q needs a node", a.Do)
	}
	switch a.Do {
	case ActDrop:
		if a.Msg < 0 {
			return fieldErr("msg", "%d is not a message id", a.Msg)
		}
		if a.Msg == 0 && a.From < 0 && a.To < 0 && a.Type == "" {
			return fieldErr("msg", "drop needs the id of a message in flight, or a filter (from, to, type)")
		}
	case ActDeliver:
		if a.Msg <= 0 {
			return fieldErr("msg", "deliver needs the id of a held message")
		}
	case ActTell:
		if a.To < 0 {
			return fieldErr("to", "tell needs the id of the process to tell")
		}
	case ActPartition:
		if len(a.Groups) == 0 {
			return fieldErr("groups", "a partition needs at least one group of ids")
		}
		for g, group := range a.Groups {
			if len(group) == 0 { // [[]] would cut nobody off yet read as a partition
				return fieldErr("groups["+strconv.Itoa(g)+"]", "is empty: each group names at least one process")
			}
		}
	case ActFire:
		if a.Timer == "" {
			return fieldErr("name", "fire needs the name of one of the node's timers")
		}
	case ActNetwork:
		return a.Net.Check()
	}
	return nil
}
