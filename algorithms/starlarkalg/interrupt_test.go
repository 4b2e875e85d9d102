package starlarkalg

import (
	"errors"
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
)

const spinSource = header + "def init(setup):\n    return {\"count\": 0}\n\ndef on_request(ctx, s):\n    while True:\n        pass\n"

// TestInterrupt_StopsAnEndlessHandler: with the step bound out of reach, the handler
// stops when Limits.Interrupt says so (here on its fifth question, as a caller's timer
// would set it), with an *Error at the loop's line; it is asked every interruptEvery
// units of work, and the next call starts afresh.
func TestInterrupt_StopsAnEndlessHandler(t *testing.T) {
	asked, stopAt := 0, 5
	lim := DefaultLimits
	lim.Steps = 1 << 40
	lim.Interrupt = func() bool { asked++; return asked >= stopAt }
	spec, err := LoadLimits("test", spinSource, lim)
	if err != nil {
		t.Fatal(err)
	}
	setup := &sim.Setup{IDs: []int{0, 1, 2}}
	nd := spec.New(0, setup)
	for call := range 2 {
		asked = 0
		ctx := sim.NewContext(0, setup.IDs)
		nd.Step(ctx, &sim.Input{Kind: sim.Request})
		var e *Error
		if !errors.As(ctx.Err(), &e) {
			t.Fatalf("call %d: got %v, want an *Error", call, ctx.Err())
		}
		line := strings.Count(spinSource[:strings.Index(spinSource, "while True")], "\n") + 1
		if e.Handler != "on_request" || e.Line < line || e.Line > line+1 || e.Msg != "the handler was interrupted (it ran past its time)" {
			t.Errorf("call %d: got %s (line %d), want the interruption in on_request at line %d", call, e, e.Line, line)
		}
		steps := nd.(*node).run.thread.Steps
		if asked != stopAt || steps < uint64(stopAt)*interruptEvery || steps > uint64(stopAt+1)*interruptEvery {
			t.Errorf("call %d: asked %d times in %d steps, want %d times, every %d", call, asked, steps, stopAt, interruptEvery)
		}
	}
}

// TestInterrupt_StopsAnEndlessLoad: the top level is asked too.
func TestInterrupt_StopsAnEndlessLoad(t *testing.T) {
	asked := 0
	lim := DefaultLimits
	lim.LoadSteps = 1 << 40
	lim.Interrupt = func() bool { asked++; return asked >= 3 }
	src := header + "def spin():\n    while True:\n        pass\nspin()\n"
	_, err := LoadLimits("test", src, lim)
	var e *Error
	if !errors.As(err, &e) || e.Msg != "the top level was interrupted (it ran past its time)" || e.Line < 7 || e.Line > 8 || asked != 3 {
		t.Errorf("got %v (asked %d times), want the top level interrupted at line 7", err, asked)
	}
}

// TestInterrupt_LeavesTheStepBoundAsItIs: asking does not move the bound: a handler
// that never gets a yes stops at exactly Limits.Steps, with the bound's message.
func TestInterrupt_LeavesTheStepBoundAsItIs(t *testing.T) {
	asked := 0
	lim := DefaultLimits
	lim.Interrupt = func() bool { asked++; return false }
	spec, err := LoadLimits("test", spinSource, lim)
	if err != nil {
		t.Fatal(err)
	}
	setup := &sim.Setup{IDs: []int{0, 1, 2}}
	nd := spec.New(0, setup)
	ctx := sim.NewContext(0, setup.IDs)
	nd.Step(ctx, &sim.Input{Kind: sim.Request})
	if err := ctx.Err(); err == nil || !strings.Contains(err.Error(), "the handler did more than 100000 units of work") {
		t.Errorf("got %v, want the step bound", err)
	}
	if steps := nd.(*node).run.thread.Steps; steps != lim.Steps || asked != int(lim.Steps/interruptEvery) {
		t.Errorf("stopped after %d steps, asked %d times; want %d and %d", steps, asked, lim.Steps, lim.Steps/interruptEvery)
	}
}
