package web

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/runtime/sandbox"
	"github.com/teach-dist/playground/scenarios"
	"github.com/teach-dist/playground/static"
)

func TestMain(m *testing.M) {
	code := m.Run()
	sandbox.Default().Close() // the process's workers, and the goroutines that wait for them
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// newTestServer runs a Server on loopback; everything ends with the test.
func newTestServer(t *testing.T, opts Options) (*Server, *httptest.Server) {
	t.Helper()
	srv := New(opts)
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Close() // sessions and WebSocket handlers first: httptest does not track hijacked connections
		ts.Close()
	})
	return srv, ts
}

type page struct {
	status int
	body   string
	header http.Header
}

func get(t *testing.T, c *http.Client, url string) page {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return page{resp.StatusCode, string(b), resp.Header}
}

func browser(t *testing.T) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar}
}

var sessionRE = regexp.MustCompile(`data-session="([^"]+)"`)

func sessionOf(t *testing.T, p page) string {
	t.Helper()
	m := sessionRE.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no session in the page (status %d)", p.status)
	}
	return m[1]
}

func TestCatalogueListsEveryAlgorithmByFamily(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	p := get(t, browser(t), ts.URL+"/")
	if p.status != http.StatusOK {
		t.Fatalf("status %d", p.status)
	}
	for _, spec := range algorithms.All() {
		for _, want := range []string{`href="/play/` + spec.Slug + `?fresh=1"`, htmlEscape(spec.Title)} {
			if !strings.Contains(p.body, want) {
				t.Errorf("catalogue lacks %q", want)
			}
		}
		for _, c := range spec.Costs {
			if !strings.Contains(p.body, htmlEscape(c.Formula)) {
				t.Errorf("catalogue lacks the cost %q of %s", c.Formula, spec.Slug)
			}
		}
	}
	for _, e := range scenarios.Curated() {
		if !strings.Contains(p.body, `href="/s/`+e.Name+`?fresh=1"`) {
			t.Errorf("catalogue lacks the curated scenario %s", e.Name)
		}
	}
	if !strings.Contains(p.body, "Mutual exclusion") {
		t.Error("no mutual exclusion family")
	}
	mutex := strings.Index(p.body, `id="fam-mutex"`)
	ra := strings.Index(p.body, `href="/play/ricart-agrawala?fresh=1"`)
	if mutex < 0 || ra < mutex {
		t.Error("Ricart-Agrawala is not listed under mutual exclusion")
	}
}

func htmlEscape(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;")
	return r.Replace(s)
}

func TestPlayPageHasRulesControlsAndSession(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	p := get(t, browser(t), ts.URL+"/play/ricart-agrawala")
	if p.status != http.StatusOK {
		t.Fatalf("status %d", p.status)
	}
	spec, _ := algorithms.Lookup("ricart-agrawala")
	for _, r := range spec.Rules {
		if !strings.Contains(p.body, `data-rule="`+r.Label+`"`) {
			t.Errorf("pseudocode lacks rule %s", r.Label)
		}
		for _, line := range r.Lines {
			if !strings.Contains(p.body, htmlEscape(line)) {
				t.Errorf("pseudocode lacks the line %q", line)
			}
		}
	}
	for _, want := range []string{
		`id="view"`, `id="log"`, `aria-live="polite"`, `id="btn-play"`, `id="btn-step"`, `id="btn-back"`,
		`id="timeline"`, `id="speed"`, `id="vars"`, `data-act="request"`, `data-act="crash"`,
		`<script id="spec" type="application/json" nonce="`, static.URL("app.js"), static.URL("app.css"),
	} {
		if !strings.Contains(p.body, want) {
			t.Errorf("play page lacks %q", want)
		}
	}
	if strings.Contains(p.body, `data-act="elect"`) {
		t.Error("a mutual exclusion page offers to start an election")
	}
	sessionOf(t, p)
	if csp := p.header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("CSP %q", csp)
	}
	if p.header.Get("Cache-Control") != "no-store" {
		t.Errorf("a page with a session id is cacheable: %q", p.header.Get("Cache-Control"))
	}
}

