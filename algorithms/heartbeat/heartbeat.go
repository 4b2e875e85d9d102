// Package heartbeat is a failure detector that algorithms embed: the watched process
// sends HEARTBEAT every period, and a watcher that hears nothing for the time-out
// suspects it has crashed. A time-out too short for the network suspects processes that
// are alive and merely slow: a time-out cannot tell slow from dead, as the notes stress.
package heartbeat

import (
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
	Period  int `json:"period" param:"period"`   // time between two heartbeats
	Timeout int `json:"timeout" param:"timeout"` // silence after which the watched process is suspected
}

// Param declares the detector's settings as the params field "heartbeat"; Validate
// holds the rule between its fields.
var Param = sim.Param{Name: "heartbeat", Kind: sim.ParamObject,
	Doc: "the failure detector: the watched process beats every period, a silence of timeout is suspected",
	Fields: []sim.Param{
		{Name: "period", Kind: sim.ParamInt, Min: 0, Zero: "off", Default: "0", Doc: "time between two heartbeats"},
		{Name: "timeout", Kind: sim.ParamInt, Min: 1, Doc: "silence after which the watched process is suspected"},
	}}

// On reports whether the detector runs.
func (p Params) On() bool { return p.Period > 0 }

// Validate checks the params; field is how the caller names them (e.g. "params.heartbeat").
func (p Params) Validate(field string) error {
	if p.Period < 0 || p.Period > sim.MaxTime {
		return fmt.Errorf("%s.period: %d must be 0 (off) or a positive integer up to %d", field, p.Period, sim.MaxTime)
	}
	if p.Period > 0 && (p.Timeout <= 0 || p.Timeout > sim.MaxTime) {
		return fmt.Errorf("%s.timeout: %d must be a positive integer up to %d when a period is set", field, p.Timeout, sim.MaxTime)
	}
	if p.Period == 0 && p.Timeout != 0 {
		return fmt.Errorf("%s.timeout: needs a period too", field)
	}
	return nil
}

// Rules are the detector's rules, to append to an algorithm's pseudocode.
var Rules = []sim.Rule{
	{Label: "FD-1", Group: "Failure detector", Lines: []string{
		"every period, while I am the one being watched:",
		"    send HEARTBEAT to every other process"},
		Says: "sends its periodic heartbeat"},
	{Label: "FD-2", Group: "Failure detector", Lines: []string{
		"on HEARTBEAT from the process I watch:",
		"    restart the suspicion time-out"},
		Says: "hears the watched process's heartbeat and stops worrying for another time-out"},
	{Label: "FD-3", Group: "Failure detector", Lines: []string{
		"when the suspicion time-out expires:",
		"    suspect the watched process has crashed",
		"    (it may only be slow: a time-out cannot tell)"},
		Says: "has heard nothing for a whole time-out and suspects a crash"},
}

// Message is the heartbeat's schema, to append to an algorithm's messages.
var Message = sim.MessageType{Name: Msg, Label: "BEAT", Doc: "I am alive (failure detector)"}

// Timers are the detector's timers: background, so a run can settle while it beats.
var Timers = []string{TimerBeat, TimerSuspect}

// Detector is one process's part of the failure detector. It is a plain value inside
// the algorithm's node state: copying the node copies it.
type Detector struct {
	p       Params
	watched int // node index, -1: nobody
	beating bool
}

// New returns a detector that watches nobody and sends nothing yet.
func New(p Params) Detector { return Detector{p: p, watched: -1} }

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
	ctx.SetTimer(TimerSuspect, d.p.Timeout)
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
		ctx.SetTimer(TimerSuspect, d.p.Timeout)
	}
}

// Watched returns the index of the watched process, or -1.
func (d *Detector) Watched() int { return d.watched }

// Beating reports whether this process sends heartbeats.
func (d *Detector) Beating() bool { return d.beating }
