package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/runtime/session"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/scenarios"
)

// Share links (docs/links.md): /r/{code} opens the run a code describes at its step;
// the API gives the code of a live session; exports work on either.

// linkRoutes registers the share-link, export and embed routes.
func (s *Server) linkRoutes(r chi.Router) {
	r.Get("/r/{code}", s.handleLink)
	r.Get("/r/{code}/trace.jsonl", s.handleLinkTrace)
	r.Get("/r/{code}/shiviz", s.handleLinkShiViz)
	r.Get("/api/sessions/{id}/link", s.handleSessionLink)
	r.Get("/api/sessions/{id}/shiviz", s.handleSessionShiViz)
	r.Get("/embed/r/{code}", s.embed(s.handleLink))
	r.Get("/embed/s/{name}", s.embed(s.handleCurated))
	r.Get("/embed/play/{slug}", s.embed(s.handlePlay))
}

// linkRun is a decoded link ready to run: the setup a session takes, the recorded
// interventions and the step to show.
type linkRun struct {
	link  scenarios.Link
	setup session.Setup
	ivs   []sim.Intervention
}

// decodeRun decodes a code into a run, or returns the error to show.
func decodeRun(code string) (linkRun, error) {
	l, err := scenarios.DecodeLink(code)
	if err != nil {
		return linkRun{}, err
	}
	cfg, ivs, err := l.Run()
	if err != nil {
		return linkRun{}, err
	}
	doc, err := json.Marshal(l.Scenario)
	if err != nil {
		return linkRun{}, err
	}
	return linkRun{link: l, setup: session.Setup{Config: cfg, Scenario: doc, Name: curatedName(doc)}, ivs: ivs}, nil
}

// curatedName is the name of the curated scenario this document is, if it is one
// unchanged: a link made on /s/{name} then reads as that scenario in the page.
func curatedName(doc []byte) string {
	for _, e := range scenarios.Curated() {
		if b, err := json.Marshal(e.Scenario); err == nil && bytes.Equal(b, doc) {
			return e.Name
		}
	}
	return ""
}

// horizon is how far a link's timeline reaches: its step, or its last intervention.
func (lr *linkRun) horizon() int {
	h := lr.link.Step
	if n := len(lr.ivs); n > 0 {
		h = max(h, lr.ivs[n-1].Step)
	}
	return h
}

// handleLink serves /r/{code}: the playground on the link's run, paused at its step.
func (s *Server) handleLink(w http.ResponseWriter, r *http.Request) {
	lr, err := decodeRun(chi.URLParam(r, "code"))
	if err != nil {
		s.linkError(w, r, err)
		return
	}
	sess, ok := s.linkSession(w, r, &lr)
	if !ok {
		return
	}
	sc := lr.link.Scenario
	p := buildPlay(sc.Spec(), sess.ID())
	p.Title, p.About, p.Current = sc.Title, sc.About, lr.setup.Name
	s.render(w, r, http.StatusOK, playPageView(p))
}

// linkSession resumes this browser's session for this very URL (a reload) or starts
// one from the link, as Server.session does for /play and /s.
func (s *Server) linkSession(w http.ResponseWriter, r *http.Request, lr *linkRun) (*session.Session, bool) {
	key := cookieName(r.URL)
	if c, err := r.Cookie(key); err == nil {
		if sess, ok := s.sessions.Get(c.Value); ok && sess.Algorithm() == lr.link.Scenario.Algorithm {
			sess.Touch()
			return sess, true
		}
	}
	sess, err := s.sessions.StartAt(lr.setup, lr.ivs, lr.link.Step)
	switch {
	case errors.Is(err, session.ErrFull):
		w.Header().Set("Retry-After", "60")
		s.obs.refused("sessions")
		s.render(w, r, http.StatusServiceUnavailable, messagePage("Server full", "The playground is full right now",
			fmt.Sprintf("Every place for a live run is taken (%d in all). Runs nobody watches are freed after a while; try again in a minute or two.", s.sessions.Max())))
		return nil, false
	case err != nil:
		s.linkError(w, r, fmt.Errorf("this run cannot be replayed here: %w", err))
		return nil, false
	}
	http.SetCookie(w, &http.Cookie{Name: key, Value: sess.ID(), Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil})
	return sess, true
}

