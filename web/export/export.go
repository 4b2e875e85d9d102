// Package export serves what a run can be read as, by replay off the session's
// goroutine: trace v1 JSON Lines, ShiViz logs, the space-time diagram's timeline, the
// run's costs against the notes, and its share link. A run is a live session
// (/api/sessions/{id}/...), a lecture as its followers see it (/api/lectures/{code}/...)
// or a share link (/r/{code}/...).
//
// Exports are the server's most expensive requests (a replay that can write hundreds
// of megabytes), so each streams, is bounded in events, bytes and time (stream.go),
// and runs behind a gate (web/gate) that bounds how many run at once, in all and per
// client. A lecture's exports are computed once per presenter step and served to every
// follower from a cache (lecturecache.go).
package export

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/teach-dist/playground/internal/defaults"
	"github.com/teach-dist/playground/runtime/session"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/web/gate"
	"github.com/teach-dist/playground/web/runs"
)

// Options bound the exports. Zero values take the defaults.
type Options struct {
	Gate      gate.Limits // at once (server-wide, per client) and each one's time limit
	MaxEvents int         // events one export carries (default 1,000,000)
	MaxBytes  int64       // bytes one export writes (default 32 MiB)
	// LectureCache is the bytes of lectures' exports kept for their followers
	// (default 64 MiB); an export larger than it is computed for each request.
	LectureCache int64
	// Refused, if set, is told each export refused at the gate: "client" or "server".
	Refused func(which string)
	// Load, if set, is the charge of a Starlark load to r's client
	// (ratelimit.Limiter.LoadOf): a link whose source is not cached loads at its cost.
	Load func(r *http.Request) func() error
}

func (o Options) withDefaults() Options {
	defaults.Positive(&o.MaxEvents, 1_000_000)
	defaults.Positive(&o.MaxBytes, 32<<20)
	defaults.Positive(&o.LectureCache, 64<<20)
	return o
}

// API serves the exports of the runs src finds.
type API struct {
	src      runs.Source
	opts     Options
	gate     *gate.Gate
	lectures *lectureCache
	// Replays counts the exports computed (not served from the lecture cache); tests
	// read it.
	Replays func() int64
}

// New returns the exports of src's runs.
func New(src runs.Source, opts Options) *API {
	opts = opts.withDefaults()
	g := gate.New(opts.Gate)
	g.Refused = opts.Refused
	opts.Gate = g.Limits()
	a := &API{src: src, opts: opts, gate: g, lectures: newLectureCache(opts.LectureCache)}
	a.Replays = a.lectures.computed
	return a
}

// job is one export to serve: a run up to a step, and how its response is labelled.
type job struct {
	rec   session.Recipe // the run: its live configuration, interventions, step and horizon
	step  int            // the step the export stops at
	cache string         // Cache-Control
	name  string         // the downloaded file's name starts with it
}

// writer writes one kind of export of a job.
type writer func(a *API, w http.ResponseWriter, r *http.Request, j job)

// stepParam reads ?step= (default def), clamped to 0..max.
func stepParam(r *http.Request, def, max int) (int, error) {
	v := r.URL.Query().Get("step")
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("step: %q is not a step number (0 or more)", v)
	}
	return min(n, max), nil
}

// fromSource serves one kind of export of the session or lecture the URL names, up to
// ?step= clamped to its horizon; without ?step=, the step on screen if shown, else the
// horizon (stepped false: the export takes no ?step=). A lecture's goes through its
// cache; a session's through the gate.
func (a *API) fromSource(kind string, stepped, shown bool, write writer) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rec, ok := a.src.Recipe(w, r)
		if !ok {
			return
		}
		step := rec.Horizon
		if shown {
			step = rec.Step
		}
		if stepped {
			var err error
			if step, err = stepParam(r, step, rec.Horizon); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
		}
		j := job{rec: rec, step: step, cache: "no-store", name: rec.Config.Spec.Slug}
		if chi.URLParam(r, "code") != "" {
			// The step on the presenter's screen is the hall's: computed once for all, on
			// the server's share (a few per step and lecture). Another ?step= is this
			// follower's own.
			compute := a.gate.Shared(func(w http.ResponseWriter, r *http.Request) { write(a, w, r, j) })
			if r.URL.Query().Has("step") {
				compute = a.gated(write, j)
			}
			a.lectures.serve(w, r, kind, j, compute)
			return
		}
		a.gated(write, j)(w, r)
	}
}

// gated is write of j behind the gate.
func (a *API) gated(write writer, j job) http.HandlerFunc {
	return a.gate.Wrap(func(w http.ResponseWriter, r *http.Request) { write(a, w, r, j) })
}

// SessionTrace serves the session's timeline as trace v1 JSON Lines, by replay:
// up to its horizon, or up to ?step=. With ?download=1 it is a file to save.
func (a *API) SessionTrace(w http.ResponseWriter, r *http.Request) {
	a.fromSource("trace", true, false, (*API).trace)(w, r)
}

// SessionShiViz serves a live session's timeline as a ShiViz log, up to its
// horizon or ?step=.
func (a *API) SessionShiViz(w http.ResponseWriter, r *http.Request) {
	a.fromSource("shiviz", true, false, (*API).shiviz)(w, r)
}

// SessionCosts serves GET /api/sessions/{id}/metrics[?step=k]: the session's
// run measured against the notes up to step k (default: the step shown).
func (a *API) SessionCosts(w http.ResponseWriter, r *http.Request) {
	a.fromSource("costs", true, true, (*API).costs)(w, r)
}

// SessionTimeline serves GET /api/sessions/{id}/timeline (timeline.go).
func (a *API) SessionTimeline(w http.ResponseWriter, r *http.Request) {
	a.fromSource("timeline", false, false, (*API).timeline)(w, r)
}

// trace streams a run as trace v1 JSON Lines. Cut by its budget, its last line is
// {"seq":N,"t":T,"type":"cut","step":K,"detail":"…"} (docs/trace.md): where it
// stopped and how to ask for less.
func (a *API) trace(w http.ResponseWriter, r *http.Request, j job) {
	out := output(w, r, j, "application/x-ndjson; charset=utf-8", "trace.jsonl")
	bw := bufio.NewWriter(out)
	b := a.budget(r.Context(), out, j.step)
	var line []byte
	s, err := replayed(b, j.rec.Config, j.rec.Interventions, j.step, func(enc *sim.Encoder) sim.Sink {
		return func(ev *sim.Event) {
			line = enc.AppendLine(line[:0], ev)
			_, _ = bw.Write(line)
		}
	})
	if err == sim.ErrStopped {
		line = append(line[:0], `{"seq":`...)
		line = strconv.AppendInt(line, int64(b.events), 10)
		line = append(line, `,"t":`...)
		line = strconv.AppendInt(line, int64(s.Now()), 10)
		line = append(line, `,"type":"cut","step":`...)
		line = strconv.AppendInt(line, int64(b.stopped), 10)
		line = append(line, `,"detail":`...)
		line = strconv.AppendQuote(line, b.note())
		_, _ = bw.Write(append(line, "}\n"...))
		err = nil
	}
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		fail(w, out, err)
	}
}
