package cs

import (
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
)

func TestCommandKeepsToTheState(t *testing.T) {
	for _, tc := range []struct {
		kind  sim.InputKind
		state string
		want  string // the rule that runs, if any
	}{
		{sim.Request, Released, "request"},
		{sim.Request, Requested, ""},
		{sim.Request, Wanted, ""},
		{sim.Request, Held, ""},
		{sim.Release, Held, "release"},
		{sim.Release, Released, ""},
		{sim.Release, Waiting, ""},
		{sim.Deliver, Released, ""},
		{sim.Elect, Held, ""},
	} {
		got := ""
		Command(nil, tc.kind, tc.state,
			func(*sim.Context) { got += "request" },
			func(*sim.Context) { got += "release" })
		if got != tc.want {
			t.Errorf("%v in %s: ran %q, want %q", tc.kind, tc.state, got, tc.want)
		}
	}
}

func TestEnterAndLeaveSetTheStateAndTellTheKernel(t *testing.T) {
	ctx := sim.NewContext(0, []int{0, 1})
	state := Requested
	Enter(ctx, &state)
	if state != Held {
		t.Errorf("after Enter: %s, want %s", state, Held)
	}
	Leave(ctx, &state)
	if state != Released {
		t.Errorf("after Leave: %s, want %s", state, Released)
	}
	effects := ctx.Effects()
	if len(effects) != 2 || effects[0].Kind != sim.EnterCS || effects[1].Kind != sim.ExitCS {
		t.Errorf("effects %+v, want EnterCS then ExitCS", effects)
	}
}

// forgetful is a node with one thing to forget.
type forgetful struct {
	state string
	queue []int
}

func (n *forgetful) Step(*sim.Context, *sim.Input) {}
func (n *forgetful) Clone() sim.Node               { c := *n; c.queue = append([]int(nil), n.queue...); return &c }
func (n *forgetful) Encode(*sim.StateWriter)       {}

// Forget clears what the process never reads again only once quiet and out of the
// game, in a copy; otherwise the node is given back as it is.
func TestForgetClearsACopyOnlyWhenQuietAndOut(t *testing.T) {
	out := func(n *forgetful) bool { return n.state == Released }
	forget := func(n *forgetful) { n.queue = nil }
	for _, c := range []struct {
		state   string
		quiet   bool
		forgets bool
	}{{Released, true, true}, {Released, false, false}, {Requested, true, false}} {
		n := &forgetful{state: c.state, queue: []int{1, 2}}
		got := Forget(n, c.quiet, out, forget).(*forgetful)
		if forgot := len(got.queue) == 0; forgot != c.forgets || len(n.queue) != 2 || (!c.forgets && got != n) {
			t.Errorf("%s, quiet %v: queue %v (the original's %v), the same node %v", c.state, c.quiet, got.queue, n.queue, got == n)
		}
	}
}
