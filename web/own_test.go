package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// An algorithm written from scratch, from the catalogue's New algorithm: the page is
// headed by its own title, marked as the student's; the costs panel measures the run
// against the figures it declares.
func TestNewAlgorithmPageAndCosts(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	c := browser(t)
	cat := get(t, c, ts.URL+"/")
	for _, want := range []string{`href="/play/central?new=1&amp;fresh=1"`, `href="/play/bully?new=1&amp;fresh=1"`} {
		if !strings.Contains(cat.body, want) {
			t.Errorf("the catalogue has no New algorithm link %s", want)
		}
	}
	for _, c0 := range []struct{ path, title string }{
		{"/play/central?new=1", "My mutual exclusion"}, {"/play/bully?new=1", "My election"},
	} {
		p := get(t, c, ts.URL+c0.path)
		if p.status != http.StatusOK || !strings.Contains(p.body, `<h1 id="algo-title" data-page=`) || !strings.Contains(p.body, `">`+c0.title+`</h1>`) ||
			strings.Contains(p.body, `id="own-tag" hidden`) || !strings.Contains(p.body, "<title>"+c0.title+" · Distributed playground</title>") {
			t.Errorf("%s: status %d, not headed %q as the student's own", c0.path, p.status, c0.title)
		}
	}
	p := get(t, c, ts.URL+"/play/central?new=1&n=3")
	sess := sessionOf(t, p)
	var res struct {
		Metrics []struct {
			Name   string `json:"name"`
			Theory []struct {
				Name    string   `json:"name"`
				Formula string   `json:"formula"`
				Value   *float64 `json:"value"`
				Range   *struct {
					Low, High float64
				} `json:"range"`
			} `json:"theory"`
		} `json:"metrics"`
	}
	m := get(t, c, ts.URL+"/api/sessions/"+sess+"/metrics?step=1")
	if m.status != http.StatusOK || json.Unmarshal([]byte(m.body), &res) != nil {
		t.Fatalf("metrics: %d %s", m.status, m.body)
	}
	found := map[string]string{}
	for _, met := range res.Metrics {
		for _, th := range met.Theory {
			switch {
			case th.Value != nil:
				found[th.Name] = fmt.Sprint(*th.Value)
			case th.Range != nil:
				found[th.Name] = fmt.Sprintf("%v to %v", th.Range.Low, th.Range.High)
			}
		}
	}
	// The skeleton's "0 to 3" is one figure, a range, as a Go algorithm's would be.
	if found["messages per CS entry"] != "0 to 3" || found["messages to enter the CS"] != "2" {
		t.Fatalf("the costs panel's figures: %v\n%s", found, m.body)
	}
	if p := get(t, c, ts.URL+"/play/central?new=2"); p.status != http.StatusBadRequest || !strings.Contains(p.body, "new: ") {
		t.Errorf("new=2: %d", p.status)
	}
}
