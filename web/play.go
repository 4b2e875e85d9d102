package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/algorithms/starlarkalg"
	"github.com/teach-dist/playground/runtime/compare"
	"github.com/teach-dist/playground/runtime/session"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/scenarios"
	"github.com/teach-dist/playground/web/pages"
	"github.com/teach-dist/playground/web/ratelimit"
	"github.com/teach-dist/playground/web/runs"
)

// The pages that start or resume a run: /play/{slug}, /s/{name}, /r/{code} (and their
// /embed/ forms, embed.go), the catalogue and the compare page. A visit starts a
// session unless this browser has one live for this very URL.

func (s *Server) handleCatalogue(w http.ResponseWriter, r *http.Request) {
	s.pages.Render(w, r, http.StatusOK, pages.CataloguePage(s.pages.Cat))
}

// badRun answers a URL that does not describe a run it can start.
func (s *Server) badRun(w http.ResponseWriter, r *http.Request, title, heading string, err error) {
	s.pages.Message(w, r, http.StatusBadRequest, title, heading, err.Error())
}

// lookup finds what a page's URL names, or answers 404 saying there is no what called
// name there.
func lookup[T any](s *Server, w http.ResponseWriter, r *http.Request, what, name string, find func(string) (T, bool)) (T, bool) {
	v, ok := find(name)
	if !ok {
		s.pages.NotFound(w, r, fmt.Sprintf("There is no %s called %q.", what, name))
	}
	return v, ok
}

// handlePlay serves /play/{slug}; query parameters may set the run up (n, seed,
// delay as "2" or "1-3", fifo, loss, cs, hold, and p.<name> for each of the
// algorithm's params).
func (s *Server) handlePlay(w http.ResponseWriter, r *http.Request) {
	slug := chi.URLParam(r, "slug")
	spec, ok := lookup(s, w, r, "algorithm", slug, algorithms.Lookup)
	if !ok {
		return
	}
	doc, err := scenarioFromQuery(slug, r.URL.Query())
	var sc *scenarios.Scenario
	if err == nil {
		sc, err = scenarios.Parse(doc)
	}
	if err != nil {
		s.badRun(w, r, "Bad link", "This link does not describe a run", err)
		return
	}
	sess, ok := s.scenarioSession(w, r, sc, "")
	if !ok {
		return
	}
	if sc.Source != "" {
		spec = sc.Spec() // the run's own rules, title and name (new=1)
	}
	p := pages.BuildPlay(spec, sess.ID())
	p.Explore = s.opts.Explore.page()
	s.pages.Render(w, r, http.StatusOK, pages.PlayPage(p))
}

// handleCurated serves /s/{name}: the playground on a curated scenario.
func (s *Server) handleCurated(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "name")
	sc, ok := lookup(s, w, r, "curated scenario", name, scenarios.Lookup)
	if !ok {
		return
	}
	sess, ok := s.scenarioSession(w, r, sc, name)
	if !ok {
		return
	}
	s.renderRun(w, r, sc, name, sess)
}

// renderRun serves the playground page of sess, a run of sc: a curated scenario's
// (name) or a share link's, with its title and paragraph.
func (s *Server) renderRun(w http.ResponseWriter, r *http.Request, sc *scenarios.Scenario, name string, sess *session.Session) {
	p := pages.BuildPlay(sc.Spec(), sess.ID())
	p.Title, p.About, p.Current = sc.Title, sc.About, name
	p.Explore = s.opts.Explore.page()
	s.pages.Render(w, r, http.StatusOK, pages.PlayPage(p))
}

// handleLink serves /r/{code}: the playground on the link's run, paused at its step.
func (s *Server) handleLink(w http.ResponseWriter, r *http.Request) {
	lr, err := runs.DecodeLinkCharged(chi.URLParam(r, "code"), s.limits.LoadOf(r))
	if err != nil {
		s.linkError(w, r, err)
		return
	}
	fresh := freshAsked(r)
	sess, ok := s.resume(r, lr.Link.Scenario.Algorithm)
	if !ok || fresh {
		if sess, ok = s.startLinkRun(w, r, r, lr, nil); !ok {
			return
		}
		if fresh {
			http.Redirect(w, r, withoutFresh(r.URL), http.StatusSeeOther)
			return
		}
	}
	s.renderRun(w, r, lr.Link.Scenario, lr.Setup.Name, sess)
}

