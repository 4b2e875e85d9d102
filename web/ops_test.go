package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/internal/testwait"
	"github.com/teach-dist/playground/runtime/protocol"
	"github.com/teach-dist/playground/runtime/session"
	"github.com/teach-dist/playground/web/ops"
	"github.com/teach-dist/playground/web/ratelimit"
)

// lockedBuffer is a log sink safe for the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *lockedBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.b.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON: %s", line)
		}
		out = append(out, m)
	}
	return out
}

func find(lines []map[string]any, msg string) []map[string]any {
	var out []map[string]any
	for _, l := range lines {
		if l["msg"] == msg {
			out = append(out, l)
		}
	}
	return out
}

// serveDirect runs one request through the whole router on this goroutine, so that
// what it logs is written when it returns.
func serveDirect(s *Server, method, target, remote string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, nil)
	req.RemoteAddr = remote
	req.Host = "localhost" // httptest's example.com is not a name of the server
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	return rec
}

// metric reads one sample of /metrics ("name" or `name{label="v"}`).
func metric(t *testing.T, s *Server, name string) float64 {
	t.Helper()
	body := serveDirect(s, http.MethodGet, "/metrics", "127.0.0.1:1").Body.String()
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %q", name, v)
			}
			return f
		}
	}
	t.Fatalf("/metrics has no %s", name)
	return 0
}

