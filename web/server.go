// Package web is the playground's HTTP side: the chi router, the pages (templ), the
// embedded assets and the WebSocket that connects a page to its live session
// (docs/protocol.md).
package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/runtime/compare"
	"github.com/teach-dist/playground/runtime/lecture"
	"github.com/teach-dist/playground/runtime/session"
	"github.com/teach-dist/playground/scenarios"
	"github.com/teach-dist/playground/static"
)

// Options configure a Server. Zero values take the defaults.
type Options struct {
	MaxSessions int           // live sessions at once (default 200)
	Idle        time.Duration // a session without viewers ends after this (default 10 min)
	// HibernateAfter: a run still this long keeps only its recipe until needed
	// (zero: never; the serve flag's default is session.DefaultHibernateAfter).
	HibernateAfter time.Duration
	Logger *slog.Logger // default: discard

	// WebSocket timing and limits; tests shorten them.
	PongWait  time.Duration // a connection silent this long is dead (default 60 s)
	WriteWait time.Duration // deadline of every write (default 10 s)
	SendQueue int           // frames queued per connection before it counts as too slow (default 256)
	ReadLimit int64         // largest frame accepted from a client (default 64 KiB)

	Lecture lecture.Options // lecture mode (runtime/lecture); zero values take its defaults
	// Broker carries lectures' frames to their followers (default: in memory, this
	// server only). A lecture.Cluster (runtime/lecture/natsbroker) lets followers join
	// on any of several servers: docs/deploy.md. The caller closes it after Close.
	Broker lecture.Broker

	// Production limits and operations (docs/operations.md, web/ratelimit.go, web/ops.go).
	MaxViewers int // WebSocket viewers of one session at once (default 64)
	// Limits are the per-client rates. The zero value limits nothing (tests and load
	// tools on loopback); `playground serve` applies DefaultLimits unless told otherwise.
	Limits Limits
	// ClientIP finds each request's client address (ClientIP(--trusted-proxy)); default
	// the TCP peer.
	ClientIP func(http.Handler) http.Handler
	// Compare configures the /compare page's engine (runtime/compare): its limits,
	// concurrency, cache and timeout.
	Compare compare.Options
	// ShutdownTimeout bounds a graceful shutdown: requests in progress and the closing
	// handshakes of WebSockets get this long (default 10 s).
	ShutdownTimeout time.Duration
}

func (o Options) withDefaults() Options {
	if o.MaxSessions <= 0 {
		o.MaxSessions = 200
	}
	if o.Idle <= 0 {
		o.Idle = 10 * time.Minute
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.PongWait <= 0 {
		o.PongWait = 60 * time.Second
	}
	if o.WriteWait <= 0 {
		o.WriteWait = 10 * time.Second
	}
	if o.SendQueue <= 0 {
		o.SendQueue = 256
	}
	if o.ReadLimit <= 0 {
		o.ReadLimit = 64 << 10
	}
	if o.MaxViewers <= 0 {
		o.MaxViewers = 64
	}
	if o.ClientIP == nil {
		o.ClientIP = middleware.ClientIPFromRemoteAddr
	}
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = 10 * time.Second
	}
	return o
}

// Server serves the playground. Close it to end every session and connection.
type Server struct {
	opts     Options
	sessions *session.Manager
	router   chi.Router
	conns    sync.WaitGroup // WebSocket handlers, which outlive http.Server.Shutdown
	cat      catalogue
	lectures *lecture.Registry // lecture mode: web/lecture.go
	compare  *compare.Engine   // the /compare page's runs and cache

	obs     *observer // /metrics and readiness: metrics_prom.go, ops.go
	limits  *limits   // per-client rates: ratelimit.go
	sockets sockets   // open WebSockets, closed with 1001 on shutdown: ops.go
}

// New returns a server with its own session manager.
func New(opts Options) *Server {
	opts = opts.withDefaults()
	s := &Server{opts: opts, cat: buildCatalogue(), limits: newLimits(opts.Limits), compare: compare.New(opts.Compare)}
	s.sockets.open = make(map[*client]struct{})
	s.sessions = session.NewManager(opts.MaxSessions, s.sessionOptions())
	s.lectures = s.newLectures()
	s.obs = newObserver(s)
	s.router = s.routes()
	return s
}

