package web

import (
	"net/http"
	"testing"

	"github.com/teach-dist/playground/web/ratelimit"
)

// Opening an algorithm from the catalogue starts a fresh run, even
// when this browser has one at that address; the page it lands on is the plain address,
// whose reload resumes that fresh run.
func TestFreshLinksStartANewRunThatAReloadResumes(t *testing.T) {
	for _, tc := range []struct{ path, fresh, lands string }{
		{"/play/bully", "/play/bully?fresh=1", "/play/bully"},
		{"/play/ricart-agrawala?n=3&seed=4", "/play/ricart-agrawala?n=3&seed=4&fresh=1", "/play/ricart-agrawala?n=3&seed=4"},
		{"/s/bully-best-case", "/s/bully-best-case?fresh=1", "/s/bully-best-case"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			srv, ts := newTestServer(t, Options{})
			br := noRedirect(t)
			old := sessionOf(t, get(t, br, ts.URL+tc.path))
			if again := sessionOf(t, get(t, br, ts.URL+tc.path)); again != old {
				t.Fatal("the plain address did not resume this browser's run")
			}
			p := get(t, br, ts.URL+tc.fresh)
			if p.status != http.StatusSeeOther || p.header.Get("Location") != tc.lands {
				t.Fatalf("%s: %d to %q, want 303 to %s", tc.fresh, p.status, p.header.Get("Location"), tc.lands)
			}
			fresh := sessionOf(t, get(t, br, ts.URL+tc.lands))
			if fresh == old {
				t.Fatal("the fresh link resumed the old run")
			}
			if reload := sessionOf(t, get(t, br, ts.URL+tc.lands)); reload != fresh {
				t.Fatal("a reload after the fresh link did not resume the fresh run")
			}
			if n := srv.Sessions().Len(); n != 2 {
				t.Fatalf("%d sessions, want 2: the old run and the fresh one", n)
			}
		})
	}
}

// A fresh link starts a run, so it is charged to the session starts' rate like a first
// visit; the plain address it lands on resumes and is not.
func TestFreshLinksCountAsRunStarts(t *testing.T) {
	srv, ts := newTestServer(t, Options{Limits: ratelimit.Limits{Sessions: slow(2)}})
	br := browser(t) // follows the redirect
	get(t, br, ts.URL+"/play/bully?fresh=1")
	get(t, br, ts.URL+"/play/bully?fresh=1")
	if n := srv.Sessions().Len(); n != 2 {
		t.Fatalf("%d sessions after two fresh links, want 2", n)
	}
	if p := get(t, br, ts.URL+"/play/bully"); p.status != http.StatusOK {
		t.Fatalf("the plain address after them: %d", p.status)
	}
	if p := get(t, br, ts.URL+"/play/bully?fresh=1"); p.status != http.StatusTooManyRequests {
		t.Fatalf("a third fresh link: %d, want 429", p.status)
	}
}
