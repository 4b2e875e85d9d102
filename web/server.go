// Package web is the playground's HTTP server: its Options, the one route table
// (routes.go) and the handlers of the pages that start or resume a run. The rest is
// in subpackages, one job each: pages (templ views and view models), socket (the
// session WebSocket), lecturehttp (lecture mode), export (traces, ShiViz, timeline,
// costs, share links), runs (what a URL names, as a run), ops (health, readiness,
// Prometheus, pprof) and ratelimit (per-client rates).
package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/teach-dist/playground/internal/defaults"
	"github.com/teach-dist/playground/runtime/compare"
	"github.com/teach-dist/playground/runtime/lecture"
	"github.com/teach-dist/playground/runtime/sandbox"
	"github.com/teach-dist/playground/runtime/session"
	"github.com/teach-dist/playground/scenarios"
	"github.com/teach-dist/playground/web/export"
	"github.com/teach-dist/playground/web/lecturehttp"
	"github.com/teach-dist/playground/web/ops"
	"github.com/teach-dist/playground/web/pages"
	"github.com/teach-dist/playground/web/ratelimit"
	"github.com/teach-dist/playground/web/runs"
	"github.com/teach-dist/playground/web/socket"
)

// Options configure a Server. Zero values take the defaults.
type Options struct {
	MaxSessions int // live sessions at once (default 200)
	// SessionShare is how many sessions one client (an IPv4 address or an IPv6 /64)
	// keeps on a full server while another client wants a place (default half of
	// MaxSessions; runtime/session/share.go): unwatched sessions are evicted first,
	// then the least recently used of a client over its share.
	SessionShare int
	Idle         time.Duration // a session without viewers ends after this (default 10 min)
	// HibernateAfter: a run still this long keeps only its recipe until needed
	// (zero: never; the serve flag's default is session.DefaultHibernateAfter).
	HibernateAfter time.Duration
	Logger         *slog.Logger // default: discard

	// WebSocket timing and limits; tests shorten them.
	PongWait  time.Duration // a connection silent this long is dead (default 60 s)
	WriteWait time.Duration // deadline of every write (default 10 s)
	SendQueue int           // frames queued per connection before it counts as too slow (default 256)
	// SendQueueBytes bounds the bytes queued per connection before it counts as too
	// slow and is dropped (default 8 MiB: five snapshots of 128 processes).
	SendQueueBytes int
	ReadLimit      int64 // largest frame accepted from a client (default DefaultReadLimit)

	Lecture lecture.Options // lecture mode (runtime/lecture); zero values take its defaults
	// Broker carries lectures' frames to their followers (default: in memory, this
	// server only). A lecture.Cluster (runtime/lecture/natsbroker) lets followers join
	// on any of several servers: docs/deploy.md. The caller closes it after Close.
	Broker lecture.Broker

	// Production limits and operations (docs/operations.md, web/ratelimit, web/ops).
	MaxViewers int // WebSocket viewers of one session at once (default 64)
	// Limits are the per-client rates. The zero value limits nothing (tests and load
	// tools on loopback); `playground serve` applies ratelimit.DefaultLimits unless
	// told otherwise.
	Limits ratelimit.Limits
	// ClientIP finds each request's client address (ratelimit.ClientIP(--trusted-proxy));
	// default the TCP peer.
	ClientIP func(http.Handler) http.Handler
	// Compare configures the /compare page's engine (runtime/compare): its limits,
	// concurrency, cache and timeout.
	Compare compare.Options
	// Explore bounds the searches the Explore action starts (explore.go).
	Explore ExploreLimits
	// Exports bound the trace, ShiViz, timeline and costs exports (web/export): at once
	// in all and per client, each one's time, events and bytes, and the lectures' cache.
	Exports export.Options
	// PublicURL is the base of lectures' join links and QR codes, as students reach
	// this server (lecturehttp.ParsePublicURL): `serve --public-url`. Nil: the address
	// the presenter's browser used, and this machine's network addresses when that is
	// a loopback one (web/lecturehttp/joinurl.go).
	PublicURL *url.URL
	// Interfaces lists this machine's addresses for those join links (default
	// net.InterfaceAddrs).
	Interfaces func() ([]net.Addr, error)
	// Sandbox runs students' sources (runtime/sandbox): the server process never runs
	// one itself. Default: the process's pool, sandbox.Default().
	Sandbox *sandbox.Pool
	// ShutdownTimeout bounds a graceful shutdown: requests in progress and the closing
	// handshakes of WebSockets get this long (default 10 s).
	ShutdownTimeout time.Duration
	// AllowedHosts are names besides the server's own (an IP address, localhost, this
	// machine's host name, the host of PublicURL and of the listen address) that a
	// request's Host may give (hosts.go; `serve --allowed-hosts`); "*" allows any.
	AllowedHosts []string
	// BodyTimeout is how long a request's body may take to arrive (default
	// DefaultBodyTimeout; hosts.go).
	BodyTimeout time.Duration
	// CPU shares the processors between clients (runtime/session/cpu.go): the work
	// of each client's runs, exports, comparisons and searches is charged to it, and
	// the runs of a client over its share are slowed while the server is busy.
	// `serve --cpu-cores`; tests give a clock and a meter of their own.
	CPU session.CPUOptions
}

