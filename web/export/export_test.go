package export

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/teach-dist/playground/internal/testwait"
	"github.com/teach-dist/playground/runtime/session"
	"github.com/teach-dist/playground/scenarios"
	"github.com/teach-dist/playground/web/gate"
	"github.com/teach-dist/playground/web/runs"
)

// unbounded is a budget no test run reaches.
func unbounded() *budget {
	return &budget{ctx: context.Background(), maxEvents: 1 << 40, maxBytes: 1 << 40,
		out: &lazyHeader{w: httptest.NewRecorder()}}
}

// bigLink is the code of the link of a 128-process token ring (the worst
// case: every ShiViz event carries a clock of 128 processes).
func bigLink(t *testing.T) string {
	t.Helper()
	sc, err := scenarios.Parse([]byte(`{"version":1,"algorithm":"token-ring","nodes":128,"seed":1}`))
	if err != nil {
		t.Fatal(err)
	}
	setup, err := runs.SetupOf(sc, "")
	if err != nil {
		t.Fatal(err)
	}
	l, err := scenarios.LinkFromRun(setup.Scenario, setup.Config, nil, 10)
	if err != nil {
		t.Fatal(err)
	}
	p, err := l.Path()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(p, "/r/")
}

// linkRouter serves the link exports of a as the server does (client address first).
func linkRouter(a *API) http.Handler {
	r := chi.NewRouter()
	r.Use(middleware.ClientIPFromRemoteAddr)
	r.Get("/r/{code}/trace.jsonl", a.LinkTrace)
	r.Get("/r/{code}/shiviz", a.LinkShiViz)
	return r
}

func request(path, client string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, path, nil)
	r.RemoteAddr = client
	return r
}

// heapProbe is a ResponseWriter that reads what it is sent and, every MiB, measures
// the live heap: an export that builds its response before writing it holds the whole
// response in the heap at its one write.
type heapProbe struct {
	header  http.Header
	n, next int64
	base    uint64
	peak    uint64
}

func newHeapProbe() *heapProbe {
	p := &heapProbe{header: http.Header{}}
	p.base = liveHeap()
	return p
}

func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func (p *heapProbe) Header() http.Header { return p.header }
func (p *heapProbe) WriteHeader(int)     {}
func (p *heapProbe) Write(b []byte) (int, error) {
	p.n += int64(len(b))
	if p.n >= p.next {
		p.next = p.n + 1<<20
		p.peak = max(p.peak, liveHeap())
	}
	return len(b), nil
}

// A big export streams: it writes tens of megabytes while the live heap grows by a
// few (the ShiViz writer's clocks and the run's state), not by the file.
func TestBigExportStreamsInBoundedMemory(t *testing.T) {
	code := bigLink(t)
	a := New(runs.Source{}, Options{MaxBytes: 1 << 30, MaxEvents: 1 << 30})
	for _, tc := range []struct {
		path string
		size int64 // at least, so that a buffered export would show
	}{
		{"/r/" + code + "/trace.jsonl?step=90000", 16 << 20},
		{"/r/" + code + "/shiviz?step=12000", 16 << 20},
	} {
		p := newHeapProbe()
		linkRouter(a).ServeHTTP(p, request(tc.path, "192.0.2.1:1000"))
		grew := int64(p.peak) - int64(p.base)
		t.Logf("%s: %d bytes, heap %d -> %d", tc.path, p.n, p.base, p.peak)
		if p.n < tc.size || grew > 8<<20 {
			t.Errorf("%s: wrote %d MiB (want %d at least) with the live heap %d MiB above its start (want at most 8)",
				tc.path, p.n>>20, tc.size>>20, grew>>20)
		}
	}
}

