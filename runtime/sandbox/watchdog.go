package sandbox

import (
	"fmt"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/teach-dist/playground/algorithms/starlarkalg"
)

// watchdog stops a call that has used its CPU time: a worker runs one call at a time,
// so the process's CPU time since the call began is the call's (and its collections').
// It sets the flag the interpreter asks between units of work (Limits.Interrupt), so
// the call ends with an error at the line it was at; a builtin is never interrupted
// halfway, but every builtin is charged before it runs, so none runs long. The server's
// deadline per call (Options.CallTimeout, wall clock) stays the backstop.
type watchdog struct {
	budget time.Duration // CPU per call; 0: none
	steps  uint64        // units of work per handler call; 0: the default
	active atomic.Bool
	start  atomic.Int64 // the process's CPU time at the call's start, ns
	over   atomic.Bool
}

// watchEvery is how often the watchdog reads the process's CPU time during a call.
const watchEvery = 10 * time.Millisecond

func newWatchdog(ms, steps string) (*watchdog, error) {
	wd := &watchdog{}
	if steps != "" {
		n, err := strconv.ParseUint(steps, 10, 64)
		if err != nil || n == 0 {
			return nil, fmt.Errorf("%s: %q is not a number of units", envSteps, steps)
		}
		wd.steps = n
	}
	if ms == "" {
		return wd, nil
	}
	n, err := strconv.Atoi(ms)
	if err != nil || n <= 0 {
		return nil, fmt.Errorf("%s: %q is not a number of milliseconds", envCPU, ms)
	}
	wd.budget = time.Duration(n) * time.Millisecond
	go wd.watch()
	return wd, nil
}

func (wd *watchdog) watch() {
	for range time.Tick(watchEvery) {
		if wd.active.Load() && processCPU()-wd.start.Load() > int64(wd.budget) {
			wd.over.Store(true)
		}
	}
}

func (wd *watchdog) begin() {
	wd.over.Store(false)
	wd.start.Store(processCPU())
	wd.active.Store(true)
}

func (wd *watchdog) end() { wd.active.Store(false) }

// limits are the interpreter's bounds, with the watchdog's interrupt.
func (wd *watchdog) limits() starlarkalg.Limits {
	lim := starlarkalg.DefaultLimits
	if wd.steps > 0 {
		lim.Steps = wd.steps
	}
	if wd.budget > 0 {
		lim.Interrupt = wd.over.Load
	}
	return lim
}

// processCPU is the process's user and system CPU time, in ns.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
