// Package heartbeat is a failure detector that algorithms embed, as 003 describes it:
// the watched process sends HEARTBEAT every T, and a watcher that has not heard it in
// the last T+D, D the transmission delay it assumes, declares it dead. On a
// synchronous network whose delays are at most D that never suspects a live process;
// a D guessed too small suspects processes that are alive and merely slow: a time-out
// cannot tell slow from dead, as the notes stress.
package heartbeat

import (
	_ "embed"
	"fmt"

	"github.com/teach-dist/playground/runtime/sim"
)

// Names the detector uses in the trace.
const (
	Msg          = "HEARTBEAT"
	TimerBeat    = "heartbeat"
	TimerSuspect = "suspect"
)

// Params configure the detector; a zero Period turns it off.
type Params struct {
	Period int `json:"period" param:"period"` // the notes' T: time between two heartbeats
	Delay  int `json:"delay" param:"delay"`   // the notes' D; 0: the network's largest delay
	// Timeout, when set, is the silence itself in place of T+D: links made before
	// delay existed gave it, and replay as they did.
	Timeout int `json:"timeout" param:"timeout"`
}

// Param declares the detector's settings as the params field "heartbeat"; Validate
// holds the rules between its fields.
var Param = sim.Param{Name: "heartbeat", Kind: sim.ParamObject,
	Doc: "the failure detector (003): the watched process beats every period T; a watcher that has not heard it in the last T+D suspects it",
	Fields: []sim.Param{
		{Name: "period", Kind: sim.ParamInt, Min: 0, Zero: "off", Default: "0", Doc: "T, the time between two heartbeats"},
		{Name: "delay", Kind: sim.ParamInt, Min: 0, Zero: "the network's largest delay", Default: "0",
			Doc: "D, the transmission delay the detector assumes: it suspects after T+D without a heartbeat; below the real delay it suspects the living"},
		{Name: "timeout", Kind: sim.ParamInt, Min: 1,
			Doc: "the silence after which the watched process is suspected, given directly instead of T+D (links made before delay existed)"},
	}}

// On reports whether the detector runs.
func (p Params) On() bool { return p.Period > 0 }

// Silence is how long a watcher waits without a heartbeat before it suspects, on a
// network whose delays are at most maxDelay: the notes' T+D, or the explicit timeout.
func (p Params) Silence(maxDelay int) int {
	if p.Timeout > 0 {
		return p.Timeout
	}
	d := p.Delay
	if d <= 0 {
		d = maxDelay
	}
	return p.Period + d
}

// Validate checks the params; field is how the caller names them (e.g. "params.heartbeat").
func (p Params) Validate(field string) error {
	if p.Period < 0 || p.Period > sim.MaxTime {
		return fmt.Errorf("%s.period: %d must be 0 (off) or a positive integer up to %d", field, p.Period, sim.MaxTime)
	}
	if p.Delay < 0 || p.Delay > sim.MaxTime {
		return fmt.Errorf("%s.delay: %d must be 0 (the network's largest delay) or a positive integer up to %d", field, p.Delay, sim.MaxTime)
	}
	if p.Timeout < 0 || p.Timeout > sim.MaxTime {
		return fmt.Errorf("%s.timeout: %d must be a positive integer up to %d", field, p.Timeout, sim.MaxTime)
	}
	if p.Period == 0 && (p.Timeout != 0 || p.Delay != 0) {
		return fmt.Errorf("%s.period: the detector is off (no period), so delay and timeout mean nothing", field)
	}
	if p.Timeout != 0 && p.Delay != 0 {
		return fmt.Errorf("%s.timeout: replaces T+D, so it cannot go with delay: give one of them", field)
	}
	return nil
}

// text is the detector's part of what the pages show: its rules and its message.
//
//go:embed spec.txt
var text string

// described is text, read once.
var described = sim.BuildSpec(text, sim.Spec{})

// Rules are the detector's rules, to append to an algorithm's pseudocode.
var Rules = described.Rules

// Message is the heartbeat's schema, to append to an algorithm's messages.
var Message = described.Messages[0]

// Timers are the detector's timers: background, so a run can settle while it beats.
var Timers = []string{TimerBeat, TimerSuspect}

// Detector is one process's part of the failure detector. It is a plain value inside
// the algorithm's node state: copying the node copies it.
type Detector struct {
	p       Params
	silence int // T+D: how long a watcher waits for the next heartbeat
	watched int // node index, -1: nobody
	beating bool
}

// New returns a detector for a network whose delays are at most maxDelay (the
// default D); it watches nobody and sends nothing yet.
func New(p Params, maxDelay int) Detector {
	return Detector{p: p, silence: p.Silence(maxDelay), watched: -1}
}

// Lead makes this process the watched one: it beats now and then every period.
func (d *Detector) Lead(ctx *sim.Context) {
	d.Unwatch(ctx)
	if !d.p.On() || d.beating {
		return
	}
	d.beating = true
	d.beat(ctx)
}

// StopLeading stops the heartbeats.
func (d *Detector) StopLeading(ctx *sim.Context) {
	if d.beating {
		d.beating = false
		ctx.CancelTimer(TimerBeat)
	}
}

// Watch starts watching node index i.
func (d *Detector) Watch(ctx *sim.Context, i int) {
	d.StopLeading(ctx)
	if !d.p.On() || i == ctx.Self() {
		return
	}
	d.watched = i
	ctx.SetTimer(TimerSuspect, d.silence)
}

// Unwatch stops watching.
func (d *Detector) Unwatch(ctx *sim.Context) {
	if d.watched >= 0 {
		d.watched = -1
		ctx.CancelTimer(TimerSuspect)
	}
}

func (d *Detector) beat(ctx *sim.Context) {
	ctx.Rule("FD-1")
	for j := 0; j < ctx.N(); j++ {
		if j != ctx.Self() {
			ctx.Send(j, sim.Message{Type: Msg})
		}
	}
	ctx.SetTimer(TimerBeat, d.p.Period)
}

// Timer handles one of the detector's timers: mine says the timer was the detector's,
// suspect that the watched process is now suspected (the caller acts on it).
func (d *Detector) Timer(ctx *sim.Context, name string) (mine, suspect bool) {
	switch name {
	case TimerBeat:
		if d.beating {
			d.beat(ctx)
		}
		return true, false
	case TimerSuspect:
		if d.watched < 0 {
			return true, false
		}
		ctx.Rule("FD-3")
		d.watched = -1
		return true, true
	}
	return false, false
}

// Heard handles a HEARTBEAT from node index from.
func (d *Detector) Heard(ctx *sim.Context, from int) {
	if from == d.watched {
		ctx.Rule("FD-2")
		ctx.SetTimer(TimerSuspect, d.silence)
	}
}

// Watched returns the index of the watched process, or -1.
func (d *Detector) Watched() int { return d.watched }

// Beating reports whether this process sends heartbeats.
func (d *Detector) Beating() bool { return d.beating }
