package web

import (
	"net/http"
	"strings"
	"testing"
)

// The front page lets a student join a lecture by its code: the form goes to /join,
// which answers a wrong code with a message naming the problem.
func TestCatalogueOffersTheJoinForm(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	p := get(t, browser(t), ts.URL+"/")
	if !strings.Contains(p.body, `action="/join"`) || !strings.Contains(p.body, `name="code"`) {
		t.Fatal("the catalogue has no join form")
	}
	wrong := get(t, browser(t), ts.URL+"/join?code=ZZZZZZ")
	if wrong.status != http.StatusNotFound || !strings.Contains(wrong.body, `role="alert"`) {
		t.Fatalf("wrong code: status %d, no alert naming the problem", wrong.status)
	}
}
