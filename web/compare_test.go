package web

import (
	"html"
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
	// One dashed curve per distinct figure, the notes' and the derived ones: figures
	// with the same values share one. Messages per entry: RA 2(N-1) (four notes and
	// derived), central 3; the token ring's "1 to ∞" has no value. Client delay: RA
	// 2(n - 1) (001) and 2 (003, derived), central 2, the token ring n/2 (003). Sync
	// delay: RA 1 (003, derived), central 2, the token ring n/2 (003).
	want := map[string]int{"mutex-messages-per-entry": 2, "mutex-client-delay": 4, "mutex-sync-delay": 3}
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

// Elections get their own charts (messages, time). Bully's figures give four curves:
// best case N-2 (the notes) and N-1 (derived), worst case 002's
// ((N-1) + ... + 1) + N-1 and the derived N²-N-1; Chang-Roberts four: best 2N
// (derived), worst 3N-1 (000, 003 and derived), average 2n + n/2 (000) and the
// derived 2N + (N-1)/2.
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
	if n := len(theoryRE.FindAllString(svg, -1)); n != 8 {
		t.Errorf("%d theory election polylines, want 4 (Bully) + 4 (Chang-Roberts)", n)
	}
	if _, ok := cs["mutex-messages-per-entry"]; !ok {
		t.Error("the central coordinator's chart is missing")
	}
	if !strings.Contains(p.body, `id="table-election"`) || !strings.Contains(p.body, `id="table-mutex"`) {
		t.Error("one table per family")
	}
}

// "The notes" column shows the notes' formulas as the notes write them, naming the
// notes, each evaluated for N; the project's own figures sit apart under "derived
// here". For Bully at N = 6 the notes give N-2 (000, 002, 003) for the best case and
// 002 gives ((N-1) + ... + 1) + N-1 = 20 for the worst, while the project derives N-1
// and N²-N-1 = 29: neither derived figure may appear as the notes'.
func TestCompareNotesColumnShowsTheNotes(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	p := get(t, browser(t), ts.URL+"/compare?alg=bully&alg=maekawa&n=6&seeds=1")
	if p.status != http.StatusOK {
		t.Fatalf("status %d", p.status)
	}
	cols := regexp.MustCompile(`(?s)<table class="compare-table" id="table-election">.*?</thead>`).FindString(p.body)
	if !strings.Contains(cols, `<th scope="col">messages per election</th><th scope="col">the notes</th><th scope="col">derived here</th>`) {
		t.Fatalf("no notes and derived columns beside the measure:\n%s", cols)
	}
	cells := rowCells(t, p.body, "Bully")
	// algorithm, N, runs, then messages: measured, the notes, derived.
	notes, derived := cells[4], cells[5]
	for _, want := range []string{"n-2 coordinator messages = 4 (000)", "N-2 COORDINATOR messages ⇒ O(N) messages = 4 (002)",
		"N-2 messages per election = 4 (003)", "((N-1) + (N-2) + … + 1) + N-1 ⇒ O(N²) = 20 (002)", "O(n²) (000)", "O(N²) (003)"} {
		if !strings.Contains(notes, want) {
			t.Errorf("the notes' cell %q lacks %q", notes, want)
		}
	}
	if strings.Contains(notes, "N²-N-1") || strings.Contains(notes, "N-1 =") {
		t.Errorf("the notes' cell shows a derived figure: %q", notes)
	}
	if !strings.Contains(derived, "N-1 = 5") || !strings.Contains(derived, "N²-N-1 = 29") {
		t.Errorf("the derived cell %q, want N-1 = 5 and N²-N-1 = 29", derived)
	}
	// Maekawa: the notes' 3√N, not 3(K-1) with the project's K.
	m := rowCells(t, p.body, "Maekawa's voting algorithm")
	if !strings.Contains(m[4], "3√N = 7.3 (002)") || strings.Contains(m[4], "K-1") || !strings.Contains(m[5], "3(K-1)") {
		t.Errorf("Maekawa's messages per entry: notes %q, derived %q", m[4], m[5])
	}
}

// rowCells returns the text of the cells of the first table row of algorithm title.
func rowCells(t *testing.T, body, title string) []string {
	t.Helper()
	row := regexp.MustCompile(`(?s)<tr>\s*<th scope="row">` + regexp.QuoteMeta(html.EscapeString(title)) + `</th>.*?</tr>`).FindString(body)
	if row == "" {
		t.Fatalf("no row for %s", title)
	}
	var out []string
	for _, m := range regexp.MustCompile(`(?s)<t[hd][^>]*>(.*?)</t[hd]>`).FindAllStringSubmatch(row, -1) {
		out = append(out, html.UnescapeString(m[1]))
	}
	return out
}

// Heavy load: Ricart-Agrawala never grants out of causal order; the RA token algorithm
// (round-robin) does.
func TestCompareHeavyShowsTheOrderingProperty(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	p := get(t, browser(t), ts.URL+"/compare?alg=ricart-agrawala&alg=ricart-agrawala-token&n=5&workload=heavy&seeds=3")
	if p.status != http.StatusOK {
		t.Fatalf("status %d", p.status)
	}
	ra := regexp.MustCompile(`(?s)<th scope="row">Ricart-Agrawala</th>.*?</tr>`).FindString(p.body)
	tok := regexp.MustCompile(`(?s)<th scope="row">Ricart-Agrawala token algorithm</th>.*?</tr>`).FindString(p.body)
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
