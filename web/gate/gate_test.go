package gate

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5/middleware"
)

// A client is an IPv4 address or an IPv6 /64, as the rate limiter keys it.
func TestClientKey(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		{"192.0.2.1:1", "192.0.2.1:2"},
		{"[2001:db8:0:1::1]:1", "[2001:db8:0:1:ffff:ffff:ffff:ffff]:1"},
		{"[::ffff:192.0.2.1]:1", "192.0.2.1:1"},
	} {
		if ka, kb := key(tc.a), key(tc.b); ka != kb || !ka.IsValid() {
			t.Errorf("%s and %s: keys %v and %v", tc.a, tc.b, ka, kb)
		}
	}
	for _, tc := range []struct{ a, b string }{
		{"192.0.2.1:1", "192.0.2.2:1"},
		{"[2001:db8:0:1::1]:1", "[2001:db8:0:2::1]:1"},
	} {
		if key(tc.a) == key(tc.b) {
			t.Errorf("%s and %s share a key", tc.a, tc.b)
		}
	}
}

func key(remote string) netip.Prefix {
	var k netip.Prefix
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = remote
	middleware.ClientIPFromRemoteAddr(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { k = Client(r) })).ServeHTTP(httptest.NewRecorder(), r)
	return k
}

// Places are taken while a request runs and given back when it ends; a client past
// its share gets 429, everyone past the server's 503, both with Retry-After; shared
// work counts toward the server's limit only; the handler runs under the deadline.
func TestGate(t *testing.T) {
	g := New(Limits{Concurrent: 3, PerClient: 1})
	var refusals []string
	g.Refused = func(which string) { refusals = append(refusals, which) }
	release := make(chan struct{})
	var wg sync.WaitGroup
	in := make(chan bool)
	held := func(w http.ResponseWriter, r *http.Request) {
		_, deadline := r.Context().Deadline()
		in <- deadline
		<-release
	}
	serve := func(h http.HandlerFunc, remote string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = remote
		middleware.ClientIPFromRemoteAddr(h).ServeHTTP(w, r)
		return w
	}
	hold := func(h http.HandlerFunc, remote string) {
		wg.Add(1)
		go func() { defer wg.Done(); serve(h, remote) }()
		if !<-in {
			t.Fatal("the handler runs without a deadline")
		}
	}
	for _, step := range []struct {
		remote string
		shared bool
		want   int // 0: held open
	}{
		{"192.0.2.1:1", false, 0},
		{"192.0.2.1:2", false, http.StatusTooManyRequests},
		{"192.0.2.1:3", true, 0}, // work for a hall: not this client's share
		{"192.0.2.2:1", false, 0},
		{"192.0.2.3:1", false, http.StatusServiceUnavailable},
		{"192.0.2.3:1", true, http.StatusServiceUnavailable},
	} {
		h := g.Wrap(held)
		if step.shared {
			h = g.Shared(held)
		}
		if step.want == 0 {
			hold(h, step.remote)
			continue
		}
		if w := serve(h, step.remote); w.Code != step.want || w.Header().Get("Retry-After") == "" {
			t.Fatalf("%s: %d (Retry-After %q), want %d", step.remote, w.Code, w.Header().Get("Retry-After"), step.want)
		}
	}
	if g.Running() != 3 || len(refusals) != 3 || refusals[0] != "client" || refusals[1] != "server" {
		t.Fatalf("running %d, refusals %v", g.Running(), refusals)
	}
	close(release)
	wg.Wait()
	if g.Running() != 0 || len(g.per) != 0 {
		t.Fatalf("after all ended: running %d, clients %v", g.Running(), g.per)
	}
}

// deadlines is a ResponseWriter that records the write deadline set on it.
type deadlines struct {
	*httptest.ResponseRecorder
	write time.Time
}

func (d *deadlines) SetWriteDeadline(t time.Time) error { d.write = t; return nil }

// A request through the gate ends by its time limit: its work stops before the limit,
// leaving room for its last words, and its writes fail at the limit, never after it
// (an export once ran 40.9 s against its 30 s).
func TestEveryRequestEndsByTheTimeLimit(t *testing.T) {
	for _, limit := range []time.Duration{time.Second, 30 * time.Second, 5 * time.Minute} {
		g := New(Limits{Timeout: limit})
		var work time.Time
		rec := &deadlines{ResponseRecorder: httptest.NewRecorder()}
		start := time.Now()
		g.Wrap(func(_ http.ResponseWriter, r *http.Request) {
			work, _ = r.Context().Deadline()
		})(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		end := time.Now()
		switch {
		case work.IsZero() || rec.write.IsZero():
			t.Fatalf("limit %v: work deadline %v, write deadline %v", limit, work, rec.write)
		case rec.write.After(end.Add(limit)) || rec.write.Before(start.Add(limit)):
			t.Errorf("limit %v: writes may go on %v after the start", limit, rec.write.Sub(start))
		case !work.Before(rec.write) || rec.write.Sub(work) < limit/20:
			t.Errorf("limit %v: the work stops %v before the writes: no room for the note", limit, rec.write.Sub(work))
		}
	}
}
