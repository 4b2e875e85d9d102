// Package cs names the states of a process with respect to the critical section, once
// for every mutual exclusion algorithm. The notes call the waiting state by different
// names in different algorithms (REQUESTED, WANTED, WAITING); each algorithm uses the
// one its notes use, and the inspector shows it.
package cs

import "github.com/teach-dist/playground/runtime/sim"

const (
	// Released: outside the CS and not asking for it.
	Released = "RELEASED"
	// Requested, Wanted and Waiting: asking for the CS and waiting to enter.
	Requested = "REQUESTED"
	Wanted    = "WANTED"
	Waiting   = "WAITING"
	// Held: inside the CS.
	Held = "HELD"
)

// Enter puts a process in the CS: state := HELD, and the kernel is told.
func Enter(ctx *sim.Context, state *string) {
	*state = Held
	ctx.Enter()
}

// Leave takes a process out of the CS: state := RELEASED, and the kernel is told.
func Leave(ctx *sim.Context, state *string) {
	*state = Released
	ctx.Exit()
}

// Command carries out the user's command kind (sim.Request or sim.Release) for a
// process in state, as every algorithm whose state is one of these does: a request
// counts only from Released, a release only from Held (the kernel refuses the others
// before they reach a process; the process keeps to its own state all the same).
func Command(ctx *sim.Context, kind sim.InputKind, state string, request, release func(*sim.Context)) {
	switch {
	case kind == sim.Request && state == Released:
		request(ctx)
	case kind == sim.Release && state == Held:
		release(ctx)
	}
}

// Forget is the canonical form (sim.Canon.Node) of a process that is out of the game:
// once nobody asks again (quiet), a process for which out holds never enters again,
// so what forget clears it never reads again. Anything else is kept as it is.
func Forget[N sim.Node](nd sim.Node, quiet bool, out func(N) bool, forget func(N)) sim.Node {
	n := nd.(N)
	if !quiet || !out(n) {
		return nd
	}
	c := n.Clone().(N)
	forget(c)
	return c
}
