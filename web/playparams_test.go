package web

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/teach-dist/playground/scenarios"
)

// The five setups a teacher must reach from the page without a curated link, as /play
// queries, with the params they give the scenario.
var teacherSetups = []struct {
	slug, query, params string
}{
	{"maekawa", "p.variant=deadlock-free", `{"variant":"deadlock-free"}`},
	{"central", "p.denied=true", `{"denied":true}`},
	{"token-ring", "p.regenerate=20", `{"regenerate":20}`},
	{"bully", `p.heartbeat={"period":5,"timeout":12}`, `{"heartbeat":{"period":5,"timeout":12}}`},
	{"raymond", `p.tree={"1":0,"2":1,"3":2,"4":3}&n=5`, `{"tree":{"1":0,"2":1,"3":2,"4":3}}`},
}

// equalJSON compares two JSON texts by value.
func equalJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

func TestScenarioFromQueryParams(t *testing.T) {
	for _, tc := range teacherSetups {
		q, err := url.ParseQuery(tc.query)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := scenarioFromQuery(tc.slug, q)
		if err != nil {
			t.Fatalf("%s?%s: %v", tc.slug, tc.query, err)
		}
		sc, err := scenarios.Parse(doc)
		if err != nil {
			t.Fatalf("%s?%s: %v", tc.slug, tc.query, err)
		}
		if !equalJSON(t, sc.Params, []byte(tc.params)) {
			t.Errorf("%s?%s: params %s, want %s", tc.slug, tc.query, sc.Params, tc.params)
		}
	}
	// Every refusal names the field: the URL's own (p.<name>) for what is not even the
	// right type, the params decoder's (params.<name>) for a value it refuses.
	for _, tc := range []struct{ slug, query, want string }{
		{"central", "p.denied=maybe", `p.denied: "maybe" is not true or false`},
		{"central", "p.color=red", `p.color: central has no param "color" (allowed: p.coordinator, p.denied)`},
		{"lamport", "p.x=1", `p.x: lamport has no param "x" (it takes none)`},
		{"token-ring", "p.hop=soon", `p.hop: "soon" is not a whole number`},
		{"token-ring", "p.hop=0", "params.hop"},
		{"central", "p.coordinator=99", "params.coordinator"},
		{"maekawa", "p.variant=fast", "params.variant"},
		{"raymond", "p.tree={", `p.tree: "{" is not JSON`},
		{"raymond", `p.tree={"1":1}`, "params.tree"},
		{"bully", `p.heartbeat={"period":5,"delay":2,"timeout":9}`, "params.heartbeat.timeout"},
	} {
		q, _ := url.ParseQuery(tc.query)
		doc, err := scenarioFromQuery(tc.slug, q)
		if err == nil {
			_, err = scenarios.Parse(doc)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s?%s: error %v, want one saying %q", tc.slug, tc.query, err, tc.want)
		}
	}
}

// A run set up with params, by the URL or by the page's Run setup (a reset), keeps
// them in its share link.
func TestParamsRoundTripThroughLinks(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	for _, tc := range teacherSetups {
		t.Run(tc.slug, func(t *testing.T) {
			id := openSession(t, ts, "/play/"+tc.slug+"?"+url.PathEscape(tc.query))
			linkParams(t, ts, id, tc.params)

			// The page's Run setup: a reset with the params in the scenario.
			plain := openSession(t, ts, "/play/"+tc.slug+"?seed=3")
			c := dial(t, ts, plain)
			c.next("snapshot")
			c.send(`{"type":"reset","ref":1,"scenario":{"version":2,"algorithm":"` + tc.slug + `","nodes":5,"params":` + tc.params + `}}`)
			c.next("hello")
			c.next("snapshot")
			linkParams(t, ts, plain, tc.params)
		})
	}
}

func linkParams(t *testing.T, ts *httptest.Server, id string, want string) {
	t.Helper()
	l, err := scenarios.DecodeLink(strings.TrimPrefix(linkOf(t, ts, id).Path, "/r/"))
	if err != nil {
		t.Fatal(err)
	}
	if !equalJSON(t, l.Scenario.Params, []byte(want)) {
		t.Errorf("the link carries params %s, want %s", l.Scenario.Params, want)
	}
}
