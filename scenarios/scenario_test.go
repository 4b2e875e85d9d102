package scenarios

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
)

var update = flag.Bool("update", false, "rewrite the golden traces in testdata/")

func trace(t *testing.T, sc *Scenario) []byte {
	t.Helper()
	cfg, err := sc.Config()
	if err != nil {
		t.Fatal(err)
	}
	var b []byte
	s, err := sim.New(cfg, sim.NewEncoder(cfg.Spec, cfg.IDs).Lines(&b))
	if err != nil {
		t.Fatalf("seed %d: %v", sc.Seed, err)
	}
	if err := s.Run(); err != nil {
		t.Fatalf("seed %d: %v", sc.Seed, err)
	}
	return b
}

// Every curated scenario has a golden trace; a change in one is a change in semantics.
// Regenerate with: go test ./scenarios -run TestGoldenTraces -update
func TestGoldenTraces(t *testing.T) {
	for _, e := range Curated() {
		t.Run(e.Name, func(t *testing.T) {
			got := trace(t, e.Scenario)
			path := filepath.Join("testdata", "golden", e.Name+".jsonl")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("seed %d: trace differs from %s (run with -update if the change is meant)\n%s", e.Scenario.Seed, path, firstDiff(got, want))
			}
		})
	}
}

func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) && i < len(w); i++ {
		if g[i] != w[i] {
			return "line " + itoa(i+1) + ":\n got " + g[i] + "\nwant " + w[i]
		}
	}
	return "lengths differ: " + itoa(len(g)) + " vs " + itoa(len(w)) + " lines"
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestSameSeedSameTraceDifferentSeedDifferentInterleaving(t *testing.T) {
	for _, e := range Curated() {
		sc := *e.Scenario
		a, b := trace(t, &sc), trace(t, &sc)
		if !bytes.Equal(a, b) {
			t.Fatalf("%s seed %d: two runs differ", e.Name, sc.Seed)
		}
	}
	// With uniform delays, other seeds reorder deliveries.
	sc, _ := Lookup("ricart-agrawala-concurrent")
	base := *sc
	ref := trace(t, &base)
	differ := 0
	for seed := uint64(100); seed < 120; seed++ {
		other := base
		other.Seed = seed
		if !bytes.Equal(trace(t, &other), ref) {
			differ++
		}
	}
	if differ < 15 {
		t.Fatalf("only %d of 20 other seeds changed the interleaving", differ)
	}
}

func TestCuratedScenariosAreDocumented(t *testing.T) {
	if len(Curated()) == 0 {
		t.Fatal("no curated scenarios")
	}
	for _, e := range Curated() {
		if e.Scenario.Title == "" || len(e.Scenario.About) < 80 {
			t.Errorf("%s: needs a title and a paragraph of explanation", e.Name)
		}
		if _, ok := Lookup(e.Name); !ok {
			t.Errorf("Lookup(%q) failed", e.Name)
		}
	}
}

// implementationWords are what a curated text must not say to a student: the names of
// the scenario file's fields and the code's, not the notes' or the page's words.
var implementationWords = regexp.MustCompile(`(?i:\bparams?\b|\bparams?\.|\.go\b|\bspec\b|\bkernel\b|\bgolden\b|\b(?:variant|construction|skip|announce|restart|ack|heartbeat|fifo) ?[:=]|\((?:ids|list|detector|none|grid|plane|basic)\)|\b(?:set|turn) \w+ to (?:true|false)\b)|\{"|\b[a-z]+[A-Z][A-Za-z]*\b`)

// Curated texts are read by students: they speak of the algorithm, the notes and the
// page's controls, never of params, field names or code, which mean nothing to them.
func TestCuratedTextsNameNoImplementationDetail(t *testing.T) {
	for _, e := range Curated() {
		texts := []string{e.Scenario.Title, e.Scenario.About}
		for _, c := range e.Scenario.Captions {
			texts = append(texts, c.Text)
		}
		for _, text := range texts {
			if m := implementationWords.FindString(text); m != "" {
				t.Errorf("%s: %q speaks of the implementation in %q", e.Name, m, text)
			}
		}
	}
}

// A caption must point at an event the run really produces.
func TestCaptionsPointAtEventsOfTheRun(t *testing.T) {
	for _, e := range Curated() {
		if len(e.Scenario.Captions) == 0 {
			continue
		}
		lines := bytes.Count(trace(t, e.Scenario), []byte("\n"))
		for _, c := range e.Scenario.Captions {
			if c.Seq >= int64(lines) {
				t.Errorf("%s: caption at seq %d, but the run has only %d events", e.Name, c.Seq, lines)
			}
		}
	}
}