func TestElectionPageOffersElections(t *testing.T) {
	if _, ok := algorithms.Lookup("bully"); !ok {
		t.Skip("no election algorithm registered")
	}
	_, ts := newTestServer(t, Options{})
	p := get(t, browser(t), ts.URL+"/play/bully")
	if p.status != http.StatusOK || !strings.Contains(p.body, `data-act="elect"`) || strings.Contains(p.body, `data-act="request"`) {
		t.Fatalf("status %d; the election page's menu is wrong", p.status)
	}
}

func TestUnknownPagesAre404WithTheCatalogue(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	for _, path := range []string{"/play/no-such-thing", "/s/no-such-scenario", "/nowhere"} {
		p := get(t, browser(t), ts.URL+path)
		if p.status != http.StatusNotFound {
			t.Errorf("%s: status %d", path, p.status)
		}
		if !strings.Contains(p.body, `href="/play/ricart-agrawala?fresh=1"`) {
			t.Errorf("%s: the 404 page does not show the catalogue", path)
		}
	}
}

func TestCuratedScenarioOpensThePlayground(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	e := scenarios.Curated()[0]
	p := get(t, browser(t), ts.URL+"/s/"+e.Name)
	if p.status != http.StatusOK {
		t.Fatalf("status %d", p.status)
	}
	if !strings.Contains(p.body, htmlEscape(e.Scenario.Title)) || !strings.Contains(p.body, `data-slug="`+e.Scenario.Algorithm+`"`) {
		t.Fatal("the page does not show the scenario and its algorithm")
	}
}

func TestBadQueryIsAClearError(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	for q, says := range map[string]string{
		"n=500":      "nodes: 500 is out of range",
		"n=abc":      "n: &#34;abc&#34; is not a number of processes: write a whole number from 2 to 128",
		"seed=-5":    "seed: &#34;-5&#34; is not a seed: write a whole number from 0 to 18446744073709551615",
		"seed=1.5":   "seed: &#34;1.5&#34; is not a seed",
		"cs=x":       "cs: &#34;x&#34; is not a time in the CS",
		"loss=lots":  "loss: &#34;lots&#34; is not a probability: write a number from 0 to 1",
		"delay=x":    "delay",
		"colour=red": "colour: unknown parameter",
	} {
		p := get(t, browser(t), ts.URL+"/play/ricart-agrawala?"+q)
		if p.status != http.StatusBadRequest || !strings.Contains(p.body, says) {
			t.Errorf("%s: status %d, page does not say %q", q, p.status, says)
		}
	}
	p := get(t, browser(t), ts.URL+"/play/ricart-agrawala?n=7&seed=3&delay=2-4&fifo=true&cs=1")
	if p.status != http.StatusOK {
		t.Fatalf("a valid query: status %d", p.status)
	}
}

func TestReloadResumesTheSameSession(t *testing.T) {
	srv, ts := newTestServer(t, Options{})
	c := browser(t)
	a := sessionOf(t, get(t, c, ts.URL+"/play/ricart-agrawala"))
	if b := sessionOf(t, get(t, c, ts.URL+"/play/ricart-agrawala")); b != a {
		t.Fatal("a reload started a new session")
	}
	if b := sessionOf(t, get(t, c, ts.URL+"/play/ricart-agrawala?n=3")); b == a {
		t.Fatal("another setup shares the session")
	}
	if b := sessionOf(t, get(t, browser(t), ts.URL+"/play/ricart-agrawala")); b == a {
		t.Fatal("another browser shares the session")
	}
	if srv.Sessions().Len() != 3 {
		t.Fatalf("%d sessions, want 3", srv.Sessions().Len())
	}
}

func TestSessionCapShowsServerFull(t *testing.T) {
	_, ts := newTestServer(t, Options{MaxSessions: 1})
	c := browser(t)
	first := get(t, c, ts.URL+"/play/ricart-agrawala")
	if first.status != http.StatusOK {
		t.Fatalf("first visitor: %d", first.status)
	}
	// Watched, and the only address: nothing may be evicted (an unwatched run would be).
	dial(t, ts, sessionOf(t, first)).next("snapshot")
	p := get(t, browser(t), ts.URL+"/play/ricart-agrawala")
	if p.status != http.StatusServiceUnavailable || !strings.Contains(p.body, "full") || p.header.Get("Retry-After") == "" {
		t.Fatalf("second visitor: status %d, Retry-After %q", p.status, p.header.Get("Retry-After"))
	}
	// The first visitor still has its place.
	if p := get(t, c, ts.URL+"/play/ricart-agrawala"); p.status != http.StatusOK {
		t.Fatalf("first visitor's reload: %d", p.status)
	}
	// Pages without a session are never refused.
	if p := get(t, browser(t), ts.URL+"/"); p.status != http.StatusOK {
		t.Fatalf("catalogue when full: %d", p.status)
	}
}

