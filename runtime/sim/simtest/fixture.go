package simtest

import (
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
)

// Fixture drives one node by hand, for the one-test-per-rule tests: each Step clears
// what the previous one recorded, so the assertions see exactly one step's effects.
type Fixture struct {
	T    testing.TB
	Ctx  *sim.Context
	Node sim.Node
	// Show writes a sent message as Sent, WantSent and Check compare it; nil: TypeTo.
	// A package sets it once, in its own fixture constructor, to show the payload
	// its rules are about.
	Show func(sim.Message) string
}

// TypeTo writes a message as "TYPE->to", to a node index.
func TypeTo(m sim.Message) string { return m.Type + "->" + strconv.Itoa(m.To) }

// TypeToTS writes a message as "TYPE->to@ts", for the timestamped algorithms.
func TypeToTS(m sim.Message) string { return TypeTo(m) + "@" + strconv.Itoa(m.TS) }

// NewFixture builds node self of spec from setup without running Init: Start does that,
// so a test can also begin from a Recover.
func NewFixture(t testing.TB, spec *sim.Spec, self int, setup *sim.Setup) *Fixture {
	t.Helper()
	return &Fixture{T: t, Ctx: sim.NewContext(self, setup.IDs), Node: spec.New(self, setup)}
}

// Params decodes raw (scenario params JSON; "" for none) with spec's decoder for ids,
// as a scenario's would be, and fails the test if the decoder refuses it.
func Params(t testing.TB, spec *sim.Spec, raw string, ids []int) any {
	t.Helper()
	if spec.ParseParams == nil {
		return nil
	}
	var b []byte
	if raw != "" {
		b = []byte(raw)
	}
	p, err := spec.ParseParams(b, ids)
	if err != nil {
		t.Fatalf("params %s: %v", raw, err)
	}
	return p
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

// Sent renders the last step's messages with Show (TypeTo when it is nil).
func (f *Fixture) Sent() []string {
	show := f.Show
	if show == nil {
		show = TypeTo
	}
	var out []string
	for _, m := range f.Ctx.Sent() {
		out = append(out, show(m))
	}
	return out
}

// Leaders are the ids the last step declared leader.
func (f *Fixture) Leaders() []int {
	var out []int
	for _, e := range f.Ctx.Effects() {
		if e.Kind == sim.DeclareLeader {
			out = append(out, e.Leader)
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

// WantSent fails the test unless the last step sent exactly these messages, in this
// order, as Show writes them.
func (f *Fixture) WantSent(want ...string) {
	f.T.Helper()
	if got := f.Sent(); !slices.Equal(got, want) {
		f.T.Fatalf("sent: got %v, want %v", got, want)
	}
}

// WantEffects fails the test unless the last step's timer and CS effects are exactly
// these (as Effects writes them: "set name after", "cancel name", "enter", "exit").
func (f *Fixture) WantEffects(want ...string) {
	f.T.Helper()
	if got := f.Effects(); !slices.Equal(got, want) {
		f.T.Fatalf("effects: got %v, want %v", got, want)
	}
}

// Want is everything one step did, for Check; a nil list means none of that kind.
type Want struct {
	Rules   []string
	Sent    []string // as the fixture's Show writes them
	Effects []string // timers and CS, as Fixture.Effects writes them
	Leaders []int    // ids declared leader
	State   string   // the node's canonical JSON afterwards
}

// Check compares the last step with want, reporting every difference (not only the
// first) and going on.
func (f *Fixture) Check(want Want) {
	f.T.Helper()
	if got := f.Ctx.Rules(); !slices.Equal(got, want.Rules) {
		f.T.Errorf("rules = %v, want %v", got, want.Rules)
	}
	if got := f.Sent(); !slices.Equal(got, want.Sent) {
		f.T.Errorf("sent = %v, want %v", got, want.Sent)
	}
	if got := f.Effects(); !slices.Equal(got, want.Effects) {
		f.T.Errorf("effects = %v, want %v", got, want.Effects)
	}
	if got := f.Leaders(); !slices.Equal(got, want.Leaders) {
		f.T.Errorf("leaders declared = %v, want %v", got, want.Leaders)
	}
	if got := f.State(); got != want.State {
		f.T.Errorf("state:\n got %s\nwant %s", got, want.State)
	}
}
