package web

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/teach-dist/playground/web/ratelimit"
)

var (
	cspNonceRE  = regexp.MustCompile(`script-src 'self' 'nonce-([A-Za-z0-9+/=]+)'`)
	scriptTagRE = regexp.MustCompile(`<script\b[^>]*>`)
	nonceAttrRE = regexp.MustCompile(`\snonce="([^"]*)"`)
)

// checkNonce asserts the response's CSP carries a nonce, that every <script> of the
// body carries that very nonce, and returns it.
func checkNonce(t *testing.T, path string, p page) string {
	t.Helper()
	csp := p.header.Get("Content-Security-Policy")
	m := cspNonceRE.FindStringSubmatch(csp)
	if m == nil {
		t.Fatalf("%s (%d): CSP without a nonce: %q", path, p.status, csp)
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		t.Fatalf("%s: CSP allows inline script: %q", path, csp)
	}
	if got := p.header.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Fatalf("%s: X-Content-Type-Options %q", path, got)
	}
	if got := p.header.Get("Referrer-Policy"); got != "same-origin" {
		t.Fatalf("%s: Referrer-Policy %q", path, got)
	}
	tags := scriptTagRE.FindAllString(p.body, -1)
	if strings.Contains(p.header.Get("Content-Type"), "text/html") && len(tags) == 0 {
		t.Fatalf("%s: a page without any script (the layout loads theme.js)", path)
	}
	for _, tag := range tags {
		a := nonceAttrRE.FindStringSubmatch(tag)
		if a == nil || a[1] != m[1] {
			t.Fatalf("%s: %s does not carry the response's nonce %q", path, tag, m[1])
		}
	}
	return m[1]
}

// Every page, error pages included, has a CSP nonce of its own, on every script it
// has, and a second load of the same page has another.
func TestEveryPageHasAFreshNonceOnEveryScript(t *testing.T) {
	_, ts := newTestServer(t, Options{MaxSessions: 20})
	id, _ := playSome(t, ts, "/play/ricart-agrawala?n=4")
	l := linkOf(t, ts, id)
	paths := []struct {
		path   string
		status int
	}{
		{"/", 200},
		{"/play/ricart-agrawala", 200},
		{"/play/bully?n=4", 200},
		{"/s/bully-best-case", 200},
		{l.Path, 200},
		{l.Embed, 200},
		{"/embed/play/ricart-agrawala?n=3", 200},
		{"/compare?alg=ricart-agrawala&n=3&seeds=1", 200},
		{"/compare?alg=nope", 400},
		{"/join", 200},
		{"/l/AAAAAA", 404},
		{"/nope", 404},
		{"/play/nope", 404},
		{"/play/ricart-agrawala?n=zz", 400},
		{"/r/v1.bully.AAAA", 400},
	}
	seen := map[string]string{}
	for _, p := range paths {
		c := browser(t)
		first := get(t, c, ts.URL+p.path)
		if first.status != p.status {
			t.Fatalf("%s: status %d, want %d", p.path, first.status, p.status)
		}
		n1 := checkNonce(t, p.path, first)
		n2 := checkNonce(t, p.path, get(t, c, ts.URL+p.path))
		if n1 == n2 {
			t.Fatalf("%s: two loads share the nonce %q", p.path, n1)
		}
		for _, n := range []string{n1, n2} {
			if other, dup := seen[n]; dup {
				t.Fatalf("%s and %s share the nonce %q", p.path, other, n)
			}
			seen[n] = p.path
		}
	}
	// The JSON script of the play page is one of the scripts checked above.
	if p := get(t, browser(t), ts.URL+"/play/ricart-agrawala"); !strings.Contains(p.body, `<script id="spec" type="application/json" nonce="`) {
		t.Fatal("the play page's spec script has no nonce")
	}
}

// The embed routes keep their relaxed framing, nonce included; every other page
// refuses to be framed.
func TestEmbedPolicyKeepsTheNonceWithoutFrameAncestors(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	p := get(t, browser(t), ts.URL+"/embed/play/bully?n=3")
	checkNonce(t, "/embed/play/bully", p)
	if csp := p.header.Get("Content-Security-Policy"); strings.Contains(csp, "frame-ancestors") {
		t.Fatalf("embed page not framable: %q", csp)
	}
	for _, path := range []string{"/play/bully?n=3", "/embed/s/nope"} {
		p := get(t, browser(t), ts.URL+path)
		checkNonce(t, path, p)
		if csp := p.header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Fatalf("%s: framable: %q", path, csp)
		}
	}
}

// The pages the limits and caps answer with have the nonce too.
func TestLimitAndCapPagesHaveTheNonce(t *testing.T) {
	_, ts := newTestServer(t, Options{MaxSessions: 1, Limits: ratelimit.Limits{Pages: ratelimit.Rate{Per: 1, Every: time.Hour, Burst: 3}}})
	c := browser(t)
	first := get(t, c, ts.URL+"/play/bully")
	if first.status != http.StatusOK {
		t.Fatalf("first run: %d", first.status)
	}
	dial(t, ts, sessionOf(t, first)).next("snapshot") // watched: a full server evicts an unwatched run instead
	full := get(t, browser(t), ts.URL+"/play/ring")
	if full.status != http.StatusServiceUnavailable {
		t.Fatalf("second run on a full server: %d", full.status)
	}
	checkNonce(t, "server full", full)
	get(t, c, ts.URL+"/")
	limited := get(t, c, ts.URL+"/")
	if limited.status != http.StatusTooManyRequests {
		t.Fatalf("fourth page: %d", limited.status)
	}
	checkNonce(t, "rate limited", limited)
}
