// Package runs turns what a URL names (a scenario, a share link, a live session, a
// lecture) into the run the server serves: a session's setup, or the recipe that
// replays it. Pages, sockets and exports all start here.
package runs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/teach-dist/playground/runtime/lecture"
	"github.com/teach-dist/playground/runtime/session"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/scenarios"
)

// SetupOf turns a valid scenario into a session setup; name is its curated name, if
// it is one.
func SetupOf(sc *scenarios.Scenario, name string) (session.Setup, error) {
	cfg, err := sc.Config()
	if err != nil {
		return session.Setup{}, err
	}
	doc, err := json.Marshal(sc)
	if err != nil {
		return session.Setup{}, err
	}
	return session.Setup{Config: cfg, Scenario: doc, Name: name, Source: sc.Source != ""}, nil
}

// Link is a decoded share link ready to run: the setup a session takes, the recorded
// interventions and the step to show (docs/links.md).
type Link struct {
	Link  scenarios.Link
	Setup session.Setup
	IVs   []sim.Intervention
}

// DecodeLink decodes a code into a run, or returns the error to show.
func DecodeLink(code string) (Link, error) { return DecodeLinkCharged(code, nil) }

// DecodeLinkCharged is DecodeLink that asks charge before loading the link's source
// when it is not cached (scenarios.LoadCharge): the share link a client opens loads
// at its cost.
func DecodeLinkCharged(code string, charge scenarios.LoadCharge) (Link, error) {
	l, err := scenarios.DecodeLinkCharged(code, charge)
	if err != nil {
		return Link{}, err
	}
	cfg, ivs, err := l.Run()
	if err != nil {
		return Link{}, err
	}
	doc, err := json.Marshal(l.Scenario)
	if err != nil {
		return Link{}, err
	}
	return Link{Link: l, Setup: session.Setup{Config: cfg, Scenario: doc, Name: curatedName(doc), Source: l.Scenario.Source != ""}, IVs: ivs}, nil
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

// Horizon is how far a link's timeline reaches: its step, or its last intervention.
func (lr *Link) Horizon() int {
	h := lr.Link.Step
	if n := len(lr.IVs); n > 0 {
		h = max(h, lr.IVs[n-1].Step)
	}
	return h
}

// Source finds the live runs that URLs name.
type Source struct {
	Sessions *session.Manager
	Lectures *lecture.Registry
}

// Recipe finds the session ({id}) or the lecture ({code}) named in the URL and asks
// it for its recipe, answering the request itself (404, 410, 503) when it cannot.
func (s Source) Recipe(w http.ResponseWriter, r *http.Request) (session.Recipe, bool) {
	if code := chi.URLParam(r, "code"); code != "" {
		return s.lectureRecipe(w, r, code)
	}
	sess, ok := s.Sessions.Get(chi.URLParam(r, "id"))
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
func (s Source) lectureRecipe(w http.ResponseWriter, r *http.Request, code string) (session.Recipe, bool) {
	norm, valid := lecture.NormalizeCode(code)
	if !valid {
		http.Error(w, "no lecture has this code", http.StatusNotFound)
		return session.Recipe{}, false
	}
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	l, err := s.Lectures.Join(ctx, norm)
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
	lr, err := DecodeLink(strings.TrimPrefix(path, "/r/"))
	if err != nil {
		http.Error(w, "the lecture's run cannot be read: "+err.Error(), http.StatusInternalServerError)
		return session.Recipe{}, false
	}
	cfg := lr.Setup.Config
	cfg.Until, cfg.MaxEvents = 0, session.DefaultMaxEvents // as the live run
	return session.Recipe{Setup: lr.Setup, Config: cfg, Interventions: lr.IVs, Step: lr.Link.Step, Horizon: lr.Link.Step}, true
}