// startLink starts the run of the share link at path (a lecture's fork) for this
// browser, bound to b, and gives it the cookie the link's page (handleLink) resumes
// it with: the link stays the plain share link, the session behind it knows its
// lecture. It answers the request itself when it cannot (false).
func (s *Server) startLink(w http.ResponseWriter, r *http.Request, path string, b session.Bound) bool {
	u, err := url.Parse(path)
	if err != nil || !strings.HasPrefix(u.Path, "/r/") {
		s.pages.Message(w, r, http.StatusInternalServerError, "Fork", "This run cannot be forked", fmt.Sprintf("%q is not a share link", path))
		return false
	}
	lr, err := runs.DecodeLinkCharged(strings.TrimPrefix(u.Path, "/r/"), s.limits.LoadOf(r))
	if err != nil {
		s.linkError(w, r, err)
		return false
	}
	at := r.Clone(r.Context())
	at.URL = u // the cookie is the link page's
	_, ok := s.startLinkRun(w, r, at, lr, b)
	return ok
}

// startLinkRun starts the run of a decoded link, bound to b if not nil, and gives
// this browser the cookie of page's URL for it; it answers r itself when it cannot.
func (s *Server) startLinkRun(w http.ResponseWriter, r, page *http.Request, lr runs.Link, b session.Bound) (*session.Session, bool) {
	// The replay is bounded as an export is (the gate's deadline), and stops when the
	// client goes away: a source's steps each cost a call to a sandbox worker.
	ctx, cancel := context.WithTimeout(r.Context(), s.linkReplayTimeout())
	defer cancel()
	sess, err := s.sessions.StartAtWithin(ctx, clientOf(r), lr.Setup, lr.IVs, lr.Link.Step)
	if err == nil && b != nil {
		sess.Bind(b) // before the page can connect: its first step is already held
	}
	sess, ok := s.started(w, page, sess, err)
	if !ok && !errors.Is(err, session.ErrFull) {
		s.linkError(w, r, fmt.Errorf("this run cannot be replayed here: %w", err))
	}
	return sess, ok
}

// scenarioSession resumes this browser's session for this URL or starts one on sc. A
// URL with ?fresh=1 (the catalogue's links and the page's own) starts one whatever
// this browser has, and is answered by a redirect to the URL without it: the page
// then resumes the run it started on a reload (false: the request is answered).
func (s *Server) scenarioSession(w http.ResponseWriter, r *http.Request, sc *scenarios.Scenario, name string) (*session.Session, bool) {
	if freshAsked(r) {
		if _, ok := s.startScenario(w, r, sc, name); ok {
			http.Redirect(w, r, withoutFresh(r.URL), http.StatusSeeOther)
		}
		return nil, false
	}
	if sess, ok := s.resume(r, sc.Algorithm); ok {
		return sess, true
	}
	return s.startScenario(w, r, sc, name)
}

// freshParam asks a /play, /s/ or /r/ page for a fresh run rather than the one this
// browser had at that URL ("Opening an algorithm again resumes the old run, at its last
// step, where Play does nothing", as a teacher found it).
const freshParam = "fresh"

func freshAsked(r *http.Request) bool {
	v, ok := r.URL.Query()[freshParam]
	return ok && (len(v) == 0 || v[len(v)-1] != "0")
}

// withoutFresh is u's path and query without the fresh parameter: the address the
// fresh run lives at, which its cookie is for.
func withoutFresh(u *url.URL) string {
	q := u.Query()
	q.Del(freshParam)
	if len(q) == 0 {
		return u.Path
	}
	return u.Path + "?" + q.Encode()
}

// startScenario starts a session on sc for this browser's URL.
func (s *Server) startScenario(w http.ResponseWriter, r *http.Request, sc *scenarios.Scenario, name string) (*session.Session, bool) {
	setup, err := runs.SetupOf(sc, name)
	if err != nil {
		s.badRun(w, r, "Bad scenario", "This scenario cannot run", err)
		return nil, false
	}
	sess, err := s.sessions.StartFor(clientOf(r), setup)
	sess, ok := s.started(w, r, sess, err)
	if !ok && !errors.Is(err, session.ErrFull) {
		s.badRun(w, r, "Bad scenario", "This scenario cannot run", err)
	}
	return sess, ok
}

