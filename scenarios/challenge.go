package scenarios

import (
	"slices"
	"strconv"
	"strings"

	"github.com/teach-dist/playground/runtime/sim"
)

// Challenge is what a curated scenario asks of a student: its Source is the starting
// rules (often wrong on purpose), Goal says what to do, and Prove lists the properties
// the explorer must find holding on the scenario's configuration for the challenge to
// be met (explore.Meets). The page shows the goal and, after Check, whether the
// student's current rules meet it.
type Challenge struct {
	Goal  string   `json:"goal"`
	Prove []string `json:"prove"`
}

// Provable are the properties a challenge may ask for: the monitors' names.
var Provable = []string{sim.PropMutex, sim.PropDeadlock, sim.PropPending, sim.PropLeader}

func (c *Challenge) validate(hasSource bool) error {
	if c == nil {
		return nil
	}
	if !hasSource {
		return fieldErr("challenge", "a challenge needs a starting source (the field source)")
	}
	if strings.TrimSpace(c.Goal) == "" || len(c.Goal) > 2*MaxCaption {
		return fieldErr("challenge.goal", "must be 1 to %d characters", 2*MaxCaption)
	}
	if len(c.Prove) == 0 {
		return fieldErr("challenge.prove", "names no property (allowed: %s)", strings.Join(Provable, ", "))
	}
	for k, p := range c.Prove {
		if !slices.Contains(Provable, p) || slices.Contains(c.Prove[:k], p) {
			return fieldErr("challenge.prove["+strconv.Itoa(k)+"]", "%q is unknown or given twice (allowed: %s)", p, strings.Join(Provable, ", "))
		}
	}
	return nil
}