// cutNote is the note an export past its bound ends with, or "".
func cutNote(t *testing.T, kind, body string) string {
	t.Helper()
	lines := strings.Split(strings.TrimRight(body, "\n"), "\n")
	switch kind {
	case "trace.jsonl":
		var last, before struct {
			Seq          int
			Type, Detail string
		}
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
			t.Fatalf("the trace's last line: %v", err)
		}
		if last.Type == "cut" {
			if err := json.Unmarshal([]byte(lines[len(lines)-2]), &before); err != nil || last.Seq != before.Seq+1 {
				t.Fatalf("the cut line's seq %d follows %d (%v)", last.Seq, before.Seq, err)
			}
			return last.Detail
		}
	case "shiviz":
		// The note is the first process's last event: its line, then "P… {clock}".
		if len(lines) >= 2 && strings.Contains(lines[len(lines)-2], "this export stops") &&
			strings.HasPrefix(lines[len(lines)-1], "P") {
			return lines[len(lines)-2]
		}
	}
	return ""
}

var stopsAt = regexp.MustCompile(`this export stops at step (\d+) of`)

// An export past a bound (bytes, events, time) stops between two steps and ends with
// a note in its own format that says where, why, and which ?step= fits; asking for
// that step gives the export whole.
func TestExportPastItsBoundSaysHowToGetLess(t *testing.T) {
	code := bigLink(t)
	for _, tc := range []struct {
		name, kind string
		opts       Options
		step       int
		why        string
		maxBytes   int64 // the body's size at most
	}{
		{"trace bytes", "trace.jsonl", Options{MaxBytes: 256 << 10}, 20000, "MiB an export may carry", 300 << 10},
		{"trace events", "trace.jsonl", Options{MaxEvents: 2000}, 20000, "2000 events", 1 << 20},
		{"shiviz bytes", "shiviz", Options{MaxBytes: 1 << 20}, 20000, "MiB an export may carry", 1<<20 + 64<<10},
		{"shiviz events", "shiviz", Options{MaxEvents: 500}, 20000, "500 events", 2 << 20},
		// A huge export under a tiny time limit: the deadline is checked while it replays.
		{"shiviz time", "shiviz", Options{Gate: gate.Limits{Timeout: 1}}, 95000, "took longer than", 1 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := linkRouter(New(runs.Source{}, tc.opts))
			w := httptest.NewRecorder()
			h.ServeHTTP(w, request("/r/"+code+"/"+tc.kind+"?step="+strconv.Itoa(tc.step), "192.0.2.1:1000"))
			body := w.Body.String()
			note := cutNote(t, tc.kind, body)
			m := stopsAt.FindStringSubmatch(note)
			if w.Code != http.StatusOK || m == nil || !strings.Contains(note, tc.why) || int64(len(body)) > tc.maxBytes {
				t.Fatalf("%d, %d bytes, note %q", w.Code, len(body), note)
			}
			at, _ := strconv.Atoi(m[1])
			if at >= tc.step || !strings.Contains(note, "?step="+m[1]) {
				t.Fatalf("the note names step %d of %d: %q", at, tc.step, note)
			}
			if tc.opts.Gate.Timeout != 0 {
				return // the deadline cuts any replay
			}
			w = httptest.NewRecorder()
			h.ServeHTTP(w, request("/r/"+code+"/"+tc.kind+"?step="+m[1], "192.0.2.1:1000"))
			if w.Code != http.StatusOK || cutNote(t, tc.kind, w.Body.String()) != "" {
				t.Fatalf("?step=%s as the note says: %d, still cut", m[1], w.Code)
			}
		})
	}
}

// blockingWriter holds an export open: its first write says so and waits for release.
type blockingWriter struct {
	header  http.Header
	started chan struct{}
	release chan struct{}
	once    sync.Once
}

func newBlockingWriter(release chan struct{}) *blockingWriter {
	return &blockingWriter{header: http.Header{}, started: make(chan struct{}), release: release}
}

func (b *blockingWriter) Header() http.Header { return b.header }
func (b *blockingWriter) WriteHeader(int)     {}
func (b *blockingWriter) Write(p []byte) (int, error) {
	b.once.Do(func() { close(b.started) })
	<-b.release
	return len(p), nil
}