// sessionOptions are the sessions' options with the server's hooks: logs and metrics.
// Session ids are capabilities, so logs name a session by a short hash of its id.
func (s *Server) sessionOptions() session.Options {
	log := s.opts.Logger
	return session.Options{Idle: s.opts.Idle, HibernateAfter: s.opts.HibernateAfter, MaxSubscribers: s.opts.MaxViewers,
		OnHibernate: func(sess *session.Session, resting bool) {
			s.obs.resting(resting)
			log.Debug("session rest", "session", logID(sess.ID()), "resting", resting)
		},
		OnPanic: func(alg string, v any, stack []byte) {
			s.obs.panicked("session")
			log.Error("a session's run panicked; that session ended", "algorithm", alg, "panic", fmt.Sprint(v), "stack", string(stack))
		},
		OnStart: func(sess *session.Session) {
			s.obs.sessionStarted()
			log.Info("session start", "session", logID(sess.ID()), "algorithm", sess.Algorithm(), "sessions", s.sessions.Len())
		},
		OnEnd: func(sess *session.Session, lived time.Duration) {
			log.Info("session end", "session", logID(sess.ID()), "algorithm", sess.Algorithm(), "lived", lived.Round(time.Second))
		},
		OnEvents: func(n int) { s.obs.eventsPublished(n) },
	}
}

// logID names a session in logs without giving its id away (the id drives the run).
func logID(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:4])
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.router.ServeHTTP(w, r) }

// Sessions is the session manager (tests and health checks read it).
func (s *Server) Sessions() *session.Manager { return s.sessions }

// Close ends every session, which closes their connections, and waits for the
// connection handlers to return.
func (s *Server) Close() {
	s.obs.ready.Store(false)
	s.lectures.Close() // before the sessions: followers are told the lecture ended
	s.sessions.Close()
	s.conns.Wait()
}

func (s *Server) routes() chi.Router {
	r := chi.NewRouter()
	r.Use(s.opts.ClientIP, s.requestLog, s.recoverer, securityHeaders, s.rateLimit) // ops.go, headers.go, ratelimit.go
	r.Get("/readyz", s.handleReady)
	r.Get("/metrics", s.obs.handler().ServeHTTP)
	r.Group(func(r chi.Router) {
		r.Use(middleware.Compress(5))
		r.Get("/", s.handleCatalogue)
		r.Get("/play/{slug}", s.handlePlay)
		r.Get("/s/{name}", s.handleCurated)
		r.Get("/healthz", s.handleHealth)
		r.Get("/api/sessions/{id}/trace", s.handleSessionTrace)
		r.Get("/api/sessions/{id}/metrics", s.handleSessionMetrics)
		r.Get("/compare", s.handleCompare)
		s.lectureRoutes(r)
		r.Get("/api/sessions/{id}/timeline", s.handleSessionTimeline)
		// A lecture's followers read the run as the presenter shows it (read-only).
		r.Get("/api/lectures/{code}/timeline", s.handleSessionTimeline)
		r.Get("/api/lectures/{code}/metrics", s.handleSessionMetrics)
		r.Get("/api/lectures/{code}/trace", s.handleSessionTrace)
		r.Get("/api/lectures/{code}/shiviz", s.handleSessionShiViz)
		s.linkRoutes(r) // share links, exports, embed mode: link.go
		r.Get("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
			// Every visit to a playground page starts a run: keep crawlers to the catalogue.
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = io.WriteString(w, "User-agent: *\nDisallow: /play/\nDisallow: /s/\nDisallow: /r/\nDisallow: /embed/\nDisallow: /ws/\nDisallow: /api/\n")
		})
		r.Handle(static.Prefix+"*", static.Handler())
		r.NotFound(func(w http.ResponseWriter, r *http.Request) {
			s.notFound(w, r, "There is no page at "+r.URL.Path+".")
		})
	})
	r.Get("/ws/{id}", s.handleWS)
	s.exploreRoutes(r) // the Explore action, streamed (outside compression): explore.go
	s.lectureSockets(r)
	return r
}

func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, c templ.Component) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store") // pages carry session ids
	w.WriteHeader(status)
	if err := c.Render(r.Context(), w); err != nil {
		s.opts.Logger.Warn("render", "path", r.URL.Path, "err", err)
	}
}

func (s *Server) handleCatalogue(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, http.StatusOK, cataloguePage(s.cat))
}

func (s *Server) notFound(w http.ResponseWriter, r *http.Request, what string) {
	s.render(w, r, http.StatusNotFound, notFoundPage(what, s.cat))
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"status": "ok", "sessions": s.sessions.Len(), "maxSessions": s.sessions.Max(),
	})
}

