package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/runtime/protocol"
)

// Operations (docs/operations.md): liveness and readiness, the request log, panics in
// handlers, the shutdown of WebSockets, and pprof on its own loopback listener.

// handleReady serves /readyz: 200 while the server takes new work, 503 from the
// moment it starts shutting down. A server at its session cap stays ready: it still
// serves every run it has (pages, sockets, reloads), and a load balancer that took it
// out would cut those off too; the body says it is full for whoever wants to know.
func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	ready := s.obs.ready.Load()
	status, word := http.StatusOK, "ready"
	if !ready {
		status, word = http.StatusServiceUnavailable, "shutting down"
	}
	w.WriteHeader(status)
	n, limit := s.sessions.Len(), s.sessions.Max()
	_ = json.NewEncoder(w).Encode(map[string]any{"status": word, "sessions": n, "maxSessions": limit, "full": n >= limit})
}

// Ready reports whether the server takes new work (false once shutdown began).
func (s *Server) Ready() bool { return s.obs.ready.Load() }

// drain begins the shutdown: readiness goes false, and every WebSocket is closed with
// 1001 "server shutting down" after what is queued for it (sockets opened from now on
// are closed at once). HTTP requests in progress are left to http.Server.Shutdown.
func (s *Server) drain() {
	s.obs.ready.Store(false)
	s.sockets.Lock()
	defer s.sockets.Unlock()
	s.sockets.draining = true
	for c := range s.sockets.open {
		c.closeWith(websocket.CloseGoingAway, protocol.CloseShuttingDown, true)
	}
}

// newClient makes the client of a WebSocket connection for this server: it counts in
// /metrics, obeys the per-connection rate limits (client.limited) and is closed with
// 1001 when the server shuts down. Every WebSocket handler makes its client here.
func (s *Server) newClient(r *http.Request, conn *websocket.Conn, queue int) *client {
	c := newClient(conn, queue, s.opts.PongWait/2, s.opts.WriteWait) // two pings per pong wait: one may be late
	c.obs = s.obs
	c.limit = s.connLimit(r)
	kind := "session"
	switch p := r.URL.Path; {
	case strings.HasPrefix(p, "/ws/lecture/"):
		kind = "follower"
	case strings.HasPrefix(p, "/ws/present/"):
		kind = "presenter"
	}
	closed := s.obs.socketOpened(kind)
	s.sockets.Lock()
	if s.sockets.draining {
		c.closeWith(websocket.CloseGoingAway, protocol.CloseShuttingDown, true)
	} else {
		s.sockets.open[c] = struct{}{}
	}
	s.sockets.Unlock()
	c.release = func() {
		s.sockets.Lock()
		delete(s.sockets.open, c)
		s.sockets.Unlock()
		closed()
	}
	return c
}

// sockets are the open WebSockets, for the shutdown to close.
type sockets struct {
	sync.Mutex
	open     map[*client]struct{}
	draining bool
}

// requestLog logs every request once it is answered (method, route pattern, status,
// duration, client address) and counts it in /metrics. Assets and probes log at Debug,
// pages, API calls and sockets at Info.
func (s *Server) requestLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		next.ServeHTTP(ww, r)
		d := time.Since(start)
		status := ww.Status()
		switch {
		case status != 0:
		case websocket.IsWebSocketUpgrade(r):
			status = http.StatusSwitchingProtocols // the upgrader wrote it on the hijacked connection
		default:
			status = http.StatusOK // nothing written: net/http answers 200
		}
		route := "unmatched"
		if rc := chi.RouteContext(r.Context()); rc != nil {
			if p := rc.RoutePattern(); p != "" {
				route = p
			}
		}
		socket := strings.HasPrefix(r.URL.Path, "/ws/")
		s.obs.request(route, status, d.Seconds(), socket)
		level := slog.LevelInfo
		if classify(r) == classFree {
			level = slog.LevelDebug
		}
		s.opts.Logger.LogAttrs(r.Context(), level, "request",
			slog.String("method", r.Method), slog.String("route", route), slog.Int("status", status),
			slog.Duration("duration", d), slog.String("client", middleware.GetClientIP(r.Context())))
	})
}

// recoverer turns a panic in a handler into a 500 for that request, logged with its
// stack and counted; the server carries on. http.ErrAbortHandler is net/http's own
// way to abort a response and passes through.
func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler { //nolint:errorlint // net/http compares it so too
				panic(v)
			}
			s.obs.panicked("http")
			s.opts.Logger.Error("a handler panicked; that request failed", "method", r.Method, "path", r.URL.Path,
				"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			if r.Header.Get("Connection") != "Upgrade" {
				w.WriteHeader(http.StatusInternalServerError)
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// PprofHandler serves net/http/pprof's pages under /debug/pprof/. Serve it only on a
// loopback listener (CheckLoopback): profiles show the process's memory.
func PprofHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// CheckLoopback accepts host:port only when host is a loopback address (127.0.0.0/8,
// ::1) or "localhost", which it turns into 127.0.0.1 so that the listener cannot land
// on another interface.
func CheckLoopback(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("%q is not host:port (e.g. 127.0.0.1:6060)", addr)
	}
	if host == "localhost" {
		return net.JoinHostPort("127.0.0.1", port), nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		what := host
		if host == "" {
			what = "every interface"
		}
		return "", fmt.Errorf("%s is not a loopback address: pprof shows the server's memory and must stay on 127.0.0.1 or [::1] (reach it with ssh -L)", what)
	}
	return addr, nil
}

// ServePprof serves pprof on addr (which must be loopback) until ctx ends.
func ServePprof(ctx context.Context, addr string, ready func(addr string)) error {
	addr, err := CheckLoopback(addr)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	if ready != nil {
		ready(ln.Addr().String())
	}
	hs := &http.Server{Handler: PprofHandler(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		_ = hs.Close() // a profile in progress: cut it
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
