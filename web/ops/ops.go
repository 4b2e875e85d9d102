// Package ops is the server's operations side (docs/operations.md): liveness and
// readiness, Prometheus metrics, the request log, panics in handlers, and pprof on its
// own loopback listener.
package ops

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
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/gorilla/websocket"
)

// Counts is what /healthz and /readyz report of the sessions.
type Counts interface {
	Len() int // live sessions
	Max() int // the cap on them
}

// Health serves /healthz: the process answers, and how many sessions it holds.
func Health(sessions Counts) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"status": "ok", "sessions": sessions.Len(), "maxSessions": sessions.Max(),
		})
	}
}

// Ready serves /readyz: 200 while the server takes new work, 503 from the moment it
// starts shutting down. A server at its session cap stays ready: it still serves
// every run it has (pages, sockets, reloads), and a load balancer that took it out
// would cut those off too; the body says it is full for whoever wants to know.
func (m *Metrics) Ready(sessions Counts) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		ready := m.IsReady()
		status, word := http.StatusOK, "ready"
		if !ready {
			status, word = http.StatusServiceUnavailable, "shutting down"
		}
		w.WriteHeader(status)
		n, limit := sessions.Len(), sessions.Max()
		_ = json.NewEncoder(w).Encode(map[string]any{"status": word, "sessions": n, "maxSessions": limit, "full": n >= limit})
	}
}

// RequestLog logs every request once it is answered (method, route pattern, status,
// duration, client address) and counts it in m. Requests quiet reports (assets and
// probes) log at Debug; pages, API calls and sockets at Info.
func RequestLog(log *slog.Logger, m *Metrics, quiet func(*http.Request) bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
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
			route := routeOf(r)
			socket := strings.HasPrefix(r.URL.Path, "/ws/")
			m.request(route, status, d.Seconds(), socket)
			level := slog.LevelInfo
			if quiet(r) {
				level = slog.LevelDebug
			}
			log.LogAttrs(r.Context(), level, "request",
				slog.String("method", r.Method), slog.String("route", route), slog.Int("status", status),
				slog.Duration("duration", d), slog.String("client", middleware.GetClientIP(r.Context())))
		})
	}
}

// routeOf is the route pattern r matched ("/ws/{id}"), "unmatched" before or without
// one. Logs and metrics name requests by it, never by path: a path carries session ids
// and presenter tokens.
func routeOf(r *http.Request) string {
	if rc := chi.RouteContext(r.Context()); rc != nil {
		if p := rc.RoutePattern(); p != "" {
			return p
		}
	}
	return "unmatched"
}

// Recoverer turns a panic in a handler into a 500 for that request, logged with its
// stack and counted; the server carries on. http.ErrAbortHandler is net/http's own
// way to abort a response and passes through.
func Recoverer(log *slog.Logger, m *Metrics) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				v := recover()
				if v == nil {
					return
				}
				if v == http.ErrAbortHandler { //nolint:errorlint // net/http compares it so too
					panic(v)
				}
				m.Panicked("http")
				// The route pattern, not the path: a path carries session ids and
				// presenter tokens, and the logs hold only their hashes.
				log.Error("a handler panicked; that request failed", "method", r.Method, "route", routeOf(r),
					"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				if r.Header.Get("Connection") != "Upgrade" {
					w.WriteHeader(http.StatusInternalServerError)
				}
			}()
			next.ServeHTTP(w, r)
		})
	}
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