// linkErrorView is the page for a link that cannot open: why, and the closest runs.
type linkErrorView struct {
	Heading string
	Reason  string
	Slug    string // the algorithm to offer at /play/{slug}, if this server has it
	Title   string
	Cat     catalogue
}

// linkError answers a bad link with 400 and a page saying why, offering the
// algorithm's default run when the link names one this server knows, and always the
// catalogue.
func (s *Server) linkError(w http.ResponseWriter, r *http.Request, err error) {
	v := linkErrorView{Heading: "This link cannot open a run", Reason: err.Error(), Cat: s.cat}
	var le *scenarios.LinkError
	if errors.As(err, &le) {
		switch le.Kind {
		case scenarios.LinkNewer:
			v.Heading = "This link comes from a newer playground"
		case scenarios.LinkTruncated:
			v.Heading = "This link is cut short"
		default:
			v.Heading = "This link was altered"
		}
		if spec, ok := algorithms.Lookup(le.Slug); ok {
			v.Slug, v.Title = spec.Slug, spec.Title
		}
	}
	s.render(w, r, http.StatusBadRequest, linkErrorPage(v))
}

// linkReply is what GET /api/sessions/{id}/link answers.
type linkReply struct {
	Path   string `json:"path"`   // "/r/<code>"
	Embed  string `json:"embed"`  // "/embed/r/<code>", for an iframe
	Length int    `json:"length"` // characters of path
	Step   int    `json:"step"`   // the step the link opens at
}

// handleSessionLink answers the share link of a live session's run at the step it
// shows.
func (s *Server) handleSessionLink(w http.ResponseWriter, r *http.Request) {
	rec, ok := s.recipeOf(w, r)
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
func linkExport(w http.ResponseWriter, r *http.Request) (linkRun, int, bool) {
	lr, err := decodeRun(chi.URLParam(r, "code"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return linkRun{}, 0, false
	}
	step, err := stepParam(r, lr.horizon(), sim.MaxTime)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return linkRun{}, 0, false
	}
	return lr, step, true
}

// handleLinkTrace serves a link's run as trace v1 JSON Lines, up to the link's
// timeline or ?step=.
func (s *Server) handleLinkTrace(w http.ResponseWriter, r *http.Request) {
	lr, step, ok := linkExport(w, r)
	if !ok {
		return
	}
	var buf []byte
	if err := replayed(lr.setup.Config, lr.ivs, step, func(e *sim.Encoder) sim.Sink { return e.Lines(&buf) }); err != nil {
		http.Error(w, "this run cannot be replayed: "+err.Error(), http.StatusBadRequest)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/x-ndjson; charset=utf-8")
	h.Set("Cache-Control", "public, max-age=86400") // a code names one run forever
	if r.URL.Query().Get("download") == "1" {
		h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-trace.jsonl"`, lr.link.Scenario.Algorithm))
	}
	_, _ = w.Write(buf)
}

// handleLinkShiViz serves a link's run as a ShiViz log.
func (s *Server) handleLinkShiViz(w http.ResponseWriter, r *http.Request) {
	lr, step, ok := linkExport(w, r)
	if !ok {
		return
	}
	s.serveShiViz(w, r, lr.setup.Config, lr.ivs, step, "public, max-age=86400")
}

// handleSessionShiViz serves a live session's timeline as a ShiViz log, up to its
// horizon or ?step=.
func (s *Server) handleSessionShiViz(w http.ResponseWriter, r *http.Request) {
	rec, ok := s.recipeOf(w, r)
	if !ok {
		return
	}
	step, err := stepParam(r, rec.Horizon, rec.Horizon)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.serveShiViz(w, r, rec.Setup.Config, rec.Interventions, step, "no-store")
}