func TestHealthz(t *testing.T) {
	_, ts := newTestServer(t, Options{MaxSessions: 7})
	p := get(t, browser(t), ts.URL+"/healthz")
	if p.status != http.StatusOK || !strings.Contains(p.body, `"status":"ok"`) || !strings.Contains(p.body, `"maxSessions":7`) {
		t.Fatalf("healthz: %d %s", p.status, p.body)
	}
}

func TestStaticAssetsAreVersionedAndCached(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	c := browser(t)
	for _, name := range static.Names() {
		p := get(t, c, ts.URL+static.URL(name))
		if p.status != http.StatusOK || p.body == "" {
			t.Fatalf("%s: status %d", name, p.status)
		}
		if !strings.Contains(p.header.Get("Cache-Control"), "immutable") {
			t.Errorf("%s: Cache-Control %q", name, p.header.Get("Cache-Control"))
		}
	}
	if p := get(t, c, ts.URL+static.URL("app.js")); !strings.HasPrefix(p.header.Get("Content-Type"), "text/javascript") {
		t.Errorf("app.js served as %q", p.header.Get("Content-Type"))
	}
	old := get(t, c, ts.URL+"/static/0123456789ab/app.js")
	if old.status != http.StatusOK || old.header.Get("Cache-Control") != "no-cache" {
		t.Errorf("an old version: status %d, Cache-Control %q", old.status, old.header.Get("Cache-Control"))
	}
	req, _ := http.NewRequest("GET", ts.URL+static.URL("app.css"), nil)
	req.Header.Set("If-None-Match", old.header.Get("ETag"))
	if resp, err := c.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("another file's ETag matched (err %v)", err)
	} else {
		resp.Body.Close()
	}
	for _, path := range []string{"/static/" + static.Version + "/nope.js", "/static/" + static.Version + "/", "/static/x"} {
		if p := get(t, c, ts.URL+path); p.status != http.StatusNotFound {
			t.Errorf("%s: status %d", path, p.status)
		}
	}
}

// Budget: the play page with its JS and CSS is at most 150 KiB gzipped.
func TestPlayPageBudget(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	c := browser(t)
	total := gzipSize(t, []byte(get(t, c, ts.URL+"/play/ricart-agrawala").body))
	for _, name := range static.Names() {
		b, _ := static.Read(name)
		total += gzipSize(t, b)
	}
	t.Logf("play page + assets: %d bytes gzipped", total)
	if total > 150<<10 {
		t.Fatalf("%d bytes gzipped, over the 150 KiB budget", total)
	}
	// The server does compress them.
	req, _ := http.NewRequest("GET", ts.URL+static.URL("app.js"), nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("app.js is not compressed: %q", resp.Header.Get("Content-Encoding"))
	}
}

func gzipSize(t *testing.T, b []byte) int {
	t.Helper()
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	w.Write(b)
	w.Close()
	return buf.Len()
}

// No CDN, no external request of any kind: nothing the browser loads names another host.
func TestNoExternalReferences(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	c := browser(t)
	texts := map[string]string{
		"/":                     get(t, c, ts.URL+"/").body,
		"/play/ricart-agrawala": get(t, c, ts.URL+"/play/ricart-agrawala").body,
	}
	for _, name := range static.Names() {
		b, _ := static.Read(name)
		texts[name] = string(b)
	}
	ext := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}`)
	for name, text := range texts {
		for _, m := range ext.FindAllString(text, -1) {
			if strings.Contains(m, "www.w3.org") { // the SVG namespace is a name, not a request
				continue
			}
			t.Errorf("%s refers to %s", name, m)
		}
	}
}
