package web

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/runtime/lecture"
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
// and a snapshot: one address must not deny the server to others.
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

// post sends a form from v's address and returns the response, redirects not followed.
func (v visitor) post(url string, form url.Values) *http.Response {
	v.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Real-IP", v.addr)
	c := *v.c
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Do(req)
	if err != nil {
		v.t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// One address that starts every lecture the server takes (the 51 /play and
// POST /lecture) cannot keep a second address out: the second's lecture ends one of
// the first's over its share (--lecture-share, half of --max-lectures), and its
// presenter gets the page, socket and snapshot; the first, at the cap, is refused, and
// both are counted: one address must not deny lectures to others.
func TestOneAddressCannotTakeEveryLectureSlot(t *testing.T) {
	clientIP, err := ratelimit.ClientIP("X-Real-IP=127.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	srv, ts := newTestServer(t, Options{ClientIP: clientIP, Lecture: lecture.Options{Max: 6}})
	startFrom := func(v visitor) *http.Response {
		t.Helper()
		if v.c == nil {
			v.c = browser(t) // a fresh cookie jar: every load starts a run
		}
		p := v.page(ts.URL + "/play/bully?n=3")
		if p.status != http.StatusOK {
			t.Fatalf("%s's page: %d", v.addr, p.status)
		}
		return v.post(ts.URL+"/lecture", url.Values{"session": {sessionOf(t, p)}})
	}
	attacker := visitor{t, "192.0.2.66", nil}
	for k := range 6 {
		if resp := startFrom(attacker); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("attacker's lecture %d on a server nobody else uses: %d", k, resp.StatusCode)
		}
	}
	if resp := startFrom(attacker); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("attacker's lecture past the cap: %d, want 503", resp.StatusCode)
	}
	if n := srv.lectures.Live(); n != 6 {
		t.Fatalf("%d live lectures after the attack; want the server full (6)", n)
	}

	instructor := visitor{t, "198.51.100.7", browser(t)}
	resp := startFrom(instructor)
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/lecture/present/") {
		t.Fatalf("second address's lecture on a server one address filled: %d %q", resp.StatusCode, loc)
	}
	if p := instructor.page(ts.URL + loc); p.status != http.StatusOK {
		t.Fatalf("the presenter's page: %d", p.status)
	}
	c := dialPath(t, ts, "/ws/present/"+strings.TrimPrefix(loc, "/lecture/present/"), nil)
	c.next("hello")
	if f := c.next("snapshot"); len(f.Nodes) != 3 {
		t.Fatalf("the presenter's snapshot has %d nodes", len(f.Nodes))
	}
	for name, want := range map[string]float64{
		"playground_lectures":                                6,
		"playground_lectures_evicted_total":                  1,
		`playground_capacity_refusals_total{cap="lectures"}`: 1,
	} {
		if v := metric(t, srv, name); v != want {
			t.Errorf("%s = %v, want %v", name, v, want)
		}
	}
}
