package cost

import (
	"strings"

	"github.com/teach-dist/playground/runtime/sim"
)

// Which of an algorithm's costs (Spec.Costs, named freely by each algorithm) speak of
// which metric: matched on the cost's name, lower-cased.
var costMatch = map[string]func(name string) bool{
	PerEntry: func(s string) bool {
		return strings.HasPrefix(s, "messages per cs entry") || strings.HasPrefix(s, "messages per entry")
	},
	ToEnter: func(s string) bool {
		return strings.Contains(s, "to enter") || strings.Contains(s, "to obtain")
	},
	OnExit: func(s string) bool {
		return strings.Contains(s, "to leave") || strings.Contains(s, "to exit")
	},
	ClientDelay: func(s string) bool { return strings.HasPrefix(s, "client delay") },
	ExitDelay:   func(s string) bool { return strings.HasPrefix(s, "exit delay") },
	SyncDelay:   func(s string) bool { return strings.HasPrefix(s, "synchronisation delay") },
	ElectionMessages: func(s string) bool {
		return strings.HasPrefix(s, "messages")
	},
	ElectionTime: func(s string) bool {
		return strings.HasPrefix(s, "time to elect") || strings.HasPrefix(s, "election time")
	},
}

// TheoryFor returns spec's costs that speak of metric key, evaluated for n processes.
// Delays are in message times (T); with meanDelay, the run's T in time units, a
// delay's figures are also given in time units (Time), the unit the run measures in.
func TheoryFor(spec *sim.Spec, key string, n int, meanDelay float64) []Theory {
	return theory(spec, key, n, meanDelay, nil, nil)
}

// theoryFor is TheoryFor for a run whose params are known (nil: the defaults): a
// derived figure that depends on them (sim.Cost.ValueFor) is evaluated for them.
func theoryFor(spec *sim.Spec, key string, n int, meanDelay float64, params any) []Theory {
	return theory(spec, key, n, meanDelay, params, nil)
}

// Situation is what a run's figures depend on besides N: the algorithm's params (a
// variant's figures hold for that variant only) and how many processes start an
// election at once (a one-initiator figure does not describe k of them; a figure of
// k initiators is evaluated for this k).
type Situation struct {
	Params     any
	Initiators int // 0: no election started, or not known
}

// SituationOf is the situation of a run of cfg: its params, and the elections its
// actions start at the earliest time any starts (the /compare workloads start them
// together).
func SituationOf(cfg sim.Config) Situation {
	s := Situation{Params: cfg.Params}
	first := -1
	for _, a := range cfg.Actions {
		if a.Do != sim.ActElect {
			continue
		}
		switch {
		case first < 0 || a.At < first:
			first, s.Initiators = a.At, 1
		case a.At == first:
			s.Initiators++
		}
	}
	return s
}

// TheoryIn is TheoryFor for a run in situation sit: only the figures that describe it
// (Cost.When, Cost.Initiators), those of k initiators evaluated for its k (Cost.ValueK).
func TheoryIn(spec *sim.Spec, key string, n int, meanDelay float64, sit Situation) []Theory {
	return theory(spec, key, n, meanDelay, sit.Params, &sit)
}

// describes says whether cost c speaks of a run in sit (nil: any run).
func describes(c *sim.Cost, sit *Situation) bool {
	if sit == nil {
		return true
	}
	if c.When != nil && !c.When(sit.Params) {
		return false
	}
	return c.Initiators == 0 || sit.Initiators == 0 || c.Initiators == sit.Initiators
}

// theory is spec's costs for metric key, evaluated for n processes and the run's params
// (sim.Cost.ValueFor; nil: the defaults), only those describing sit when it is given.
func theory(spec *sim.Spec, key string, n int, meanDelay float64, params any, sit *Situation) []Theory {
	match := costMatch[key]
	if match == nil {
		return nil
	}
	inTime := meanDelay > 0 && (key == ClientDelay || key == ExitDelay || key == SyncDelay || key == ElectionTime)
	eval := func(f func(int) float64) (v, t *float64) {
		if f == nil || n <= 0 {
			return nil, nil
		}
		v = ptr(f(n))
		if v != nil && inTime {
			t = ptr(*v * meanDelay)
		}
		return v, t
	}
	out := []Theory{}
	for i := range spec.Costs {
		c := &spec.Costs[i]
		if !match(strings.ToLower(c.Name)) || !describes(c, sit) {
			continue
		}
		t := Theory{Name: c.Name, Formula: c.Formula, Notes: []NoteFigure{}}
		t.Value, t.Time = eval(c.Value)
		if c.Low != nil && c.High != nil {
			lo, loT := eval(c.Low)
			hi, hiT := eval(c.High)
			if lo != nil && hi != nil {
				t.Range = &Range{Low: *lo, High: *hi, LowTime: loT, HighTime: hiT}
			}
		}
		if c.ValueFor != nil && params != nil {
			t.Value, t.Time = eval(func(n int) float64 { return c.ValueFor(n, params) })
		}
		if c.ValueK != nil && sit != nil && sit.Initiators > 0 {
			k := sit.Initiators
			t.Value, t.Time = eval(func(n int) float64 { return c.ValueK(n, k) })
		}
		for _, nf := range c.Notes {
			f := NoteFigure{In: nf.In, Formula: nf.Formula}
			f.Value, f.Time = eval(nf.Value)
			t.Notes = append(t.Notes, f)
		}
		out = append(out, t)
	}
	return out
}

// Curve is the first of spec's costs for metric key that has a value: the one a chart
// draws (nil if there is none).
func Curve(spec *sim.Spec, key string) *sim.Cost {
	match := costMatch[key]
	if match == nil {
		return nil
	}
	for k := range spec.Costs {
		c := &spec.Costs[k]
		if c.Value != nil && match(strings.ToLower(c.Name)) {
			return c
		}
	}
	return nil
}
