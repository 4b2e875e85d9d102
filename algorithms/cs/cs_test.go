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
