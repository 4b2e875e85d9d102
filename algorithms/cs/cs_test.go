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
