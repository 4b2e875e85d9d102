package web

import (
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var (
	measuredRE = regexp.MustCompile(`<polyline class="measured s\d"`)
	theoryRE   = regexp.MustCompile(`<polyline class="theory s\d d\d"`)
	chartRE    = regexp.MustCompile(`(?s)<svg class="chart" id="chart-([a-z-]+)".*?</svg>`)
)

// charts returns each chart's SVG by id.
func charts(body string) map[string]string {
	out := map[string]string{}
	for _, m := range chartRE.FindAllStringSubmatch(body, -1) {
		out[m[1]] = m[0]
	}
	return out
}

// The compare page runs what the URL asks and draws, per chart, one solid polyline per
// algorithm plus a dashed one per formula of the notes that has a value, with a title,
// a description and the table as fallback; no inline style anywhere (CSP).
func TestCompareDrawsMeasuredAndTheory(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	p := get(t, browser(t), ts.URL+"/compare?alg=ricart-agrawala&alg=central&alg=token-ring&n=3-6&workload=light&seeds=2")
	if p.status != http.StatusOK {
		t.Fatalf("status %d: %s", p.status, p.body)
	}
	cs := charts(p.body)
	// Messages per entry: RA 2(N-1), central 3; the token ring's "1 to ∞" has no value.
	// Client delay: RA and central 2T (the token ring's is a range). Sync delay: RA T,
	// central 2T.
	want := map[string]int{"mutex-messages-per-entry": 2, "mutex-client-delay": 2, "mutex-sync-delay": 2}
	for id, theories := range want {
		svg, ok := cs[id]
		if !ok {
			t.Fatalf("no chart %s; charts: %v", id, slices.Collect(mapKeys(cs)))
		}
		if n := len(measuredRE.FindAllString(svg, -1)); n != 3 {
			t.Errorf("%s: %d measured polylines, want one per algorithm (3)", id, n)
		}
		if n := len(theoryRE.FindAllString(svg, -1)); n != theories {
			t.Errorf("%s: %d theory polylines, want %d", id, n, theories)
		}
		if !strings.Contains(svg, `role="img"`) || !strings.Contains(svg, "<title id=") || !strings.Contains(svg, "<desc id=") || !strings.Contains(svg, `stroke-dasharray="7 5"`) {
			t.Errorf("%s: not an accessible chart with dashed theory:\n%s", id, svg)
		}
	}
	if strings.Contains(p.body, "style=") {
		t.Error("the page has an inline style attribute, which the CSP refuses")
	}
	if !strings.Contains(p.body, `<table class="compare-table" id="table-mutex"`) || strings.Count(p.body, `<th scope="row">`) != 3*4 {
		t.Error("the table does not have a row per algorithm and N")
	}
	// RA without contention: exactly 2(N-1) per entry at every N.
	for _, row := range []string{`<th scope="row">Ricart-Agrawala</th><td>3</td><td>2</td><td>4</td>`, `<th scope="row">Ricart-Agrawala</th><td>6</td><td>2</td><td>10</td>`} {
		if !strings.Contains(p.body, row) {
			t.Errorf("no row %s", row)
		}
	}
	// The form shows the choices, and the page links to itself.
	if !strings.Contains(p.body, `value="ricart-agrawala" checked`) || strings.Contains(p.body, `value="lamport" checked`) || !strings.Contains(p.body, `value="3-6"`) {
		t.Error("the form does not show the choices")
	}
	if !strings.Contains(p.body, `href="/compare?alg=ricart-agrawala&amp;alg=central&amp;alg=token-ring&amp;n=3-6&amp;seeds=2&amp;workload=light"`) {
		t.Error("no canonical link to the comparison")
	}
}

// Elections get their own charts (messages, time); Bully's theory gives two curves
// (best, worst), Chang-Roberts three (best, worst, average).
func TestCompareElections(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	p := get(t, browser(t), ts.URL+"/compare?alg=bully&alg=ring&alg=central&n=4,6&seeds=2")
	if p.status != http.StatusOK {
		t.Fatalf("status %d: %s", p.status, p.body)
	}
	cs := charts(p.body)
	svg := cs["election-election-messages"]
	if n := len(measuredRE.FindAllString(svg, -1)); n != 2 {
		t.Errorf("%d measured election polylines, want 2", n)
	}
	if n := len(theoryRE.FindAllString(svg, -1)); n != 5 {
		t.Errorf("%d theory election polylines, want 2 (Bully) + 3 (Chang-Roberts)", n)
	}
	if _, ok := cs["mutex-messages-per-entry"]; !ok {
		t.Error("the central coordinator's chart is missing")
	}
	if !strings.Contains(p.body, `id="table-election"`) || !strings.Contains(p.body, `id="table-mutex"`) {
		t.Error("one table per family")
	}
}

// Heavy load: Ricart-Agrawala never grants out of causal order; the RA token algorithm
// (round-robin) does.
func TestCompareHeavyShowsTheOrderingProperty(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	p := get(t, browser(t), ts.URL+"/compare?alg=ricart-agrawala&alg=ricart-agrawala-token&n=5&workload=heavy&seeds=3")
	if p.status != http.StatusOK {
		t.Fatalf("status %d", p.status)
	}
	ra := regexp.MustCompile(`<th scope="row">Ricart-Agrawala</th>.*?</tr>`).FindString(p.body)
	tok := regexp.MustCompile(`<th scope="row">Ricart-Agrawala token algorithm</th>.*?</tr>`).FindString(p.body)
	order := regexp.MustCompile(`>(\d+) of (\d+)<`)
	rm, tm := order.FindStringSubmatch(ra), order.FindStringSubmatch(tok)
	if rm == nil || tm == nil {
		t.Fatalf("no ordering cells:\n%s\n%s", ra, tok)
	}
	if rm[1] != "0" || rm[2] == "0" {
		t.Errorf("Ricart-Agrawala: %s of %s grants out of causal order, want 0 of some", rm[1], rm[2])
	}
	if tm[1] == "0" {
		t.Errorf("RA token: %s of %s out of causal order, want some", tm[1], tm[2])
	}
}

// A bad parameter is a 400 page that names it and keeps the form to fix it.
func TestCompareBadParameters(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	tests := []struct{ query, param string }{
		{"alg=quicksort", "alg"},
		{"alg=ricart-agrawala&n=1-5", "n"},
		{"alg=ricart-agrawala&n=9-3", "n"},
		{"alg=ricart-agrawala&n=3-40", "n"},
		{"alg=ricart-agrawala&n=x", "n"},
		{"alg=ricart-agrawala&workload=medium", "workload"},
		{"alg=ricart-agrawala&seeds=0", "seeds"},
		{"alg=ricart-agrawala&seeds=99", "seeds"},
		{"alg=ricart-agrawala&colour=red", "colour"},
		{"alg=central&alg=lamport&alg=maekawa&alg=bully&n=2-17&seeds=10", "n"},        // too many runs
		{"alg=bakery&alg=token-ring&alg=raymond&n=17-32&seeds=4&workload=heavy", "n"}, // too much work
	}
	for _, tc := range tests {
		p := get(t, browser(t), ts.URL+"/compare?"+tc.query)
		if p.status != http.StatusBadRequest || !strings.Contains(p.body, `data-param="`+tc.param+`"`) || !strings.Contains(p.body, `role="alert"`) {
			t.Errorf("%s: status %d, want 400 naming %s", tc.query, p.status, tc.param)
		}
		if !strings.Contains(p.body, `<form class="compare-form"`) || strings.Contains(p.body, `<svg class="chart"`) {
			t.Errorf("%s: the error page should keep the form and draw nothing", tc.query)
		}
	}
}

// With no query the page compares the defaults; the catalogue links to it.
func TestCompareDefaultsAndCatalogueLink(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	p := get(t, browser(t), ts.URL+"/compare")
	if p.status != http.StatusOK || len(charts(p.body)) != 3 {
		t.Fatalf("status %d, %d charts", p.status, len(charts(p.body)))
	}
	if c := get(t, browser(t), ts.URL+"/"); !strings.Contains(c.body, `href="/compare"`) {
		t.Error("the catalogue does not link to the compare page")
	}
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

var _ = url.Values{}
