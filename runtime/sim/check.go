package sim

import (
	"errors"
	"fmt"
)

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
		if err := checkAction(cfg, a); err != nil {
			return fmt.Errorf("events[%d]: %w", i, err)
		}
	}
	return nil
}

func checkAction(cfg *Config, a *Action) error {
	n := len(cfg.IDs)
	inRange := func(i int) bool { return i >= 0 && i < n }
	switch a.Do {
	case ActRequest, ActRelease:
		if cfg.Spec.Family != Mutex {
			return fmt.Errorf("do: %q needs a mutual exclusion algorithm; %s elects a leader", a.Do, cfg.Spec.Slug)
		}
	case ActElect:
		if cfg.Spec.Family != Election {
			return fmt.Errorf("do: %q needs an election algorithm; %s is mutual exclusion", a.Do, cfg.Spec.Slug)
		}
	case ActCrash, ActRecover, ActHeal:
	case ActNetwork:
		return a.Net.Check()
	case ActFire:
		if a.Timer == "" {
			return errors.New("name: fire needs the name of a timer")
		}
	case ActTell:
		if !inRange(a.Node) {
			return fmt.Errorf("node: index %d does not exist", a.Node)
		}
		if !inRange(a.To) {
			return errors.New("to: tell needs the process to tell (no such node)")
		}
		if a.To == a.Node {
			return errors.New("to: a process tells another process, not itself")
		}
		return nil
	case ActDrop, ActDeliver:
		if a.Do == ActDeliver && a.Msg <= 0 {
			return errors.New("msg: deliver needs the id of a held message")
		}
		if (a.From >= 0 && !inRange(a.From)) || (a.To >= 0 && !inRange(a.To)) {
			return errors.New("from/to: no such node")
		}
		return nil
	case ActPartition:
		seen := make([]bool, n)
		if len(a.Groups) == 0 {
			return errors.New("groups: a partition needs at least one group")
		}
		for _, g := range a.Groups {
			for _, i := range g {
				if !inRange(i) {
					return fmt.Errorf("groups: node index %d does not exist", i)
				}
				if seen[i] {
					return fmt.Errorf("groups: node %d is in two groups", cfg.IDs[i])
				}
				seen[i] = true
			}
		}
		return nil
	default:
		return fmt.Errorf("do: unknown action %d", a.Do)
	}
	if a.Do != ActHeal && !inRange(a.Node) {
		return fmt.Errorf("node: index %d does not exist", a.Node)
	}
	return nil
}