// Every case a rule reports in a run has a sentence for the narration.
func TestRuleCasesHaveSentences(t *testing.T) {
	cases := 0
	for _, e := range Curated() {
		cfg, err := e.Scenario.Config()
		if err != nil {
			t.Fatal(err)
		}
		var rec sim.Recorder
		s, err := sim.New(cfg, rec.Sink())
		if err == nil {
			err = s.Run()
		}
		if err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
		for _, ev := range rec.Events {
			if ev.Type != sim.EvRule || ev.Why == "" {
				continue
			}
			cases++
			found := false
			for _, r := range cfg.Spec.Rules {
				if r.Label == ev.Rule && r.Why[ev.Why] != "" {
					found = true
				}
			}
			if !found {
				t.Errorf("%s: rule %s reports case %q, which has no sentence", e.Name, ev.Rule, ev.Why)
			}
		}
	}
	if cases == 0 {
		t.Fatal("no curated run reports a rule case")
	}
}

func TestDefaultsComeFromTheAlgorithm(t *testing.T) {
	sc, err := Parse([]byte(`{"version":1,"algorithm":"ricart-agrawala","seed":3}`))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := sc.Config()
	if err != nil {
		t.Fatal(err)
	}
	d := cfg.Spec.Defaults
	if len(cfg.IDs) != d.Nodes || cfg.Network.DelayMin != d.Delay[0] || cfg.Network.DelayMax != d.Delay[1] || cfg.CS != d.CS || cfg.Until != d.Until {
		t.Fatalf("config %+v does not carry the defaults %+v", cfg, d)
	}
	sc, err = Parse([]byte(`{"version":1,"algorithm":"ricart-agrawala","seed":3,"ids":[5,9,2],"network":{"delay":4,"fifo":true},"cs":0,
		"events":[{"at":1,"do":"request","node":9},{"at":2,"do":"partition","groups":[[5],[9,2]]},{"at":3,"do":"drop","from":9,"type":"REPLY"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ = sc.Config()
	if cfg.Network.DelayMin != 4 || cfg.Network.DelayMax != 4 || !cfg.Network.FIFO || cfg.CS != 0 {
		t.Fatalf("network/cs not taken: %+v", cfg)
	}
	if a := cfg.Actions[0]; a.Node != 1 || a.Do != sim.ActRequest {
		t.Fatalf("event ids not mapped to indexes: %+v", a)
	}
	if g := cfg.Actions[1].Groups; len(g) != 2 || g[0][0] != 0 || g[1][0] != 1 || g[1][1] != 2 {
		t.Fatalf("partition groups not mapped: %v", g)
	}
	if a := cfg.Actions[2]; a.From != 1 || a.To != -1 || a.Type != "REPLY" {
		t.Fatalf("drop filter not mapped: %+v", a)
	}
}

func TestBadScenariosNameTheField(t *testing.T) {
	const ok = `"version":1,"algorithm":"ricart-agrawala","seed":1`
	tests := []struct {
		name, doc, field, says string
	}{
		{"empty", ``, "", "empty document"},
		{"not json", `{"version":`, "", "not valid JSON"},
		{"trailing", `{` + ok + `} {}`, "", "after the scenario"},
		{"unknown field", `{` + ok + `,"colour":"red"}`, "colour", "unknown field"},
		{"wrong type", `{"version":"one","algorithm":"ricart-agrawala"}`, "version", "expected an integer"},
		{"nested wrong type", `{` + ok + `,"events":[{"at":1,"do":"request","node":"a"}]}`, "events.node", "expected an integer"},
		{"negative seed", `{` + ok + `,"seed":-5}`, "seed", "expected a whole number, 0 or more, got number -5"},
		{"version", `{"version":3,"algorithm":"ricart-agrawala"}`, "version", "not supported"},
		{"algorithm", `{"version":1,"algorithm":"paxos"}`, "algorithm", "allowed: "},
		{"nodes low", `{` + ok + `,"nodes":1}`, "nodes", "out of range (2 to 128)"},
		{"nodes high", `{` + ok + `,"nodes":129}`, "nodes", "out of range"},
		{"ids count", `{` + ok + `,"nodes":3,"ids":[1,2]}`, "ids", "has 2 ids"},
		{"ids twice", `{` + ok + `,"ids":[1,2,1]}`, "ids[2]", "appears twice"},
		{"ids negative", `{` + ok + `,"ids":[1,-2]}`, "ids[1]", "out of range"},
		{"delay order", `{` + ok + `,"network":{"delay":[3,1]}}`, "network.delay", "min <= max"},
		{"delay shape", `{` + ok + `,"network":{"delay":[1,2,3]}}`, "network.delay", "[min, max]"},
		{"delay type", `{` + ok + `,"network":{"delay":"slow"}}`, "network.delay", "[min, max]"},
		{"loss", `{` + ok + `,"network":{"loss":1.5}}`, "network.loss", "between 0 and 1"},
		{"network unknown", `{` + ok + `,"network":{"jitter":1}}`, "jitter", "unknown field"},
		{"cs", `{` + ok + `,"cs":-1}`, "cs", "out of range"},
		{"until", `{` + ok + `,"until":-5}`, "until", "out of range"},
		{"until huge", `{` + ok + `,"until":2000000000}`, "until", "out of range"},
		{"params", `{` + ok + `,"params":{"x":1}}`, "params", "takes no params"},
		{"do", `{` + ok + `,"events":[{"at":1,"do":"jump","node":0}]}`, "events[0].do", "allowed: request"},
		{"do family", `{` + ok + `,"events":[{"at":1,"do":"elect","node":0}]}`, "events[0].do", "needs an election algorithm"},
		{"node missing", `{` + ok + `,"events":[{"at":1,"do":"request"}]}`, "events[0].node", "needs a node"},
		{"node unknown", `{` + ok + `,"events":[{"at":1,"do":"crash","node":42}]}`, "events[0].node", "42 is not a node id"},
		{"at", `{` + ok + `,"events":[{"at":-1,"do":"crash","node":0}]}`, "events[0].at", "out of range"},
		{"drop from", `{` + ok + `,"events":[{"at":1,"do":"drop","from":9}]}`, "events[0].from", "not a node id"},
		{"drop type", `{` + ok + `,"events":[{"at":1,"do":"drop","type":"TOKEN"}]}`, "events[0].type", "not a message of ricart-agrawala"},
		{"drop node", `{` + ok + `,"events":[{"at":1,"do":"drop","node":1}]}`, "events[0].node", "takes no node"},
		{"deliver msg", `{` + ok + `,"events":[{"at":1,"do":"deliver"}]}`, "events[0].msg", "held message"},
		{"partition empty", `{` + ok + `,"events":[{"at":1,"do":"partition"}]}`, "events[0].groups", "at least one group"},
		{"partition empty group", `{` + ok + `,"events":[{"at":1,"do":"partition","groups":[[]]}]}`, "events[0].groups[0]", "is empty"},
		{"duplicate key", `{"version":1,"algorithm":"central","algorithm":"bully","seed":1}`, "algorithm", "given twice"},
		{"duplicate nested key", `{` + ok + `,"events":[{"at":1,"do":"crash","node":0,"node":1}]}`, "events[0].node", "given twice"},
		{"nodes explicit zero", `{` + ok + `,"nodes":0}`, "nodes", "0 is out of range"},
		{"until explicit zero", `{` + ok + `,"until":0}`, "until", "0 is out of range"},
		{"pending explicit zero", `{` + ok + `,"monitors":{"pending":0}}`, "monitors.pending", "not a bound"},
		{"partition twice", `{` + ok + `,"events":[{"at":1,"do":"partition","groups":[[0,1],[1]]}]}`, "events[0].groups[1][0]", "in two groups"},
		{"partition id", `{` + ok + `,"events":[{"at":1,"do":"partition","groups":[[0,7]]}]}`, "events[0].groups[0][1]", "not a node id"},
		{"stray fields", `{` + ok + `,"events":[{"at":1,"do":"crash","node":0,"msg":3}]}`, "events[0].msg", "msg belongs to drop and deliver only"},
		{"monitors", `{` + ok + `,"monitors":{"pending":-1}}`, "monitors.pending", "negative"},
		{"caption order", `{` + ok + `,"captions":[{"seq":5,"text":"a"},{"seq":5,"text":"b"}]}`, "captions[1].seq", "larger than the previous"},
		{"caption text", `{` + ok + `,"captions":[{"seq":5,"text":" "}]}`, "captions[0].text", "1 to 400"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.doc))
			if err == nil {
				t.Fatalf("accepted %s", tc.doc)
			}
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("error %T %v is not a *scenarios.Error", err, err)
			}
			if se.Field != tc.field {
				t.Errorf("field %q, want %q (%v)", se.Field, tc.field, err)
			}
			if !strings.Contains(err.Error(), tc.says) {
				t.Errorf("error %q does not say %q", err, tc.says)
			}
		})
	}
}

func TestOversizedDocumentIsRefused(t *testing.T) {
	big := bytes.Repeat([]byte(" "), MaxBytes+1)
	if _, err := Decode(bytes.NewReader(big)); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("got %v", err)
	}
}

func TestEncodeRoundTrips(t *testing.T) {
	for _, e := range Curated() {
		var buf bytes.Buffer
		if err := e.Scenario.Encode(&buf); err != nil {
			t.Fatal(err)
		}
		back, err := Parse(buf.Bytes())
		if err != nil {
			t.Fatalf("%s: re-reading the encoded scenario: %v", e.Name, err)
		}
		if !bytes.Equal(trace(t, back), trace(t, e.Scenario)) {
			t.Fatalf("%s: encoded scenario runs differently", e.Name)
		}
	}
}
