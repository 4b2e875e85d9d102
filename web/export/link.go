package export

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/teach-dist/playground/runtime/session"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/scenarios"
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

// replayed is a run's trace up to step, with the configuration a live session uses
// (no end time, its event limit), so that an export numbers steps as the page does.
// A refused intervention (only a hand-made link has one) ends it where it stands.
func replayed(cfg sim.Config, ivs []sim.Intervention, step int, sink func(*sim.Encoder) sim.Sink) error {
	cfg.Until = 0
	cfg.MaxEvents = session.DefaultMaxEvents
	_, err := sim.Replay(cfg, ivs, step, sink(sim.NewEncoder(cfg.Spec, cfg.IDs)))
	var ae *sim.ActionError
	if errors.As(err, &ae) {
		return nil
	}
	return err
}

// linkExport decodes the link of an export URL and its ?step= (default: the link's
// timeline), answering 400 itself when it cannot.
func linkExport(w http.ResponseWriter, r *http.Request) (runs.Link, int, bool) {
	lr, err := runs.DecodeLink(chi.URLParam(r, "code"))
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

// LinkTrace serves a link's run as trace v1 JSON Lines, up to the link's
// timeline or ?step=.
func (a *API) LinkTrace(w http.ResponseWriter, r *http.Request) {
	lr, step, ok := linkExport(w, r)
	if !ok {
		return
	}
	var buf []byte
	if err := replayed(lr.Setup.Config, lr.IVs, step, func(e *sim.Encoder) sim.Sink { return e.Lines(&buf) }); err != nil {
		http.Error(w, "this run cannot be replayed: "+err.Error(), http.StatusBadRequest)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/x-ndjson; charset=utf-8")
	h.Set("Cache-Control", "public, max-age=86400") // a code names one run forever
	if r.URL.Query().Get("download") == "1" {
		h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-trace.jsonl"`, lr.Link.Scenario.Algorithm))
	}
	_, _ = w.Write(buf)
}

// LinkShiViz serves a link's run as a ShiViz log.
func (a *API) LinkShiViz(w http.ResponseWriter, r *http.Request) {
	lr, step, ok := linkExport(w, r)
	if !ok {
		return
	}
	serveShiViz(w, r, lr.Setup.Config, lr.IVs, step, "public, max-age=86400")
}

// SessionShiViz serves a live session's timeline as a ShiViz log, up to its
// horizon or ?step=.
func (a *API) SessionShiViz(w http.ResponseWriter, r *http.Request) {
	rec, step, ok := a.recipeAt(w, r, false)
	if !ok {
		return
	}
	serveShiViz(w, r, rec.Setup.Config, rec.Interventions, step, "no-store")
}
