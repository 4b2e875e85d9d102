package web

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/web/ratelimit"
)

// visitor is a browser at one client address (the X-Real-IP a trusted proxy sets).
type visitor struct {
	t    *testing.T
	addr string
	c    *http.Client
}

func (v visitor) page(url string) page {
	v.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("X-Real-IP", v.addr)
	resp, err := v.c.Do(req)
	if err != nil {
		v.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		v.t.Fatal(err)
	}
	return page{resp.StatusCode, string(b), resp.Header}
}

func (v visitor) socket(ts string, id string) *wsClient {
	v.t.Helper()
	h := http.Header{"Origin": {ts}, "X-Real-IP": {v.addr}}
	conn, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts, "http")+"/ws/"+id, h)
	if err != nil {
		v.t.Fatalf("dial from %s: %v (%v)", v.addr, err, resp)
	}
	v.t.Cleanup(func() { conn.Close() })
	return &wsClient{t: v.t, conn: conn}
}

// One address that loads 205 pages, with or without a socket on each, cannot keep a
// second address out of a 200-session server: the second still gets a page, a socket
// and a snapshot (issue 15, defect 2).
func TestOneAddressCannotFillTheSessionCap(t *testing.T) {
	for _, sockets := range []bool{false, true} {
		name := map[bool]string{false: "pages only", true: "a socket on each"}[sockets]
		t.Run(name, func(t *testing.T) {
			clientIP, err := ratelimit.ClientIP("X-Real-IP=127.0.0.0/8")
			if err != nil {
				t.Fatal(err)
			}
			srv, ts := newTestServer(t, Options{MaxSessions: 200, ClientIP: clientIP})
			attacker := visitor{t, "192.0.2.66", nil}
			for range 205 {
				attacker.c = browser(t) // a fresh cookie jar: every load starts a run
				p := attacker.page(ts.URL + "/play/ricart-agrawala?n=3")
				if p.status != http.StatusOK && p.status != http.StatusServiceUnavailable {
					t.Fatalf("attacker's page: %d", p.status)
				}
				if sockets && p.status == http.StatusOK {
					attacker.socket(ts.URL, sessionOf(t, p)).next("snapshot")
				}
			}
			if n := srv.Sessions().Len(); n != 200 {
				t.Fatalf("%d sessions after the attack; want the server full (200)", n)
			}
			student := visitor{t, "198.51.100.7", browser(t)}
			p := student.page(ts.URL + "/play/bully?n=3")
			if p.status != http.StatusOK {
				t.Fatalf("second address on a server one address filled: %d", p.status)
			}
			c := student.socket(ts.URL, sessionOf(t, p))
			c.next("hello")
			if f := c.next("snapshot"); len(f.Nodes) != 3 {
				t.Fatalf("snapshot with %d nodes", len(f.Nodes))
			}
			if held := srv.Sessions().Held("198.51.100.7/32"); held != 1 {
				t.Fatalf("second address holds %d sessions, want 1", held)
			}
		})
	}
}

// A page whose run was evicted while nobody watched gets the same run back on reload
// (rebuilt from its recipe under the same id), not a fresh one.
func TestReloadRevivesAnEvictedRun(t *testing.T) {
	clientIP, err := ratelimit.ClientIP("X-Real-IP=127.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	srv, ts := newTestServer(t, Options{MaxSessions: 1, ClientIP: clientIP})
	a := visitor{t, "192.0.2.1", browser(t)}
	first := sessionOf(t, a.page(ts.URL+"/play/bully?n=3"))
	b := visitor{t, "192.0.2.2", browser(t)}
	if p := b.page(ts.URL + "/play/ring?n=3"); p.status != http.StatusOK {
		t.Fatalf("second address: %d", p.status)
	}
	if held := srv.Sessions().Held("192.0.2.1/32"); held != 0 {
		t.Fatalf("the first address still holds %d runs", held)
	}
	again := a.page(ts.URL + "/play/bully?n=3")
	if again.status != http.StatusOK || sessionOf(t, again) != first {
		t.Fatalf("reload after eviction: %d, same run %v", again.status, again.status == http.StatusOK && sessionOf(t, again) == first)
	}
}
