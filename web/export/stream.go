package export

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"time"

	"github.com/teach-dist/playground/runtime/session"
	"github.com/teach-dist/playground/runtime/sim"
)

// An export streams while its run replays, so its memory does not grow with the run;
// a budget bounds what it may cost instead: events, bytes written and time. Past a
// bound the replay stops between two steps and the export ends with a note, in its
// own format, saying where it stopped and how to ask for less.

// budget is one export's bounds and what it has spent.
type budget struct {
	ctx       context.Context // the gate's deadline
	timeout   time.Duration   // for the note
	maxEvents int
	maxBytes  int64
	out       *lazyHeader // counts the bytes written
	events    int
	asked     int    // the step asked for
	stopped   int    // the step the replay stopped at
	reason    string // why it stopped; "" while it goes on
}

func (a *API) budget(ctx context.Context, out *lazyHeader, asked int) *budget {
	return &budget{ctx: ctx, timeout: a.opts.Gate.Timeout, maxEvents: a.opts.MaxEvents, maxBytes: a.opts.MaxBytes,
		out: out, asked: asked}
}

// yieldEvery is how many steps an export replays before it lets the other goroutines
// of its processor run (runtime.Gosched): a few exports that keep every core busy
// would otherwise make a visitor's page, socket and snapshot wait the scheduler's
// 10 ms time slice at each of their turns.
const yieldEvery = 32

// spent reports whether a bound is reached, and notes which.
func (b *budget) spent(steps int) bool {
	if steps%yieldEvery == yieldEvery-1 {
		runtime.Gosched()
	}
	switch {
	case b.ctx.Err() != nil:
		b.reason = fmt.Sprintf("it took longer than the %s an export may take", b.timeout)
	case b.events >= b.maxEvents:
		b.reason = fmt.Sprintf("it reached the %d events an export may carry", b.maxEvents)
	case b.out.n >= b.maxBytes:
		b.reason = fmt.Sprintf("it reached the %d MiB an export may carry", b.maxBytes>>20)
	default:
		return false
	}
	b.stopped = steps
	return true
}

// note is the message an export cut by its budget ends with.
func (b *budget) note() string {
	return fmt.Sprintf("this export stops at step %d of the %d asked for: %s. Ask for less with an earlier step: ?step=%d or below",
		b.stopped, b.asked, b.reason, b.stopped)
}

// replayed replays a run up to step into the sink sink makes, with the configuration a
// live session uses (no end time, its event limit), so that an export numbers steps as
// the page does; b stops it between steps. A refused intervention (only a hand-made
// link has one) ends it where it stands. The run is returned where it stopped (nil if
// it could not start); sim.ErrStopped means b stopped it.
func replayed(b *budget, cfg sim.Config, ivs []sim.Intervention, step int, sink func(*sim.Encoder) sim.Sink) (*sim.Sim, error) {
	cfg.Until = 0
	cfg.MaxEvents = session.DefaultMaxEvents
	inner := sink(sim.NewEncoder(cfg.Spec, cfg.IDs))
	count := func(ev *sim.Event) { b.events++; inner(ev) }
	s, err := sim.ReplayWhile(cfg, ivs, step, count, func(s *sim.Sim) bool { return !b.spent(s.Steps()) })
	var ae *sim.ActionError
	if errors.As(err, &ae) {
		return s, nil
	}
	return s, err
}

// fail answers a replay that failed: a 400 until the first byte went out; after it the
// response is aborted, so a client never takes a cut file for a whole one.
func fail(w http.ResponseWriter, out *lazyHeader, err error) {
	if !out.started {
		http.Error(w, "this run cannot be replayed: "+err.Error(), http.StatusBadRequest)
		return
	}
	panic(http.ErrAbortHandler)
}

// lazyHeader sets the response's headers at its first write, and counts the bytes.
type lazyHeader struct {
	w       http.ResponseWriter
	set     func(http.Header)
	started bool
	n       int64
}

func (l *lazyHeader) Write(p []byte) (int, error) {
	if !l.started {
		l.started = true
		l.set(l.w.Header())
	}
	n, err := l.w.Write(p)
	l.n += int64(n)
	return n, err
}

// output is the response of an export of job j: its headers, set at the first byte.
func output(w http.ResponseWriter, r *http.Request, j job, contentType, suffix string) *lazyHeader {
	return &lazyHeader{w: w, set: func(h http.Header) {
		h.Set("Content-Type", contentType)
		h.Set("Cache-Control", j.cache)
		if r.URL.Query().Get("download") == "1" {
			h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-%s"`, j.name, suffix))
		}
	}}
}
