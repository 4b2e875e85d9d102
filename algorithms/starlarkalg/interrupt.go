package starlarkalg

import (
	"fmt"

	"go.starlark.net/starlark"
)

// Interrupting a running handler. This package keeps no clock and starts no goroutine,
// so it cannot time a handler itself: a caller that does (a sandbox worker enforcing a
// wall-clock deadline) sets Limits.Interrupt, a function the interpreter asks every
// interruptEvery units of work, on the goroutine that runs the handler, whether to
// stop. When it returns true the call stops at once with an *Error naming the handler
// and the line it was at ("interrupted"), as a bound hit does, and the run stops with
// it. The function may be called from any goroutine's handler calls, so the caller
// makes it safe to call concurrently (typically an atomic.Bool it sets from a timer,
// read here); it must be cheap and must not block.
//
// A builtin call is never interrupted halfway, but no builtin call does more than
// the call's work bound (Limits.Steps) allows, so the answer is at most that long in
// coming. Without Interrupt the interpreter is not asked anything.

// interruptEvery is how many units of work pass between two questions to
// Limits.Interrupt.
const interruptEvery = 1024

// interruptedReason is the cancellation's reason, as the interpreter reports it.
const interruptedReason = "interrupted"

// onMaxSteps is the thread's OnMaxSteps when Limits.Interrupt is set: the thread's
// step limit is then the next time to ask, and the real bound is b.steps.
func (b *growBudget) onMaxSteps(t *starlark.Thread) {
	switch {
	case t.Steps >= b.steps:
		t.Cancel("too many steps")
	case b.interrupt():
		t.Cancel(interruptedReason)
	default:
		t.SetMaxExecutionSteps(min(b.steps, t.Steps+interruptEvery))
	}
}

// restart readies a thread's budget for its next call.
func (b *growBudget) restart(t *starlark.Thread) {
	t.Steps = 0
	b.left = b.limit
	if b.interrupt != nil {
		t.SetMaxExecutionSteps(min(b.steps, interruptEvery))
	}
}

// stepsMessage words the interpreter's cancellations for a student.
func stepsMessage(msg string, limit uint64, who string) string {
	switch msg {
	case "Starlark computation cancelled: too many steps":
		return fmt.Sprintf("%s did more than %d units of work (an endless loop?)", who, limit)
	case "Starlark computation cancelled: " + interruptedReason:
		return who + " was interrupted (it ran past its time)"
	}
	return msg
}
