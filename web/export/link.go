package export

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/teach-dist/playground/runtime/session"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/scenarios"
	"github.com/teach-dist/playground/web/ratelimit"
	"github.com/teach-dist/playground/web/runs"
)

// Share links (docs/links.md): the API gives the code of a live session; exports
// work on a live session or a link.

// linkReply is what GET /api/sessions/{id}/link answers.
type linkReply struct {
	Path   string `json:"path"`   // "/r/<code>"
	Embed  string `json:"embed"`  // "/embed/r/<code>", for an iframe
	Length int    `json:"length"` // characters of path
	Step   int    `json:"step"`   // the step the link opens at
}

// SessionLink answers the share link of a live session's run at the step it
// shows.
func (a *API) SessionLink(w http.ResponseWriter, r *http.Request) {
	rec, ok := a.src.Recipe(w, r)
	if !ok {
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	l, err := scenarios.LinkFromRun(rec.Setup.Scenario, rec.Setup.Config, rec.Interventions, rec.Step)
	var path string
	if err == nil {
		path, err = l.Path()
	}
	if err != nil {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, linkReply{Path: path, Embed: "/embed" + path, Length: len(path), Step: rec.Step})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// linkExport decodes the link of an export URL and its ?step= (default: the link's
// timeline), answering 400 itself when it cannot.
func (a *API) linkExport(w http.ResponseWriter, r *http.Request) (runs.Link, int, bool) {
	var charge scenarios.LoadCharge
	if a.opts.Load != nil {
		charge = a.opts.Load(r)
	}
	lr, err := runs.DecodeLinkCharged(chi.URLParam(r, "code"), charge)
	if le := (*ratelimit.LoadError)(nil); errors.As(err, &le) {
		w.Header().Set("Retry-After", le.RetryAfter())
		http.Error(w, err.Error(), http.StatusTooManyRequests)
		return runs.Link{}, 0, false
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return runs.Link{}, 0, false
	}
	step, err := stepParam(r, lr.Horizon(), sim.MaxTime)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return runs.Link{}, 0, false
	}
	return lr, step, true
}

// fromLink serves one kind of export of the link the URL names, behind the gate: its
// time limit counts from before the link is decoded (a link's source loads then), so
// the whole export ends by it.
func (a *API) fromLink(write writer) http.HandlerFunc {
	return a.gate.Wrap(func(w http.ResponseWriter, r *http.Request) {
		lr, step, ok := a.linkExport(w, r)
		if !ok {
			return
		}
		rec := session.Recipe{Setup: lr.Setup, Config: lr.Setup.Config, Interventions: lr.IVs}
		// A code names one run forever.
		write(a, w, r, job{rec: rec, step: step, cache: "public, max-age=86400", name: lr.Link.Scenario.Algorithm})
	})
}

// LinkTrace serves a link's run as trace v1 JSON Lines, up to the link's
// timeline or ?step=.
func (a *API) LinkTrace(w http.ResponseWriter, r *http.Request) { a.fromLink((*API).trace)(w, r) }

// LinkShiViz serves a link's run as a ShiViz log.
func (a *API) LinkShiViz(w http.ResponseWriter, r *http.Request) { a.fromLink((*API).shiviz)(w, r) }
