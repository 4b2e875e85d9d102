package web

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/internal/testwait"
)

// DNS rebinding: a page of evil.example, its name made to resolve to this server, is
// same-origin with it in the browser. Its page and socket requests carry Host
// evil.example and are refused; the server's own names, loopback names and IP
// addresses are served (make run, the tests, a lecture machine reached by address).
func TestARebindingHostIsRefused(t *testing.T) {
	_, ts := newTestServer(t, Options{AllowedHosts: []string{"class.example.edu"}})
	port := ts.Listener.Addr().(*net.TCPAddr).Port
	tests := []struct {
		host string
		want int
	}{
		{fmt.Sprintf("127.0.0.1:%d", port), http.StatusOK},
		{fmt.Sprintf("localhost:%d", port), http.StatusOK},
		{fmt.Sprintf("app.localhost:%d", port), http.StatusOK},
		{fmt.Sprintf("[::1]:%d", port), http.StatusOK},
		{"192.168.1.20:8080", http.StatusOK},
		{"class.example.edu", http.StatusOK},
		{"CLASS.example.edu.:443", http.StatusOK},
		{fmt.Sprintf("evil.example:%d", port), http.StatusMisdirectedRequest},
		{"localhost.evil.example", http.StatusMisdirectedRequest},
		{"class.example.edu.evil.example", http.StatusMisdirectedRequest},
	}
	for _, tt := range tests {
		for _, path := range []string{"/", "/play/ricart-agrawala?n=3"} {
			req, _ := http.NewRequest(http.MethodGet, ts.URL+path, nil)
			req.Host = tt.host
			p := do(t, browser(t), req)
			if p.status != tt.want {
				t.Errorf("GET %s with Host %s: %d, want %d", path, tt.host, p.status, tt.want)
			}
			if tt.want != http.StatusOK && !strings.Contains(p.body, "--allowed-hosts") {
				t.Errorf("the refusal does not say how to allow the name: %q", p.body)
			}
		}
	}
	// Probes and scrapers are answered whatever the Host.
	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/healthz", nil)
	req.Host = "evil.example"
	if p := do(t, browser(t), req); p.status != http.StatusOK {
		t.Errorf("/healthz with a foreign Host: %d", p.status)
	}

	// The socket: the rebinding page's Origin matches its Host, so only the Host check
	// stops it.
	id := openSession(t, ts, "/play/ricart-agrawala?n=3")
	evil := fmt.Sprintf("evil.example:%d", port)
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	d := websocket.Dialer{NetDial: func(string, string) (net.Conn, error) { return conn, nil }}
	_, resp, err := d.Dial("ws://"+evil+"/ws/"+id, http.Header{"Origin": {"http://" + evil}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusMisdirectedRequest {
		t.Fatalf("a socket of a rebinding page: %v, %v; want 421", err, resp)
	}
	// The same socket by the server's own address still opens.
	c := dial(t, ts, id)
	c.next("hello")
}

// A body that trickles in is cut at the body timeout: the server closes the
// connection instead of holding it (and a handler) for as long as the client likes.
func TestTrickledBodiesAreClosedAtTheDeadline(t *testing.T) {
	_, ts := newTestServer(t, Options{BodyTimeout: 200 * time.Millisecond})
	for _, path := range []string{"/lecture", "/api/sessions/x/explore"} {
		conn, err := net.Dial("tcp", ts.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100000\r\n\r\nsession=", path, ts.Listener.Addr())
		// The client sends nothing more. The server must answer or close by the
		// deadline; the read's own deadline only turns a hang into a failure.
		_ = conn.SetReadDeadline(time.Now().Add(testwait.Limit))
		_, err = io.ReadAll(bufio.NewReader(conn))
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("POST %s: the connection of a trickled body stayed open for %v", path, testwait.Limit)
		}
	}
	// A body that arrives in time is served, and a streamed answer is not cut by the
	// deadline afterwards.
	resp, err := http.Post(ts.URL+"/lecture", "application/x-www-form-urlencoded", strings.NewReader("session=nope"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode >= 500 {
		t.Fatalf("POST /lecture in time: %d", resp.StatusCode)
	}
}
