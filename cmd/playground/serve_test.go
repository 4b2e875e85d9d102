package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"go.uber.org/goleak"

	"github.com/teach-dist/playground/internal/testwait"
)

// lineWriter is a goroutine-safe sink that reports each line it is written.
type lineWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	lines chan string
}

func newLineWriter() *lineWriter { return &lineWriter{lines: make(chan string, 256)} }

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for {
		line, err := w.buf.ReadString('\n')
		if err != nil {
			w.buf.WriteString(line) // incomplete: keep it for the next write
			return len(p), nil
		}
		select {
		case w.lines <- strings.TrimSpace(line):
		default:
		}
	}
}

// await returns the first submatch of re in the lines written, waiting for it.
func (w *lineWriter) await(t *testing.T, re *regexp.Regexp) string {
	t.Helper()
	timeout := time.After(testwait.Limit) // a hang becomes a failure, not a timed assertion
	for {
		select {
		case line := <-w.lines:
			if m := re.FindStringSubmatch(line); m != nil {
				return m[1]
			}
		case <-timeout:
			t.Fatalf("never wrote a line matching %s", re)
		}
	}
}

var (
	servingRE = regexp.MustCompile(`serving on (http://\S+)/$`)
	pprofRE   = regexp.MustCompile(`msg="pprof listening" addr=(\S+)`)
	sessionRE = regexp.MustCompile(`data-session="([^"]+)"`)
)

// The whole serve command: start it, load pages, connect sockets that play, ask
// pprof, cancel (what SIGTERM does through signal.NotifyContext); every socket is
// told 1001 "server shutting down", serve returns nil, and no goroutine is left.
func TestServeLifecycleLeavesNoGoroutine(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr := newLineWriter(), newLineWriter()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--pprof", "127.0.0.1:0", "--shutdown-timeout", "5s"}, strings.NewReader(""), stdout, stderr)
	}()
	base := stdout.await(t, servingRE)
	pprofAddr := stderr.await(t, pprofRE)

	tr := &http.Transport{}
	hc := &http.Client{Transport: tr}
	fetch := func(url string) (int, string) {
		t.Helper()
		resp, err := hc.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := fetch(base + "/readyz"); code != http.StatusOK {
		t.Fatalf("readyz: %d %s", code, body)
	}
	if code, body := fetch(base + "/metrics"); code != http.StatusOK || !strings.Contains(body, "playground_sessions ") {
		t.Fatalf("metrics: %d", code)
	}
	if code, _ := fetch("http://" + pprofAddr + "/debug/pprof/"); code != http.StatusOK {
		t.Fatalf("pprof: %d", code)
	}
	if code, _ := fetch(base + "/debug/pprof/"); code != http.StatusNotFound {
		t.Fatalf("pprof on the public listener: %d", code)
	}
	var conns []*websocket.Conn
	for _, path := range []string{"/play/bully?n=4", "/play/ricart-agrawala?n=3", "/s/bully-best-case", "/play/token-ring"} {
		code, body := fetch(base + path)
		m := sessionRE.FindStringSubmatch(body)
		if code != http.StatusOK || m == nil {
			t.Fatalf("%s: %d", path, code)
		}
		conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(base, "http")+"/ws/"+m[1], http.Header{"Origin": {base}})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if err := conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"play"}`)); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, conn)
	}
	tr.CloseIdleConnections()

	cancel()
	for _, conn := range conns {
		_ = conn.SetReadDeadline(time.Now().Add(testwait.Limit))
		var err error
		for err == nil {
			_, _, err = conn.ReadMessage()
		}
		var ce *websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != websocket.CloseGoingAway || ce.Text != "server shutting down" {
			t.Fatalf("close: %v, want 1001 server shutting down", err)
		}
		conn.Close()
	}
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	stderr.await(t, regexp.MustCompile(`msg="(shut down)"`))
	goleak.VerifyNone(t, ignore)
}

// A bad $PUBLIC_URL is refused like the flag, naming both.
func TestServeRefusesABadPublicURLFromTheEnvironment(t *testing.T) {
	t.Setenv("PUBLIC_URL", "localhost:8080")
	_, _, err := runArgs(t, "", "serve", "--addr", "127.0.0.1:0")
	if err == nil || !strings.Contains(err.Error(), "--public-url (or $PUBLIC_URL)") || !strings.Contains(err.Error(), "http://") {
		t.Fatalf("%v, want an error naming --public-url and $PUBLIC_URL", err)
	}
}

func TestServeRefusesBadOperationsFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--pprof", "0.0.0.0:6060"}, "not a loopback address"},
		{[]string{"--pprof", ":6060"}, "not a loopback address"},
		{[]string{"--trusted-proxy", "proxy.example"}, "--trusted-proxy"},
		{[]string{"--trusted-proxy", "X-Real-IP"}, "--trusted-proxy"},
		{[]string{"--rate-pages", "fast"}, "rate-pages"},
		{[]string{"--max-viewers", "0"}, "--max-viewers"},
		{[]string{"--max-followers", "-1"}, "--max-followers"},
		{[]string{"--shutdown-timeout", "1ns"}, "--shutdown-timeout"},
		{[]string{"--lecture-share", "-1"}, "--lecture-share"},
		{[]string{"--max-lectures", "4", "--lecture-share", "5"}, "--lecture-share"},
		{[]string{"--session-share", "201"}, "--session-share"},
		{[]string{"--export-concurrent", "0"}, "--export-concurrent"},
		{[]string{"--export-per-client", "0"}, "--export-per-client"},
		{[]string{"--export-max-mib", "-1"}, "--export-max-mib"},
		{[]string{"--export-timeout", "1ms"}, "--export-timeout"},
		{[]string{"--hibernate-after", "10ms"}, "--hibernate-after"},
		{[]string{"--rest", "-1s"}, "--hibernate-after"},
		{[]string{"--log-format", "xml"}, "--log-format"},
		{[]string{"--log-level", "loud"}, "--log-level"},
		{[]string{"--public-url", "playground.example.edu"}, "--public-url (or $PUBLIC_URL): \"playground.example.edu\" must start with http:// or https://"},
		{[]string{"--public-url", "ftp://example.edu"}, "must start with http:// or https://"},
		{[]string{"--public-url", "https://"}, "--public-url (or $PUBLIC_URL): \"https://\" has no host name"},
		{[]string{"--public-url", "https://example.edu/?x=1"}, "has a query or fragment"},
		{[]string{"--public-url", "https://bob:pw@example.edu"}, "has a user name or password"},
		{[]string{"--public-url", "http://exa mple.edu"}, "--public-url"},
		{[]string{"--allowed-hosts", "https://class.example.edu"}, "--allowed-hosts (or $ALLOWED_HOSTS): \"https://class.example.edu\" is not a host name"},
		{[]string{"--allowed-hosts", "a.example,*.example"}, "\"*.example\" is not a host name"},
		{[]string{"--body-timeout", "1ms"}, "--body-timeout"},
		{[]string{"--cpu-cores", "-1"}, "--cpu-cores"},
	} {
		_, _, err := runArgs(t, "", append([]string{"serve", "--addr", "127.0.0.1:0"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error naming %s", tc.args, err, tc.want)
		}
	}
}
