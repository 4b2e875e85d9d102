package export

import (
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/teach-dist/playground/runtime/session"
	"github.com/teach-dist/playground/runtime/sim"
)

// timelineLimit bounds the events one timeline answer carries: the space-time diagram
// draws a few thousand comfortably, and a run at the session's event limit would be
// tens of megabytes.
const timelineLimit = 50_000

// timeline answers GET /api/sessions/{id}/timeline: the session's whole
// timeline up to its horizon, as the batches the WebSocket streams (docs/spacetime.md):
//
//	{"horizon":H,"step":S,"interventions":I,"truncated":false,
//	 "batches":[{"step":k,"t":t,"events":[trace v1 events...]}, ...]}
//
// A batch is one step of the kernel (step 0: the initialisation) or one intervention,
// which belongs to the step it was made at. Its events are trace v1 exactly, so the
// batches' events in order are the session's trace. The space-time diagram needs the
// step of every event, which the trace alone does not tell.
func (a *API) timeline(w http.ResponseWriter, r *http.Request, j job) {
	out := output(w, r, j, "application/json", "timeline.json")
	if err := timelineJSON(out, j.rec, timelineLimit, a.budget(r.Context(), out, j.rec.Horizon)); err != nil {
		fail(w, out, err)
	}
}

// timelineJSON replays rec to its horizon the way the session rebuilds a run (its
// rebuild and forward), so every batch, its step and its events are those a viewer
// following the run live was sent. It stops after the batch that reaches limit events,
// or between steps when b is spent (then "cut" says where and why). It streams to w a
// few kilobytes at a time.
func timelineJSON(w io.Writer, rec session.Recipe, limit int, b *budget) error {
	cfg := rec.Setup.Config
	// As the live run: no end time (it goes quiet instead) and the session's limit.
	cfg.Until = 0
	cfg.MaxEvents = session.DefaultMaxEvents
	enc := sim.NewEncoder(cfg.Spec, cfg.IDs)
	ivs := rec.Interventions

	out := make([]byte, 0, 4096)
	out = append(out, `{"horizon":`...)
	out = strconv.AppendInt(out, int64(rec.Horizon), 10)
	out = append(out, `,"step":`...)
	out = strconv.AppendInt(out, int64(rec.Step), 10)
	out = append(out, `,"interventions":`...)
	out = strconv.AppendInt(out, int64(len(ivs)), 10)
	out = append(out, `,"batches":[`...)

	var sm *sim.Sim
	var cur []byte // the open batch's events, comma separated
	count, total := 0, 0
	sink := func(ev *sim.Event) {
		if count > 0 {
			cur = append(cur, ',')
		}
		cur = enc.Append(cur, ev)
		count++
	}
	batches := 0
	closeBatch := func() {
		total += count
		if batches > 0 {
			out = append(out, ',')
		}
		batches++
		step, t := 0, 0
		if sm != nil {
			step, t = sm.Steps(), sm.Now()
		}
		out = append(out, `{"step":`...)
		out = strconv.AppendInt(out, int64(step), 10)
		out = append(out, `,"t":`...)
		out = strconv.AppendInt(out, int64(t), 10)
		out = append(out, `,"events":[`...)
		out = append(out, cur...)
		out = append(out, "]}"...)
		cur, count = cur[:0], 0
		if len(out) >= 32<<10 {
			_, _ = w.Write(out)
			out = out[:0]
		}
	}
	discard := func() { cur, count = cur[:0], 0 }
	full := func() bool { return total >= limit || b.reason != "" || b.spent(sm.Steps()) }

	var err error
	sm, err = sim.New(cfg, func(ev *sim.Event) { b.events++; sink(ev) })
	if err != nil {
		return err
	}
	closeBatch()
	k := 0 // interventions applied
	// stepDue: the next intervention is due and is itself a step (a held message the
	// user delivered), as the session's stepDue.
	stepDue := func() bool { return k < len(ivs) && ivs[k].Step <= sm.Steps() && ivs[k].Action.TakesStep() }
	apply := func() bool {
		err := sm.Apply(ivs[k].Action)
		k++
		var ae *sim.ActionError
		if err != nil && !errors.As(err, &ae) {
			discard()
			return false // the event limit: the live run stopped there too
		}
		// A refused intervention cannot happen on a faithful replay; the session goes on
		// without it, and so do we.
		closeBatch()
		return true
	}
	// The session's forward: one step (the network's, or the user's delivery), then the
	// other interventions recorded for the step reached, each a batch of its own.
	forward := func() bool {
		if stepDue() {
			if !apply() {
				return false
			}
		} else {
			ok, err := sm.Step()
			if err != nil {
				discard()
				return false
			}
			if ok {
				closeBatch()
			} else {
				discard()
				if k == len(ivs) || !apply() {
					return false
				}
			}
		}
		for k < len(ivs) && ivs[k].Step <= sm.Steps() && !stepDue() && !full() {
			if !apply() {
				return false
			}
		}
		return true
	}
	going := true
	for going && k < len(ivs) && ivs[k].Step <= 0 && !stepDue() && !full() {
		going = apply()
	}
	for going && !full() && sm.Steps() < rec.Horizon {
		going = forward()
	}
	out = append(out, `],"truncated":`...)
	out = strconv.AppendBool(out, full() && (sm.Steps() < rec.Horizon || k < len(ivs)))
	if b.reason != "" && sm.Steps() < rec.Horizon {
		out = append(out, `,"cut":`...)
		out = strconv.AppendQuote(out, b.note())
	}
	_, err = w.Write(append(out, '}'))
	return err
}
