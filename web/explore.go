package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/teach-dist/playground/runtime/explore"
	"github.com/teach-dist/playground/scenarios"
)

// The Explore action (docs/protocol.md, "Explore"): POST /api/sessions/{id}/explore
// runs the exhaustive search on the page's current scenario and streams its progress
// and result as JSON lines. The search is bounded in states, memory and time; a
// session runs one at a time and the server a few at once; a client that goes away
// (closes the dialog, leaves the page) cancels it, because the search runs under the
// request's context.

// exploreLimits bound a search started from the browser; tests shrink them.
var exploreLimits = struct {
	MaxNodes  int
	MaxStates int64
	MaxMemory int64
	Timeout   time.Duration
	AtOnce    int           // searches on the whole server at once
	Progress  time.Duration // between progress lines
}{
	MaxNodes:  4,
	MaxStates: 3_000_000,
	MaxMemory: 256 << 20,
	Timeout:   20 * time.Second,
	AtOnce:    2,
	Progress:  250 * time.Millisecond,
}

// explorations tracks the searches running: one per session, a few in all.
type explorations struct {
	mu      sync.Mutex
	running map[string]bool
}

var exploring = explorations{running: map[string]bool{}}

func (e *explorations) start(session string) (ok bool, why string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.running[session]:
		return false, "an exploration of this run is already going on"
	case len(e.running) >= exploreLimits.AtOnce:
		return false, "the server is busy with other explorations; try again in a moment"
	}
	e.running[session] = true
	return true, ""
}

func (e *explorations) done(session string) {
	e.mu.Lock()
	delete(e.running, session)
	e.mu.Unlock()
}

// exploreLine is one line of the stream: "start", "progress", "result" or "error".
type exploreLine struct {
	Type string `json:"type"`

	// start
	Algorithm string `json:"algorithm,omitempty"`
	Nodes     int    `json:"nodes,omitempty"`
	Workload  string `json:"workload,omitempty"` // what was added to a scenario without one
	MaxStates int64  `json:"maxStates,omitempty"`
	Timeout   int    `json:"timeout,omitempty"` // seconds

	// progress
	States          int64   `json:"states,omitempty"`
	Depth           int     `json:"depth,omitempty"`
	StatesPerSecond float64 `json:"statesPerSecond,omitempty"`

	Result *explore.Result `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// exploreRoutes is registered outside the compressing group: each line must reach
// the page as soon as it is written.
func (s *Server) exploreRoutes(r chi.Router) {
	r.Post("/api/sessions/{id}/explore", s.handleExplore)
}

func (s *Server) handleExplore(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	w.Header().Set("Cache-Control", "no-store")
	rec, ok := s.recipeOf(w, r)
	if !ok {
		return
	}
	sc, err := scenarios.Parse(rec.Setup.Scenario)
	if err != nil {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"error": err.Error()})
		return
	}
	if n := len(rec.Setup.Config.IDs); n > exploreLimits.MaxNodes {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"error": fmt.Sprintf(
			"nodes: %d processes is too many to explore here (at most %d in the browser; the number of orders grows exponentially; use playground explore on the command line)", n, exploreLimits.MaxNodes)})
		return
	}
	sc, added, err := explore.DefaultWorkload(sc)
	if err != nil {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"error": err.Error()})
		return
	}
	if ok, why := exploring.start(id); !ok {
		w.Header().Set("Retry-After", "5")
		writeJSON(w, http.StatusConflict, map[string]string{"error": why})
		return
	}
	defer exploring.done(id)

	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	var mu sync.Mutex // progress comes from the search's goroutine
	send := func(l exploreLine) {
		mu.Lock()
		defer mu.Unlock()
		_ = enc.Encode(l) // a client gone away cancels the context; nothing to do here
		if flusher != nil {
			flusher.Flush()
		}
	}
	send(exploreLine{Type: "start", Algorithm: sc.Algorithm, Nodes: len(rec.Setup.Config.IDs), Workload: added,
		MaxStates: exploreLimits.MaxStates, Timeout: int(exploreLimits.Timeout / time.Second)})

	ctx, cancel := context.WithTimeout(r.Context(), exploreLimits.Timeout)
	defer cancel()
	res, err := explore.Explore(ctx, sc, explore.Options{
		MaxStates: exploreLimits.MaxStates, MaxMemory: exploreLimits.MaxMemory, ProgressEvery: exploreLimits.Progress,
		Progress: func(p explore.Progress) {
			send(exploreLine{Type: "progress", States: p.States, Depth: p.Depth, StatesPerSecond: p.StatesPerSecond})
		},
	})
	if err != nil {
		var ie *explore.InputError
		msg := err.Error()
		if !errors.As(err, &ie) {
			s.opts.Logger.Warn("explore", "session", id, "err", err)
		}
		s.obs.explorerRun("error")
		send(exploreLine{Type: "error", Error: msg})
		return
	}
	if res.Bound == explore.BoundCancelled {
		s.obs.explorerRun("cancelled")
		return // nobody is listening any more
	}
	s.obs.explorerRun(res.Result) // ok, violation or bounded
	send(exploreLine{Type: "result", Result: res})
}
