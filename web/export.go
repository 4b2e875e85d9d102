package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/teach-dist/playground/runtime/lecture"
	"github.com/teach-dist/playground/runtime/session"
	"github.com/teach-dist/playground/runtime/sim"
)

// recipeOf finds the session (or the lecture) named in the URL and asks it for its
// recipe, answering the request itself (404, 410, 503) when it cannot.
func (s *Server) recipeOf(w http.ResponseWriter, r *http.Request) (session.Recipe, bool) {
	if code := chi.URLParam(r, "code"); code != "" {
		return s.lectureRecipe(w, r, code)
	}
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

// lectureRecipe is the run a lecture's followers see (/api/lectures/{code}/...): at
// the step on the presenter's screen and no further, so a follower's panels never
// show what a question asks them to predict. It comes from the lecture's share link,
// which any server of a cluster can get from the lecture's own (lecture.Followed.Fork).
func (s *Server) lectureRecipe(w http.ResponseWriter, r *http.Request, code string) (session.Recipe, bool) {
	norm, valid := lecture.NormalizeCode(code)
	if !valid {
		http.Error(w, "no lecture has this code", http.StatusNotFound)
		return session.Recipe{}, false
	}
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	l, err := s.lectures.Join(ctx, norm)
	switch {
	case errors.Is(err, lecture.ErrUnreachable):
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return session.Recipe{}, false
	case err != nil:
		http.Error(w, "no lecture has this code", http.StatusNotFound)
		return session.Recipe{}, false
	}
	path, err := l.Fork(ctx, -1)
	if ended, _, _ := l.Ended(); ended { // the run goes on after the lecture: Fork still works
		err = lecture.ErrEnded
	}
	switch {
	case errors.Is(err, lecture.ErrEnded):
		http.Error(w, "this lecture has ended; its run is at the link on the lecture's page", http.StatusGone)
		return session.Recipe{}, false
	case errors.Is(err, lecture.ErrUnreachable):
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return session.Recipe{}, false
	case err != nil:
		http.Error(w, "the lecture's run cannot be read: "+err.Error(), http.StatusInternalServerError)
		return session.Recipe{}, false
	}
	lr, err := decodeRun(strings.TrimPrefix(path, "/r/"))
	if err != nil {
		http.Error(w, "the lecture's run cannot be read: "+err.Error(), http.StatusInternalServerError)
		return session.Recipe{}, false
	}
	cfg := lr.setup.Config
	cfg.Until, cfg.MaxEvents = 0, session.DefaultMaxEvents // as the live run
	return session.Recipe{Setup: lr.setup, Config: cfg, Interventions: lr.ivs, Step: lr.link.Step, Horizon: lr.link.Step}, true
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