// handlePlay serves /play/{slug}; query parameters may set the run up (n, seed,
// delay as "2" or "1-3", fifo, loss, cs, hold).
func (s *Server) handlePlay(w http.ResponseWriter, r *http.Request) {
	slug := chi.URLParam(r, "slug")
	spec, ok := algorithms.Lookup(slug)
	if !ok {
		s.notFound(w, r, fmt.Sprintf("There is no algorithm called %q.", slug))
		return
	}
	doc, err := scenarioFromQuery(slug, r.URL.Query())
	if err != nil {
		s.render(w, r, http.StatusBadRequest, messagePage("Bad link", "This link does not describe a run", err.Error()))
		return
	}
	sc, err := scenarios.Parse(doc)
	if err != nil {
		s.render(w, r, http.StatusBadRequest, messagePage("Bad link", "This link does not describe a run", err.Error()))
		return
	}
	sess, ok := s.session(w, r, sc, "")
	if !ok {
		return
	}
	s.render(w, r, http.StatusOK, playPageView(buildPlay(spec, sess.ID())))
}

// handleCurated serves /s/{name}: the playground on a curated scenario.
func (s *Server) handleCurated(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "name")
	sc, ok := scenarios.Lookup(name)
	if !ok {
		s.notFound(w, r, fmt.Sprintf("There is no curated scenario called %q.", name))
		return
	}
	sess, ok := s.session(w, r, sc, name)
	if !ok {
		return
	}
	p := buildPlay(sc.Spec(), sess.ID())
	p.Title, p.About, p.Current = sc.Title, sc.About, name
	s.render(w, r, http.StatusOK, playPageView(p))
}

// session finds the session this browser had for this very URL (a reload resumes
// it) or starts one. The cookie is per URL so that two algorithms, or two setups of
// one, never share a run; two tabs on the same URL do, and both follow it.
func (s *Server) session(w http.ResponseWriter, r *http.Request, sc *scenarios.Scenario, name string) (*session.Session, bool) {
	key := cookieName(r.URL)
	if c, err := r.Cookie(key); err == nil {
		if sess, ok := s.sessions.Get(c.Value); ok && sess.Algorithm() == sc.Algorithm {
			sess.Touch()
			return sess, true
		}
	}
	setup, err := setupOf(sc, name)
	if err != nil {
		s.render(w, r, http.StatusBadRequest, messagePage("Bad scenario", "This scenario cannot run", err.Error()))
		return nil, false
	}
	sess, err := s.sessions.Start(setup)
	switch {
	case errors.Is(err, session.ErrFull):
		s.obs.refused("sessions")
		w.Header().Set("Retry-After", "60")
		s.render(w, r, http.StatusServiceUnavailable, messagePage("Server full", "The playground is full right now",
			fmt.Sprintf("Every place for a live run is taken (%d in all). Runs nobody watches are freed after a while; try again in a minute or two.", s.sessions.Max())))
		return nil, false
	case err != nil:
		s.render(w, r, http.StatusBadRequest, messagePage("Bad scenario", "This scenario cannot run", err.Error()))
		return nil, false
	}
	http.SetCookie(w, &http.Cookie{Name: key, Value: sess.ID(), Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil})
	return sess, true
}

func cookieName(u *url.URL) string {
	sum := sha256.Sum256([]byte(u.Path + "?" + u.Query().Encode()))
	return "pg_" + hex.EncodeToString(sum[:6])
}

// setupOf turns a valid scenario into a session setup.
func setupOf(sc *scenarios.Scenario, name string) (session.Setup, error) {
	cfg, err := sc.Config()
	if err != nil {
		return session.Setup{}, err
	}
	doc, err := json.Marshal(sc)
	if err != nil {
		return session.Setup{}, err
	}
	return session.Setup{Config: cfg, Scenario: doc, Name: name}, nil
}

// scenarioFromQuery builds a scenario v1 document from /play's query parameters.
func scenarioFromQuery(slug string, q url.Values) ([]byte, error) {
	doc := map[string]any{"version": 1, "algorithm": slug, "seed": 1}
	network := map[string]any{}
	for key, vals := range q {
		v := vals[len(vals)-1]
		switch key {
		case "n", "nodes":
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, fmt.Errorf("n: %q is not a number of processes", v)
			}
			doc["nodes"] = n
		case "seed":
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("seed: %q is not a number", v)
			}
			doc["seed"] = n
		case "cs":
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, fmt.Errorf("cs: %q is not a number", v)
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
				return nil, fmt.Errorf("loss: %q is not a probability", v)
			}
			network["loss"] = f
		default:
			return nil, fmt.Errorf("%s: unknown parameter (allowed: n, seed, cs, delay, fifo, loss, hold)", key)
		}
	}
	if len(network) > 0 {
		doc["network"] = network
	}
	return json.Marshal(doc)
}

// ListenAndServe serves on addr until ctx ends, then shuts down: HTTP first, then the
// sessions and their connections.
func (s *Server) ListenAndServe(ctx context.Context, addr string, ready func(addr string)) error {
	hs := &http.Server{Addr: addr, Handler: s, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
	return serve(ctx, hs, s, ready)
}
