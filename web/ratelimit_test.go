package web

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/runtime/protocol"
)

// slow is a rate that never refills within a test: burst requests, then nothing.
func slow(burst int) Rate { return Rate{Per: 1, Every: time.Hour, Burst: burst} }

// getWith sends a GET with extra headers.
func getWith(t *testing.T, c *http.Client, url string, header http.Header) page {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return page{resp.StatusCode, string(b), resp.Header}
}

func retryAfter(t *testing.T, p page) int {
	t.Helper()
	n, err := strconv.Atoi(p.header.Get("Retry-After"))
	if err != nil || n < 1 {
		t.Fatalf("Retry-After %q is not a number of seconds", p.header.Get("Retry-After"))
	}
	return n
}

// Past its burst a client gets 429, Retry-After and a page saying so; assets, probes
// and other classes of request are not charged to the pages bucket.
func TestPageLoadsOverTheRateGet429WithRetryAfter(t *testing.T) {
	_, ts := newTestServer(t, Options{Limits: Limits{Pages: slow(3)}})
	c := browser(t)
	for i := range 3 {
		if p := get(t, c, ts.URL+"/"); p.status != http.StatusOK {
			t.Fatalf("page %d: %d", i+1, p.status)
		}
	}
	for _, free := range []string{"/healthz", "/readyz", "/metrics", "/robots.txt", "/static/app.css"} {
		if p := get(t, c, ts.URL+free); p.status == http.StatusTooManyRequests {
			t.Fatalf("%s is rate limited", free)
		}
	}
	p := get(t, c, ts.URL+"/join")
	if p.status != http.StatusTooManyRequests {
		t.Fatalf("fourth page: %d", p.status)
	}
	if s := retryAfter(t, p); s < 60 {
		t.Fatalf("Retry-After %d: the bucket refills once an hour", s)
	}
	if !strings.Contains(p.body, "Too many requests") || !strings.Contains(p.body, "try again in") {
		t.Fatalf("the 429 page does not say what happened:\n%s", p.body)
	}
}

// Starting runs has its own, stricter bucket; reloading a page that resumes this
// browser's run costs only a page.
func TestSessionStartsAreLimitedApartFromPages(t *testing.T) {
	srv, ts := newTestServer(t, Options{Limits: Limits{Sessions: slow(2)}})
	c := browser(t)
	get(t, c, ts.URL+"/play/bully")
	get(t, c, ts.URL+"/s/bully-best-case")
	for range 5 { // reloads resume: free
		if p := get(t, c, ts.URL+"/play/bully"); p.status != http.StatusOK {
			t.Fatalf("reload: %d", p.status)
		}
	}
	if n := srv.Sessions().Len(); n != 2 {
		t.Fatalf("%d sessions, want 2", n)
	}
	p := get(t, c, ts.URL+"/play/ring")
	if p.status != http.StatusTooManyRequests || !strings.Contains(p.body, "started many runs") {
		t.Fatalf("third run: %d\n%s", p.status, p.body)
	}
	retryAfter(t, p)
	if p := get(t, c, ts.URL+"/"); p.status != http.StatusOK {
		t.Fatalf("the catalogue after the session limit: %d", p.status)
	}
	if n := srv.Sessions().Len(); n != 2 {
		t.Fatalf("a refused start made a session: %d", n)
	}
}

// /api/… and /compare share the API bucket; a refused API call gets text, not a page.
func TestAPIAndCompareAreLimited(t *testing.T) {
	_, ts := newTestServer(t, Options{Limits: Limits{API: slow(2)}})
	id := openSession(t, ts, "/play/bully?n=3")
	c := browser(t)
	if p := get(t, c, ts.URL+"/api/sessions/"+id+"/link"); p.status != http.StatusOK {
		t.Fatalf("link: %d", p.status)
	}
	if p := get(t, c, ts.URL+"/compare?alg=bully&n=3&seeds=1"); p.status != http.StatusOK {
		t.Fatalf("compare: %d", p.status)
	}
	p := get(t, c, ts.URL+"/api/sessions/"+id+"/trace")
	if p.status != http.StatusTooManyRequests || !strings.HasPrefix(p.header.Get("Content-Type"), "text/plain") {
		t.Fatalf("third API call: %d %s", p.status, p.header.Get("Content-Type"))
	}
	retryAfter(t, p)
	if p := get(t, c, ts.URL+"/compare?alg=bully&n=3&seeds=1"); p.status != http.StatusTooManyRequests || !strings.Contains(p.body, "Slow down") {
		t.Fatalf("compare over the limit: %d", p.status)
	}
}