func (o Options) withDefaults() Options {
	defaults.Positive(&o.MaxSessions, 200)
	defaults.Positive(&o.Idle, 10*time.Minute)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	defaults.Positive(&o.PongWait, 60*time.Second)
	defaults.Positive(&o.WriteWait, 10*time.Second)
	defaults.Positive(&o.SendQueue, 256)
	defaults.Positive(&o.SendQueueBytes, DefaultSendQueueBytes)
	defaults.Positive(&o.ReadLimit, DefaultReadLimit)
	defaults.Positive(&o.MaxViewers, 64)
	if o.ClientIP == nil {
		o.ClientIP = middleware.ClientIPFromRemoteAddr
	}
	o.Explore = o.Explore.withDefaults()
	if o.Sandbox == nil {
		o.Sandbox = sandbox.Default()
	}
	defaults.Positive(&o.ShutdownTimeout, 10*time.Second)
	defaults.Positive(&o.BodyTimeout, DefaultBodyTimeout)
	return o
}

// DefaultSendQueueBytes is Options.SendQueueBytes unless set: room for five snapshots
// of the largest run (128 processes, about 1.5 MB each) behind a viewer's reading.
const DefaultSendQueueBytes = 8 << 20

// DefaultReadLimit is the largest frame a client may send: a reset frame carries a
// scenario whose source (a student's rules) may be starlarkalg's 64 KiB, and JSON may
// escape it to several times that; the rest of a scenario is small.
const DefaultReadLimit = 4*64<<10 + 64<<10

// Server serves the playground. Close it to end every session and connection.
type Server struct {
	opts      Options
	router    chi.Router
	sessions  *session.Manager
	lectures  *lecture.Registry
	pages     pages.Renderer
	metrics   *ops.Metrics       // /metrics and readiness
	limits    *ratelimit.Limiter // per-client rates
	sockets   *socket.Hub        // every WebSocket: made, counted, closed with 1001 on shutdown
	runs      runs.Source        // the run a URL names
	exports   *export.API
	lecture   *lecturehttp.Handlers
	compare   *compare.Engine           // the /compare page's runs and cache
	exploring explorations              // the Explore action's searches running
	hosts     atomic.Pointer[hostNames] // the names a request's Host may give (hosts.go)
	cpu       *session.CPU              // each client's work, for the fair share of the CPU
}

// New returns a server with its own session manager.
func New(opts Options) *Server {
	opts = opts.withDefaults()
	scenarios.UseSourceLoader(opts.Sandbox) // every source of every run goes to the sandbox
	cpu := session.NewCPU(opts.CPU)
	cmp := opts.Compare
	cmp.Charge = cpu.Charge // a comparison's runs are its client's work
	s := &Server{opts: opts, pages: pages.Renderer{Log: opts.Logger, Cat: pages.BuildCatalogue()},
		compare: compare.New(cmp), exploring: newExplorations(opts.Explore, opts.Sandbox), cpu: cpu}
	s.sessions = session.NewManager(opts.MaxSessions, s.sessionOptions())
	names := newHostNames(opts.AllowedHosts...)
	if opts.PublicURL != nil {
		names.add(opts.PublicURL.Hostname())
	}
	if h, err := os.Hostname(); err == nil {
		names.add(h)
		names.add(h + ".local")
	}
	s.hosts.Store(names)
	lec := opts.Lecture
	lec.OnEvict = func(code string) {
		s.metrics.LectureEvicted()
		opts.Logger.Info("lecture evicted for another client", "code", code) // codes are public
	}
	s.lectures = lecturehttp.NewRegistry(lec, opts.Broker)
	s.metrics = ops.NewMetrics(ops.Gauges{Sessions: s.sessions, Lectures: s.lectures.Live})
	s.limits = ratelimit.New(opts.Limits, ratelimit.Hooks{StartsSession: s.startsSession, Limited: s.metrics.RateLimited,
		Page: func(w http.ResponseWriter, r *http.Request, msg string) {
			s.pages.Message(w, r, http.StatusTooManyRequests, "Slow down", "Too many requests", msg)
		}})
	s.sockets = socket.NewHub(s.sessions, socket.Options{PongWait: opts.PongWait, WriteWait: opts.WriteWait,
		SendQueue: opts.SendQueue, SendBytes: opts.SendQueueBytes, ReadLimit: opts.ReadLimit, Logger: opts.Logger, Metrics: s.metrics, Limits: s.limits, Ready: s.Ready})
	s.runs = runs.Source{Sessions: s.sessions, Lectures: s.lectures}
	exp := opts.Exports
	exp.Refused = func(which string) {
		if which == "client" {
			s.metrics.RateLimited("exports")
		} else {
			s.metrics.Refused("exports")
		}
	}
	exp.Load = s.limits.LoadOf
	s.exports = export.New(s.runs, exp)
	s.lecture = lecturehttp.New(lecturehttp.Options{Sessions: s.sessions, Lectures: s.lectures, Hub: s.sockets,
		Pages: s.pages, Metrics: s.metrics, Refresh: opts.Lecture.Refresh,
		Share: opts.Lecture.ClientShare(), Guesses: opts.Limits.JoinGuesses, StartLink: s.startLink,
		PublicURL: opts.PublicURL, Interfaces: opts.Interfaces})
	s.router = s.routes()
	return s
}

