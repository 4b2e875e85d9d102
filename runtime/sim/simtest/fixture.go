package simtest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
)

// Fixture drives one node by hand, for the one-test-per-rule tests: each Step clears
// what the previous one recorded, so the assertions see exactly one step's effects.
type Fixture struct {
	T    testing.TB
	Ctx  *sim.Context
	Node sim.Node
}

// NewFixture builds node self of spec from setup without running Init: Start does that,
// so a test can also begin from a Recover.
func NewFixture(t testing.TB, spec *sim.Spec, self int, setup *sim.Setup) *Fixture {
	t.Helper()
	return &Fixture{T: t, Ctx: sim.NewContext(self, setup.IDs), Node: spec.New(self, setup)}
}

// Start builds the node and runs its Init.
func Start(t testing.TB, spec *sim.Spec, self int, setup *sim.Setup) *Fixture {
	t.Helper()
	f := NewFixture(t, spec, self, setup)
	f.Step(sim.Input{Kind: sim.Init})
	return f
}

// Step gives the node one input.
func (f *Fixture) Step(in sim.Input) {
	f.Ctx.Reset(f.Ctx.Self())
	f.Node.Step(f.Ctx, &in)
}

// Deliver hands the node a message addressed to it.
func (f *Fixture) Deliver(m sim.Message) {
	m.To = f.Ctx.Self()
	f.Step(sim.Input{Kind: sim.Deliver, Msg: m})
}

// Timer fires the named timer.
func (f *Fixture) Timer(name string) { f.Step(sim.Input{Kind: sim.Timer, Timer: name}) }

// State is the node's canonical JSON.
func (f *Fixture) State() string { return string(sim.EncodeState(f.Node)) }

// Has reports whether the last step had an effect of this kind.
func (f *Fixture) Has(k sim.EffectKind) bool {
	return slices.ContainsFunc(f.Ctx.Effects(), func(e sim.Effect) bool { return e.Kind == k })
}

// Effects renders the last step's timer and CS effects as "set name after",
// "cancel name", "enter", "exit".
func (f *Fixture) Effects() []string {
	var out []string
	for _, e := range f.Ctx.Effects() {
		switch e.Kind {
		case sim.SetTimer:
			out = append(out, fmt.Sprintf("set %s %d", e.Timer, e.After))
		case sim.CancelTimer:
			out = append(out, "cancel "+e.Timer)
		case sim.EnterCS:
			out = append(out, "enter")
		case sim.ExitCS:
			out = append(out, "exit")
		}
	}
	return out
}

// CS renders the last step's CS effects only: "enter", "exit".
func (f *Fixture) CS() []string {
	var out []string
	for _, e := range f.Ctx.Effects() {
		switch e.Kind {
		case sim.EnterCS:
			out = append(out, "enter")
		case sim.ExitCS:
			out = append(out, "exit")
		}
	}
	return out
}

// WantRules fails the test unless the last step fired exactly these rules.
func (f *Fixture) WantRules(want ...string) {
	f.T.Helper()
	if got := f.Ctx.Rules(); !slices.Equal(got, want) {
		f.T.Fatalf("rules fired: got %v, want %v", got, want)
	}
}

// WantState fails the test unless the node's state encodes as want.
func (f *Fixture) WantState(want string) {
	f.T.Helper()
	if got := f.State(); got != want {
		f.T.Fatalf("state:\n got %s\nwant %s", got, want)
	}
}