// resume finds the session this browser had for this very URL (a reload resumes it,
// or revives it if it was evicted).
// The cookie is per URL so that two algorithms, or two setups of one, never share a
// run; two tabs on the same URL do, and both follow it.
func (s *Server) resume(r *http.Request, algorithm string) (*session.Session, bool) {
	c, err := r.Cookie(cookieName(r.URL))
	if err != nil {
		return nil, false
	}
	sess, ok := s.sessions.Get(c.Value)
	if !ok {
		// Evicted to make room for another client while nobody watched it: rebuilt
		// from its recipe, at its step, under the same id.
		sess, ok = s.sessions.Revive(clientOf(r), c.Value)
	}
	if !ok || sess.Algorithm() != algorithm {
		return nil, false
	}
	sess.Touch()
	return sess, true
}

// started gives this browser the cookie of a session just started for this URL. When
// the start failed it answers a full server itself (503) and leaves any other error
// to the caller.
func (s *Server) started(w http.ResponseWriter, r *http.Request, sess *session.Session, err error) (*session.Session, bool) {
	switch {
	case errors.Is(err, session.ErrFull):
		s.metrics.Refused("sessions")
		w.Header().Set("Retry-After", "60")
		s.pages.Message(w, r, http.StatusServiceUnavailable, "Server full", "The playground is full right now",
			fmt.Sprintf("Every place for a live run is taken (%d in all), each watched, and your network already holds its share. Runs nobody watches are freed after a while; try again in a minute or two.", s.sessions.Max()))
		return nil, false
	case err != nil:
		return nil, false
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName(r.URL), Value: sess.ID(), Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: ratelimit.HTTPS(r)})
	return sess, true
}

// clientOf is the key r's sessions count against in the fair shares of the session
// cap: its IPv4 address or IPv6 /64 (ratelimit.ClientOf).
func clientOf(r *http.Request) string { return ratelimit.ClientOfRequest(r).String() }

// cookieName names the cookie of the run this browser has at u; ?fresh is not part of
// the address (a fresh run's cookie is the one its page then resumes with).
func cookieName(u *url.URL) string {
	q := u.Query()
	q.Del(freshParam)
	sum := sha256.Sum256([]byte(u.Path + "?" + q.Encode()))
	return "pg_" + hex.EncodeToString(sum[:6])
}