// sessionOptions are the sessions' options with the server's hooks: logs and metrics.
// Session ids are capabilities, so logs name a session by a short hash of its id.
func (s *Server) sessionOptions() session.Options {
	log := s.opts.Logger
	return session.Options{Idle: s.opts.Idle, HibernateAfter: s.opts.HibernateAfter, MaxSubscribers: s.opts.MaxViewers,
		Share: s.opts.SessionShare,
		OnEvict: func(sess *session.Session, watched bool) {
			s.metrics.Evicted(watched)
			log.Info("session evicted for another client", "session", logID(sess.ID()), "watched", watched)
		},
		OnHibernate: func(sess *session.Session, resting bool) {
			s.metrics.Resting(resting)
			log.Debug("session rest", "session", logID(sess.ID()), "resting", resting)
		},
		OnPanic: func(alg string, v any, stack []byte) {
			s.metrics.Panicked("session")
			log.Error("a session's run panicked; that session ended", "algorithm", alg, "panic", fmt.Sprint(v), "stack", string(stack))
		},
		OnStart: func(sess *session.Session) {
			s.metrics.SessionStarted()
			log.Info("session start", "session", logID(sess.ID()), "algorithm", sess.Algorithm(), "sessions", s.sessions.Len())
		},
		OnEnd: func(sess *session.Session, lived time.Duration) {
			log.Info("session end", "session", logID(sess.ID()), "algorithm", sess.Algorithm(), "lived", lived.Round(time.Second))
		},
		OnEvents: func(n int) { s.metrics.EventsPublished(n) },
		CPU:      s.cpu,
	}
}

// chargeCPU charges the client of each request the time its handler took: exports,
// whose replays are the work (runtime/session/cpu.go).
func (s *Server) chargeCPU(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		defer func() { s.cpu.Charge(clientOf(r), time.Since(start)) }()
		next.ServeHTTP(w, r)
	})
}

// CPU is the server's account of each client's work.
func (s *Server) CPU() *session.CPU { return s.cpu }

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
	s.metrics.SetReady(false)
	s.lectures.Close() // before the sessions: followers are told the lecture ended
	s.sessions.Close()
	s.compare.Close()
	s.exploring.stop()
	s.sockets.Wait()
}

// Ready reports whether the server takes new work (false once shutdown began).
func (s *Server) Ready() bool { return s.metrics.IsReady() }

// drain begins the shutdown: readiness goes false, every WebSocket is closed with 1001
// "server shutting down" after what is queued for it (sockets opened from now on are
// closed at once), and the explorer's searches, waiting or running, stop with an
// error line saying so (a search cannot be resumed, and one of a source would hold
// the shutdown until its time limit). Other HTTP requests in progress are left to
// http.Server.Shutdown.
func (s *Server) drain() {
	s.metrics.SetReady(false)
	s.sockets.Drain()
	s.exploring.stop()
}

// ListenAndServe serves on addr until ctx ends, then shuts down: HTTP first, then the
// sessions and their connections.
func (s *Server) ListenAndServe(ctx context.Context, addr string, ready func(addr string)) error {
	hs := &http.Server{Addr: addr, Handler: s, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
	s.hosts.Store(s.hosts.Load().with(hostOf(addr)))
	return serve(ctx, hs, s, ready)
}