// The request log has the method, route pattern, status, duration and client address
// of every request; sessions log their start and end at Info.
func TestRequestLogAndSessionLifeAreLogged(t *testing.T) {
	var buf lockedBuffer
	s := New(Options{Logger: slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if rec := serveDirect(s, http.MethodGet, "/play/bully?n=3", "192.0.2.7:5555"); rec.Code != http.StatusOK {
		t.Fatalf("play: %d", rec.Code)
	}
	serveDirect(s, http.MethodGet, "/nope", "192.0.2.8:5555")
	s.Close()
	lines := buf.lines(t)
	reqs := find(lines, "request")
	if len(reqs) != 2 {
		t.Fatalf("%d request lines: %v", len(reqs), lines)
	}
	want := []map[string]any{
		{"method": "GET", "route": "/play/{slug}", "status": float64(200), "client": "192.0.2.7", "level": "INFO"},
		{"method": "GET", "status": float64(404), "client": "192.0.2.8"},
	}
	for i, w := range want {
		for k, v := range w {
			if reqs[i][k] != v {
				t.Errorf("request %d: %s = %v, want %v (%v)", i, k, reqs[i][k], v, reqs[i])
			}
		}
		if _, ok := reqs[i]["duration"]; !ok {
			t.Errorf("request %d has no duration", i)
		}
	}
	start, end := find(lines, "session start"), find(lines, "session end")
	if len(start) != 1 || len(end) != 1 || start[0]["level"] != "INFO" || start[0]["algorithm"] != "bully" {
		t.Fatalf("session start %v, end %v", start, end)
	}
	if start[0]["session"] != end[0]["session"] || len(start[0]["session"].(string)) != 8 {
		t.Fatalf("the session is not named by a short hash: %v / %v", start[0]["session"], end[0]["session"])
	}
}

// /metrics counts what happens, with no label that names a session.
func TestMetricsCountSessionsEventsSocketsAndLimits(t *testing.T) {
	srv, ts := newTestServer(t, Options{MaxSessions: 1, Limits: ratelimit.Limits{Pages: slow(8)}})
	id := openSession(t, ts, "/play/ricart-agrawala?n=3")
	c := dial(t, ts, id)
	c.next("snapshot")
	c.send(`{"type":"act","do":"request","node":0}`)
	ev := c.next("events")
	for range 5 {
		c.send(`{"type":"step"}`)
		c.next("events", "state")
	}
	if p := get(t, browser(t), ts.URL+"/play/bully"); p.status != http.StatusServiceUnavailable {
		t.Fatalf("second run on a full server: %d", p.status)
	}
	for get(t, browser(t), ts.URL+"/").status != http.StatusTooManyRequests {
	}
	for _, tc := range []struct {
		name string
		min  float64
	}{
		{"playground_sessions", 1},
		{"playground_sessions_max", 1},
		{"playground_session_starts_total", 1},
		{`playground_websockets{socket="session"}`, 1},
		{`playground_capacity_refusals_total{cap="sessions"}`, 1},
		{`playground_rate_limited_total{limit="pages"}`, 1},
		{"playground_trace_events_total", float64(len(ev.Batches[0].Events))},
		{"playground_lectures", 0},
		{"playground_ready", 1},
		{`playground_http_requests_total{code="101",route="/ws/{id}"}`, 1},
		{`playground_http_requests_total{code="200",route="/play/{slug}"}`, 1},
		{"process_resident_memory_bytes", 1},
	} {
		if v := metric(t, srv, tc.name); v < tc.min {
			t.Errorf("%s = %v, want at least %v", tc.name, v, tc.min)
		}
	}
	body := serveDirect(srv, http.MethodGet, "/metrics", "127.0.0.1:1").Body.String()
	if strings.Contains(body, id) || strings.Contains(body, logID(id)) {
		t.Fatal("/metrics names a session")
	}
	if regexp.MustCompile(`route="/play/ricart-agrawala`).MatchString(body) {
		t.Fatal("/metrics labels requests by path, not by route pattern")
	}
}

// A panic in a handler fails that request with 500, is logged and counted; the server
// goes on. The log names the route, not the path: the path's session id stays out.
func TestHandlerPanicIsContained(t *testing.T) {
	var buf lockedBuffer
	s := New(Options{Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	defer s.Close()
	r := chi.NewRouter()
	r.Use(ops.Recoverer(s.opts.Logger, s.metrics))
	r.Get("/api/sessions/{id}/x", func(http.ResponseWriter, *http.Request) { panic("boom") })
	const id = "S3CR3T-SESSION-ID"
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/sessions/"+id+"/x", nil))
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("status %d", rec.Code)
	}
	if got := find(buf.lines(t), "a handler panicked; that request failed"); len(got) != 1 || got[0]["panic"] != "boom" || got[0]["route"] != "/api/sessions/{id}/x" {
		t.Fatalf("log: %v", buf.lines(t))
	}
	if strings.Contains(buf.String(), id) {
		t.Fatalf("the log holds the session id: %s", buf.String())
	}
	if v := metric(t, s, `playground_panics_total{where="http"}`); v != 1 {
		t.Fatalf("panics %v", v)
	}
	if rec := serveDirect(s, http.MethodGet, "/", "127.0.0.1:1"); rec.Code != http.StatusOK {
		t.Fatalf("after the panic: %d", rec.Code)
	}
}

// Shutdown begins with readiness going false and every WebSocket closed with 1001
// "server shutting down"; a socket opened after that is closed the same way.
func TestDrainTurnsReadinessOffAndClosesSocketsWith1001(t *testing.T) {
	srv, ts := newTestServer(t, Options{})
	c := browser(t)
	if p := get(t, c, ts.URL+"/readyz"); p.status != http.StatusOK || !strings.Contains(p.body, `"status":"ready"`) {
		t.Fatalf("readyz before: %d %s", p.status, p.body)
	}
	id := openSession(t, ts, "/play/bully?n=3")
	ws := dial(t, ts, id)
	ws.next("snapshot")
	srv.drain()
	if p := get(t, c, ts.URL+"/readyz"); p.status != http.StatusServiceUnavailable || !strings.Contains(p.body, "shutting down") {
		t.Fatalf("readyz while draining: %d %s", p.status, p.body)
	}
	if p := get(t, c, ts.URL+"/healthz"); p.status != http.StatusOK {
		t.Fatalf("healthz while draining: %d (liveness stays up)", p.status)
	}
	for _, w := range []*wsClient{ws, dial(t, ts, id)} {
		err := w.ended()
		var ce *websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != websocket.CloseGoingAway || ce.Text != protocol.CloseShuttingDown {
			t.Fatalf("close: %v, want 1001 %q", err, protocol.CloseShuttingDown)
		}
	}
}

// Shutdown stops the explorer's searches, the one running and the one waiting for its
// slot, each with an error line saying why: a search the server cannot finish must not
// hold the shutdown until its time limit (a search of a source runs in a sandbox
// worker that only its end kills).
func TestDrainStopsTheExplorersSearches(t *testing.T) {
	clientIP, err := ratelimit.ClientIP("X-Real-IP=127.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan string, 2)
	srv, ts := newTestServer(t, Options{ClientIP: clientIP, Explore: ExploreLimits{AtOnce: 1, Share: 1,
		Hold: func(ctx context.Context, algorithm string) error {
			started <- algorithm
			<-ctx.Done() // as long as a search may run
			return ctx.Err()
		}}})
	running := streamExplore(t, ts, openSession(t, ts, "/play/ricart-agrawala?n=3"), "192.0.2.1")
	testwait.Recv(t, "the first search holding the slot", started)
	waiting := streamExplore(t, ts, openSession(t, ts, "/play/bully?n=3"), "198.51.100.1")
	nextLine(t, waiting, "queued")
	srv.drain()
	for _, c := range []struct {
		name  string
		lines <-chan exploreLine
	}{{"the running search", running}, {"the waiting search", waiting}} {
		if l := nextLine(t, c.lines, "error", "result"); l.Type != "error" || !strings.Contains(l.Error, "shutting down") {
			t.Errorf("%s after the drain: %+v, want an error saying the server is shutting down", c.name, l)
		}
	}
}

// The readiness body tells a full server from a free one; a full server stays ready.
func TestReadyzAtTheSessionCapStaysReady(t *testing.T) {
	_, ts := newTestServer(t, Options{MaxSessions: 1})
	openSession(t, ts, "/play/bully")
	p := get(t, browser(t), ts.URL+"/readyz")
	if p.status != http.StatusOK || !strings.Contains(p.body, `"full":true`) {
		t.Fatalf("readyz at the cap: %d %s", p.status, p.body)
	}
}

// ListenAndServe: cancelling its context closes every WebSocket with 1001, waits for
// the handlers and returns nil; TestMain's goleak checks nothing is left running.
func TestListenAndServeShutsDownGracefully(t *testing.T) {
	srv := New(Options{ShutdownTimeout: 5 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe(ctx, "127.0.0.1:0", func(a string) { addrc <- a }) }()
	base := "http://" + <-addrc
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	var conns []*websocket.Conn
	for _, path := range []string{"/play/bully?n=3", "/play/ricart-agrawala?n=3", "/s/bully-best-case"} {
		resp, err := hc.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		id := sessionRE.FindStringSubmatch(string(b))[1]
		conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(base, "http")+"/ws/"+id, http.Header{"Origin": {base}})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"play"}`))
		conns = append(conns, conn)
	}
	cancel()
	for _, conn := range conns {
		_ = conn.SetReadDeadline(time.Now().Add(testwait.Limit))
		var err error
		for err == nil {
			_, _, err = conn.ReadMessage()
		}
		var ce *websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != websocket.CloseGoingAway || ce.Text != protocol.CloseShuttingDown {
			t.Fatalf("close: %v", err)
		}
	}
	if err := <-errc; err != nil {
		t.Fatalf("ListenAndServe: %v", err)
	}
	if srv.Ready() || srv.Sessions().Len() != 0 {
		t.Fatalf("after shutdown: ready %v, %d sessions", srv.Ready(), srv.Sessions().Len())
	}
	if _, err := srv.Sessions().Start(session.Setup{}); err == nil {
		t.Fatal("a session started after shutdown")
	}
}

// The logs hold a session's id and a presenter's token only as a hash (logID): a run's
// life (start, requests, socket, exports, lecture, end) logged at Debug names neither.
func TestLogsHoldNoSessionIDOrPresenterToken(t *testing.T) {
	var buf lockedBuffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	rig := startLecture(t, Options{Logger: log}, "/play/bully?n=3")
	rig.drive(t, steps(3)...)
	for _, path := range []string{"/api/sessions/" + rig.session + "/trace", "/api/sessions/" + rig.session + "/shiviz",
		"/lecture/present/" + rig.token, "/api/sessions/no-such-session/trace"} {
		get(t, browser(t), rig.ts.URL+path)
	}
	rig.srv.Close() // the sessions end, and say so in the log
	out := buf.String()
	if len(find(buf.lines(t), "session end")) == 0 || !strings.Contains(out, logID(rig.session)) {
		t.Fatalf("the log lacks the session's end under its hash:\n%s", out)
	}
	for what, secret := range map[string]string{"session id": rig.session, "presenter token": rig.token, "unknown id": "no-such-session"} {
		if strings.Contains(out, secret) {
			t.Errorf("the log holds a %s:\n%s", what, out)
		}
	}
}