// Exports run a few at a time: a client past its share gets 429 while another client
// still gets its export; past the server's limit everyone gets 503; both say when to
// come back.
func TestExportsAreLimitedAtOnce(t *testing.T) {
	code := bigLink(t)
	h := linkRouter(New(runs.Source{}, Options{Gate: gate.Limits{Concurrent: 3, PerClient: 2}}))
	path := "/r/" + code + "/trace.jsonl?step=2000"
	release := make(chan struct{})
	var wg sync.WaitGroup
	hold := func(client string) {
		t.Helper()
		bw := newBlockingWriter(release)
		wg.Add(1)
		go func() { defer wg.Done(); h.ServeHTTP(bw, request(path, client)) }()
		<-bw.started
	}
	refused := func(client string, want int) {
		t.Helper()
		w := httptest.NewRecorder()
		h.ServeHTTP(w, request(path, client))
		if w.Code != want || w.Header().Get("Retry-After") == "" || !strings.Contains(w.Body.String(), "at most") {
			t.Fatalf("%s: %d %q (Retry-After %q), want %d", client, w.Code, w.Body.String(), w.Header().Get("Retry-After"), want)
		}
	}
	hold("[2001:db8:1:2::1]:1000")
	hold("[2001:db8:1:2::99]:1000")                                    // the same /64: the same client
	refused("[2001:db8:1:2:ffff::7]:1000", http.StatusTooManyRequests) // its third
	hold("192.0.2.7:1000")                                             // another client still gets its export
	refused("192.0.2.8:1000", http.StatusServiceUnavailable)           // the server's three are taken
	close(release)
	wg.Wait()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, request(path, "[2001:db8:1:2::1]:1000"))
	if w.Code != http.StatusOK || cutNote(t, "trace.jsonl", w.Body.String()) != "" {
		t.Fatalf("after the others finished: %d", w.Code)
	}
}

// A client that asks for a huge export and never reads it loses its place when the
// time limit is up (its writes fail), and the next client gets the export.
func TestAClientThatDoesNotReadLosesItsPlace(t *testing.T) {
	a := New(runs.Source{}, Options{Gate: gate.Limits{Concurrent: 1, Timeout: 200 * time.Millisecond}, MaxBytes: 1 << 30})
	ts := httptest.NewServer(linkRouter(a))
	defer ts.Close()
	path := "/r/" + bigLink(t) + "/shiviz?step=95000" // 195 MB: more than any socket buffer
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the export to start", func() bool { return a.gate.Running() == 1 })
	testwait.For(t, "the unread export to give its place back", func() bool { return a.gate.Running() == 0 })
	resp, err := http.Get(ts.URL + "/r/" + bigLink(t) + "/trace.jsonl?step=100")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the next client: %d", resp.StatusCode)
	}
}

// A run's costs are measured by replay under the export's time limit: past it the
// answer is a 503 naming the step reached and the ?step= to ask for instead, not a
// replay that runs on to the step asked.
func TestCostsPastTheTimeLimitSayHowToGetLess(t *testing.T) {
	l, err := runs.DecodeLink(bigLink(t))
	if err != nil {
		t.Fatal(err)
	}
	rec := session.Recipe{Setup: l.Setup, Config: l.Setup.Config, Interventions: l.IVs, Step: 20000, Horizon: 20000}
	a := New(runs.Source{}, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the gate's deadline, passed
	w := httptest.NewRecorder()
	a.costs(w, request("/api/sessions/x/metrics", "192.0.2.1:1000").WithContext(ctx), job{rec: rec, step: 20000})
	if body := w.Body.String(); w.Code != http.StatusServiceUnavailable || !strings.Contains(body, "stopped at step 0 of the 20000 asked for") ||
		!strings.Contains(body, "took longer than the 30s a measure may take") || !strings.Contains(body, "?step=0 or below") {
		t.Fatalf("%d %q", w.Code, body)
	}
	w = httptest.NewRecorder()
	a.costs(w, request("/api/sessions/x/metrics", "192.0.2.1:1000"), job{rec: rec, step: 50})
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"step":50`) {
		t.Fatalf("within the limit: %d %.200s", w.Code, w.Body.String())
	}
}
