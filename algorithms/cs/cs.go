// Package cs names the states of a process with respect to the critical section, once
// for every mutual exclusion algorithm. The notes call the waiting state by different
// names in different algorithms (REQUESTED, WANTED, WAITING); each algorithm uses the
// one its notes use, and the inspector shows it.
package cs

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
