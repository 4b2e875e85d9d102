// Package export serves what a run can be read as, by replay off the session's
// goroutine: trace v1 JSON Lines, ShiViz logs, the space-time diagram's timeline, the
// run's costs against the notes, and its share link. A run is a live session
// (/api/sessions/{id}/...), a lecture as its followers see it (/api/lectures/{code}/...)
// or a share link (/r/{code}/...).
package export

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/teach-dist/playground/runtime/session"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/web/runs"
)

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

// API serves the exports of the runs src finds.
type API struct{ src runs.Source }

// New returns the exports of src's runs.
func New(src runs.Source) *API { return &API{src: src} }

// recipeAt is the recipe of the run the URL names and the step ?step= asks for,
// clamped to its horizon; without ?step=, the step on screen if shown, else the
// horizon. It answers the request itself when it cannot.
func (a *API) recipeAt(w http.ResponseWriter, r *http.Request, shown bool) (session.Recipe, int, bool) {
	rec, ok := a.src.Recipe(w, r)
	if !ok {
		return rec, 0, false
	}
	def := rec.Horizon
	if shown {
		def = rec.Step
	}
	step, err := stepParam(r, def, rec.Horizon)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return rec, 0, false
	}
	return rec, step, true
}

// SessionTrace serves the session's timeline as trace v1 JSON Lines, by replay:
// up to its horizon, or up to ?step=. With ?download=1 it is a file to save.
func (a *API) SessionTrace(w http.ResponseWriter, r *http.Request) {
	rec, step, ok := a.recipeAt(w, r, false)
	if !ok {
		return
	}
	cfg := rec.Config
	var buf []byte
	if err := replayed(cfg, rec.Interventions, step, func(e *sim.Encoder) sim.Sink { return e.Lines(&buf) }); err != nil {
		http.Error(w, "replay: "+err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/x-ndjson; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	if r.URL.Query().Get("download") == "1" {
		h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-trace.jsonl"`, cfg.Spec.Slug))
	}
	_, _ = w.Write(buf)
}
