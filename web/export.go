package web

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/teach-dist/playground/runtime/session"
	"github.com/teach-dist/playground/runtime/sim"
)

// recipeOf finds the session named in the URL and asks it for its recipe, answering
// the request itself (404, 410) when it cannot.
func (s *Server) recipeOf(w http.ResponseWriter, r *http.Request) (session.Recipe, bool) {
	sess, ok := s.sessions.Get(chi.URLParam(r, "id"))
	if !ok {
		http.Error(w, "no live session with this id (it may have ended: reload the page)", http.StatusNotFound)
		return session.Recipe{}, false
	}
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	rec, err := sess.Recipe(ctx)
	if err != nil {
		http.Error(w, "the session has ended", http.StatusGone)
		return session.Recipe{}, false
	}
	return rec, true
}

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

// handleSessionTrace serves the session's timeline as trace v1 JSON Lines, by replay:
// up to its horizon, or up to ?step=. With ?download=1 it is a file to save.
func (s *Server) handleSessionTrace(w http.ResponseWriter, r *http.Request) {
	rec, ok := s.recipeOf(w, r)
	if !ok {
		return
	}
	step, err := stepParam(r, rec.Horizon, rec.Horizon)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
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
