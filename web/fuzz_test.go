package web

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/runtime/cost"
	"github.com/teach-dist/playground/runtime/lecture"
	"github.com/teach-dist/playground/scenarios"
)

// Fuzz targets for every parser that reads what a visitor sends (docs/operations.md,
// "Fuzzing"). Their seed corpora (testdata/fuzz/<target>, plus the f.Add seeds) run
// with plain `go test`; `make fuzz` runs each for a while. Share links have theirs in
// scenarios (FuzzDecodeLink, FuzzDecodeLinkJSON).

// FuzzScenarioParse: scenario v1 JSON never panics; what it accepts can be built into
// a run, and encoding it gives a document that parses to the same encoding.
func FuzzScenarioParse(f *testing.F) {
	for _, e := range scenarios.Curated() {
		b, err := json.Marshal(e.Scenario)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"version":1,"algorithm":"bully","nodes":3,"events":[{"at":0,"do":"elect","node":0}]}`))
	f.Add([]byte(`{"version":1,"algorithm":"ricart-agrawala","network":{"delay":2,"hold":true}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := scenarios.Parse(data)
		if err != nil {
			if sc != nil {
				t.Fatalf("an error with a scenario: %v", err)
			}
			return
		}
		if _, err := sc.Config(); err != nil {
			t.Logf("valid but cannot run: %v", err) // allowed: the kernel may refuse a configuration
		}
		once, err := json.Marshal(sc)
		if err != nil {
			t.Fatalf("cannot encode an accepted scenario: %v", err)
		}
		again, err := scenarios.Parse(once)
		if err != nil {
			t.Fatalf("its own encoding does not parse: %v\n%s", err, once)
		}
		twice, _ := json.Marshal(again)
		if !bytes.Equal(once, twice) {
			t.Fatalf("encoding is not stable:\n%s\n%s", once, twice)
		}
	})
}

// FuzzScenarioFromQuery: /play's query never panics; what it accepts is a JSON
// scenario document that scenarios.Parse judges (accepts or refuses by field).
func FuzzScenarioFromQuery(f *testing.F) {
	for _, s := range []string{"", "n=5&seed=3", "delay=1-3&fifo=true&loss=0.1", "hold=1&cs=0", "n=x", "delay=3-1", "bogus=1", "n=1&n=4"} {
		f.Add("ricart-agrawala", s)
	}
	f.Add("bully", "n=8&seed=18446744073709551615")
	f.Fuzz(func(t *testing.T, slug, query string) {
		if _, ok := algorithms.Lookup(slug); !ok {
			slug = "ricart-agrawala" // the handler answers 404 before the query is read
		}
		q, err := url.ParseQuery(query)
		if err != nil {
			return // the router would not get here either: net/url keeps what parses
		}
		doc, err := scenarioFromQuery(slug, q)
		if err != nil {
			if !strings.Contains(err.Error(), ":") {
				t.Fatalf("error %q does not name the parameter", err)
			}
			return
		}
		var v map[string]any
		if err := json.Unmarshal(doc, &v); err != nil || v["version"] != float64(scenarios.Version) || v["algorithm"] != slug {
			t.Fatalf("not a scenario document: %s (%v)", doc, err)
		}
		if _, err := scenarios.Parse(doc); err != nil && !strings.HasPrefix(err.Error(), "scenario: ") {
			t.Fatalf("refused without naming the field: %v", err)
		}
	})
}

// FuzzDecodeTrace: a trace v1 upload never panics the decoder or the measurements.
func FuzzDecodeTrace(f *testing.F) {
	f.Add([]byte(`{"seq":0,"t":0,"type":"request","node":1}
{"seq":1,"t":0,"type":"send","msg":{"id":1,"type":"REQUEST","from":1,"to":0,"ts":1}}
{"seq":2,"t":2,"type":"deliver","msg":{"id":1,"type":"REQUEST","from":1,"to":0,"ts":1}}
{"seq":3,"t":2,"type":"rule","node":0,"rule":"RH1"}
{"seq":4,"t":3,"type":"enter","node":1}
{"seq":5,"t":5,"type":"exit","node":1}
{"seq":6,"t":9,"type":"end","messages":1,"entries":1}
`))
	f.Add([]byte(`{"seq":0,"t":0,"type":"elect","node":2}` + "\n" + `{"seq":1,"t":3,"type":"leader","node":2,"leader":4}` + "\n"))
	f.Add([]byte("{\"seq\":0,\"type\":\"future-kind\"}\n\n{\"seq\":1"))
	spec, ok := algorithms.Lookup("ricart-agrawala")
	if !ok {
		f.Fatal("no ricart-agrawala")
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = cost.DecodeTrace(bytes.NewReader(data), func(cost.Event) {})
		_, _ = cost.FromTrace(bytes.NewReader(data), spec, nil, cost.Options{})
		_, _ = cost.FromTrace(bytes.NewReader(data), spec, []int{0, 1, 2}, cost.Options{})
	})
}

// FuzzJoinCode: whatever is typed into the join form, a code comes out only if it is
// one (CodeLen characters of the alphabet), and normalizing is idempotent and undoes
// the display form.
func FuzzJoinCode(f *testing.F) {
	for _, s := range []string{"KXT49P", "kxt 49p", "KXT-49P", " k x t 4 9 p ", "KXT49", "KXT49PP", "KXT4OP", "ÄXT49P", "", "\t-\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, typed string) {
		code, ok := lecture.NormalizeCode(typed)
		if !ok {
			if code != "" {
				t.Fatalf("%q: refused but gave %q", typed, code)
			}
			return
		}
		if len(code) != lecture.CodeLen || strings.Trim(code, lecture.CodeAlphabet) != "" {
			t.Fatalf("%q: %q is not a code", typed, code)
		}
		if again, ok := lecture.NormalizeCode(code); !ok || again != code {
			t.Fatalf("%q: not idempotent: %q", code, again)
		}
		if back, ok := lecture.NormalizeCode(lecture.DisplayCode(code)); !ok || back != code {
			t.Fatalf("%q: the display form %q reads back as %q", code, lecture.DisplayCode(code), back)
		}
	})
}