// WebSocket handshakes over the rate are refused with 429 before the upgrade.
func TestSocketHandshakesAreLimited(t *testing.T) {
	_, ts := newTestServer(t, Options{Limits: Limits{Sockets: slow(2)}})
	id := openSession(t, ts, "/play/bully?n=3")
	url := "ws" + strings.TrimPrefix(ts.URL, "http") + "/ws/" + id
	for range 2 {
		c := dial(t, ts, id)
		c.next("snapshot")
		c.conn.Close()
	}
	_, resp, err := websocket.DefaultDialer.Dial(url, http.Header{"Origin": {ts.URL}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("third handshake: %v %v", err, resp)
	}
	resp.Body.Close()
}

// Frames past a connection's rate are dropped unread with a rate-limited error; a
// client that keeps going past its strikes is closed with 1008.
func TestWSCommandsRateLimitedThenClosedOnAbuse(t *testing.T) {
	_, ts := newTestServer(t, Options{Limits: Limits{Commands: slow(3), Strikes: slow(2)}})
	c := dial(t, ts, openSession(t, ts, "/play/ricart-agrawala?n=3"))
	c.next("snapshot")
	for k := range 3 {
		c.send(`{"type":"step","ref":` + strconv.Itoa(k+1) + `}`)
		if f := c.next("events", "state", "error"); f.Type == "error" {
			t.Fatalf("frame %d within the rate: %s", k+1, f.raw)
		}
	}
	for k := range 2 {
		c.send(`{"type":"step"}`)
		if f := c.next("error"); f.Code != protocol.CodeRateLimited {
			t.Fatalf("frame %d over the rate: %s", 4+k, f.raw)
		}
	}
	c.send(`{"type":"step"}`)
	err := c.ended()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.ClosePolicyViolation || ce.Text != protocol.CloseAbuse {
		t.Fatalf("after the strikes: %v, want close 1008 %q", err, protocol.CloseAbuse)
	}
}

// One address's connections share a bucket of frames too.
func TestWSCommandsPerAddressAcrossConnections(t *testing.T) {
	_, ts := newTestServer(t, Options{Limits: Limits{CommandsPerIP: slow(2)}})
	id := openSession(t, ts, "/play/ricart-agrawala?n=3")
	a, b := dial(t, ts, id), dial(t, ts, id)
	a.next("snapshot")
	b.next("snapshot")
	// Each waits for the answer to its own frame (every viewer gets it), so the two
	// frames are taken from the bucket in this order.
	for _, step := range []struct {
		c     *wsClient
		speed float64
	}{{a, 2}, {b, 3}} {
		step.c.send(`{"type":"speed","speed":` + strconv.FormatFloat(step.speed, 'g', -1, 64) + `}`)
		for _, c := range []*wsClient{a, b} {
			for c.next("state").Speed != step.speed {
			}
		}
	}
	a.send(`{"type":"pause"}`)
	if f := a.next("error"); f.Code != protocol.CodeRateLimited {
		t.Fatalf("third frame of the address: %s", f.raw)
	}
}

// Behind a trusted proxy each client has its own buckets; a client that reaches the
// server directly cannot pick its key with the header.
func TestRateLimitKeysOnTheClientBehindATrustedProxy(t *testing.T) {
	for _, tc := range []struct {
		name, trusted, header string
		separate              bool
	}{
		{"no proxy: X-Forwarded-For ignored", "", "X-Forwarded-For", false},
		{"XFF from a trusted proxy", "127.0.0.1/32", "X-Forwarded-For", true},
		{"XFF from an untrusted peer", "10.0.0.0/8", "X-Forwarded-For", false},
		{"X-Real-IP from a trusted proxy", "X-Real-IP=127.0.0.0/8,::1", "X-Real-IP", true},
		{"X-Real-IP from an untrusted peer", "X-Real-IP=192.0.2.0/24", "X-Real-IP", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mw, err := ClientIP(tc.trusted)
			if err != nil {
				t.Fatal(err)
			}
			_, ts := newTestServer(t, Options{ClientIP: mw, Limits: Limits{Pages: slow(2)}})
			c := browser(t)
			for _, ip := range []string{"198.51.100.1", "198.51.100.1"} {
				if p := getWith(t, c, ts.URL+"/", http.Header{tc.header: {ip}}); p.status != http.StatusOK {
					t.Fatalf("client %s: %d", ip, p.status)
				}
			}
			p := getWith(t, c, ts.URL+"/", http.Header{tc.header: {"198.51.100.2"}})
			if got := p.status == http.StatusOK; got != tc.separate {
				t.Fatalf("another client behind the proxy: %d (separate buckets: want %v)", p.status, tc.separate)
			}
		})
	}
}

func TestClientIPSpecs(t *testing.T) {
	for _, ok := range []string{"", "10.0.0.0/8", "10.0.0.0/8, 192.168.1.7", "::1,127.0.0.1/32", "X-Real-IP=10.0.0.0/8", "CF-Connecting-IP=173.245.48.0/20,2400:cb00::/32", "X-Forwarded-For=10.0.0.1"} {
		if _, err := ClientIP(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"10.0.0.0/33", "proxy.example", "X-Real-IP", "X-Real-IP=", "X Real=10.0.0.0/8", "=10.0.0.0/8", ",", "X-Real-IP=nope"} {
		if _, err := ClientIP(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestParseRate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Rate
	}{
		{"20/s:600", Rate{20, time.Second, 600}},
		{"120/m:300", Rate{120, time.Minute, 300}},
		{"5/10s", Rate{5, 10 * time.Second, 5}},
		{"1/h:1", Rate{1, time.Hour, 1}},
		{"off", Rate{}},
		{"0", Rate{}},
	} {
		got, err := ParseRate(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("%q: %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
		if err == nil {
			back, err := ParseRate(got.String())
			if err != nil || back != got {
				t.Errorf("%q: String %q reads back as %+v, %v", tc.in, got.String(), back, err)
			}
		}
	}
	for _, bad := range []string{"", "20", "20/", "x/s", "-1/s", "20/s:0", "20/s:x", "20/fortnight", "20/0s", "2000000000/1ns"} {
		if _, err := ParseRate(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