// startsSession reports whether serving r may start a live run (the rate limiter
// charges it to the Sessions rate): a playground page without this browser's cookie
// of a live run for the very same URL (a reload resumes it and costs only a page), or
// a lecture start.
func (s *Server) startsSession(r *http.Request) bool {
	p := r.URL.Path
	if r.Method == http.MethodPost && p == "/lecture" {
		return true
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	if strings.HasPrefix(p, "/l/") && strings.HasSuffix(p, "/fork") {
		return true // a lecture's fork starts its session itself (startLink)
	}
	p = strings.TrimPrefix(p, "/embed")
	if !strings.HasPrefix(p, "/play/") && !strings.HasPrefix(p, "/s/") && !strings.HasPrefix(p, "/r/") {
		return false
	}
	if freshAsked(r) {
		return true
	}
	if c, err := r.Cookie(cookieName(r.URL)); err == nil {
		if _, live := s.sessions.Get(c.Value); live {
			return false
		}
	}
	return true
}

// linkError answers a bad link with 400 and a page saying why, offering the
// algorithm's default run when the link names one this server knows, and always the
// catalogue.
func (s *Server) linkError(w http.ResponseWriter, r *http.Request, err error) {
	v := pages.LinkErrorView{Heading: "This link cannot open a run", Reason: err.Error(), Cat: s.pages.Cat}
	if loadErr := (*ratelimit.LoadError)(nil); errors.As(err, &loadErr) {
		// Over the client's loads: the link is fine, the network must wait.
		v.Heading = "Too many different rules at once"
		w.Header().Set("Retry-After", loadErr.RetryAfter())
		s.pages.Render(w, r, http.StatusTooManyRequests, pages.LinkErrorPage(v))
		return
	}
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
	s.pages.Render(w, r, http.StatusBadRequest, pages.LinkErrorPage(v))
}

// handleCompare serves /compare.
func (s *Server) handleCompare(w http.ResponseWriter, r *http.Request) {
	cq, perr := compare.ParseQuery(r.URL.Query(), s.compare.Limits())
	form := pages.NewCompareForm(r.URL.Query(), cq, s.compare.Limits())
	if perr != nil {
		form.Error = perr
		s.pages.Render(w, r, http.StatusBadRequest, pages.ComparePage(pages.Compare{Form: form}))
		return
	}
	// A comparison that must wait for a slot answers at once with its place in the
	// fair queue and reloads itself (Refresh); one running is waited for.
	var res *compare.Result
	var err error
	for {
		st := s.compare.Submit(r.Context(), clientOf(r), cq, time.Second)
		if st.Result != nil || st.Err != nil {
			res, err = st.Result, st.Err
			break
		}
		if st.Position > 0 {
			w.Header().Set("Refresh", "3")
			s.pages.Render(w, r, http.StatusAccepted, pages.ComparePage(pages.Compare{Form: form,
				Waiting: fmt.Sprintf("The server is busy with other comparisons: yours is number %d in the queue. This page shows it when it is done.", st.Position)}))
			return
		}
	}
	if err != nil {
		if r.Context().Err() != nil {
			return // the visitor left
		}
		if errors.Is(err, compare.ErrQueueFull) {
			s.metrics.Refused("compare")
			w.Header().Set("Retry-After", "30")
			form.Error = &compare.ParamError{Param: "n", Reason: "your network already has comparisons waiting for the server; this one can start when they are done"}
			s.pages.Render(w, r, http.StatusTooManyRequests, pages.ComparePage(pages.Compare{Form: form}))
			return
		}
		w.Header().Set("Retry-After", "30")
		form.Error = &compare.ParamError{Param: "n", Reason: fmt.Sprintf("the runs took longer than %s (%v): choose fewer sizes, seeds or algorithms", s.compare.Timeout(), err)}
		s.pages.Render(w, r, http.StatusServiceUnavailable, pages.ComparePage(pages.Compare{Form: form}))
		return
	}
	s.pages.Render(w, r, http.StatusOK, pages.ComparePage(pages.BuildCompare(form, res)))
}

// scenarioFromQuery builds a scenario v1 document from /play's query parameters.
func scenarioFromQuery(slug string, q url.Values) ([]byte, error) {
	spec, ok := algorithms.Lookup(slug)
	if !ok {
		return nil, fmt.Errorf("algorithm: %q is not an algorithm", slug)
	}
	doc := map[string]any{"version": scenarios.Version, "algorithm": slug, "seed": 1}
	network := map[string]any{}
	params := map[string]json.RawMessage{}
	for key, vals := range q {
		if key == freshParam {
			continue // which run, not how it is set up
		}
		v := vals[len(vals)-1]
		if key == "new" {
			// An algorithm written from scratch: the family's skeleton runs on this page.
			if b, err := strconv.ParseBool(v); err != nil || !b {
				return nil, fmt.Errorf("new: %q is not 1 (start from the skeleton of an algorithm of your own)", v)
			}
			src, _ := starlarkalg.Skeleton(spec.Family)
			doc["source"] = src
			continue
		}
		if strings.HasPrefix(key, paramPrefix) {
			name, raw, err := paramFromQuery(spec, key, v)
			if err != nil {
				return nil, err
			}
			params[name] = raw
			continue
		}
		switch key {
		case "n", "nodes":
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, fmt.Errorf("n: %q is not a number of processes: write a whole number from %d to %d", v, sim.MinNodes, sim.MaxNodes)
			}
			doc["nodes"] = n
		case "seed":
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("seed: %q is not a seed: write a whole number from 0 to %d", v, uint64(math.MaxUint64))
			}
			doc["seed"] = n
		case "cs":
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, fmt.Errorf("cs: %q is not a time in the CS: write a whole number of time units, 0 or more", v)
			}
			doc["cs"] = n
		case "delay":
			lo, hi, found := strings.Cut(v, "-")
			if !found {
				hi = lo
			}
			a, err1 := strconv.Atoi(lo)
			b, err2 := strconv.Atoi(hi)
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("delay: %q is not a delay (write 2 or 1-3)", v)
			}
			network["delay"] = []int{a, b}
		case "fifo", "hold":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %q is not true or false", key, v)
			}
			network[key] = b
		case "loss":
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, fmt.Errorf("loss: %q is not a probability: write a number from 0 to 1", v)
			}
			network["loss"] = f
		default:
			return nil, fmt.Errorf("%s: unknown parameter (allowed: n, seed, cs, delay, fifo, loss, hold, new, and p.<param> for the algorithm's params)", key)
		}
	}
	if len(network) > 0 {
		doc["network"] = network
	}
	if len(params) > 0 {
		doc["params"] = params
	}
	return json.Marshal(doc)
}

// linkReplayTimeout is how long opening a share link may replay its run: an export's
// deadline (--export-timeout).
func (s *Server) linkReplayTimeout() time.Duration {
	if t := s.opts.Exports.Gate.Timeout; t > 0 {
		return t
	}
	return 30 * time.Second
}
