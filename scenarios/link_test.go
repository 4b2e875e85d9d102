package scenarios

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
)

// liveRun plays scenario doc the way a session does: it steps the run and, every few
// steps, tries one intervention from the menu, recording the ones the kernel accepts
// (with the step they were made at) until it has want of them.
func liveRun(t testing.TB, doc string, want int, menu []sim.Action) (sim.Config, []sim.Intervention, int) {
	t.Helper()
	sc, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := sc.Config()
	if err != nil {
		t.Fatal(err)
	}
	s, err := sim.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ivs []sim.Intervention
	for k := 0; len(ivs) < want && k < 10*want+100; k++ {
		if k%2 == 0 {
			a := menu[k/2%len(menu)]
			switch err := s.Apply(a); {
			case err == nil:
				ivs = append(ivs, sim.Intervention{Step: s.Steps(), Action: a})
			case !errors.As(err, new(*sim.ActionError)):
				t.Fatalf("seed %d: apply %v: %v", cfg.Seed, a.Do, err)
			}
		}
		if _, err := s.Step(); err != nil {
			t.Fatalf("seed %d: %v", cfg.Seed, err)
		}
	}
	if len(ivs) < want {
		t.Fatalf("seed %d: only %d interventions were accepted", cfg.Seed, len(ivs))
	}
	return cfg, ivs, s.Steps()
}

// replayTrace is the trace v1 of cfg with ivs, up to step.
func replayTrace(t *testing.T, cfg sim.Config, ivs []sim.Intervention, step int) []byte {
	t.Helper()
	var b []byte
	if _, err := sim.Replay(cfg, ivs, step, sim.NewEncoder(cfg.Spec, cfg.IDs).Lines(&b)); err != nil {
		t.Fatalf("seed %d: replay: %v", cfg.Seed, err)
	}
	return b
}

const ra5 = `{"version":1,"algorithm":"ricart-agrawala","nodes":5,"ids":[40,10,30,20,50],"seed":7,
	"network":{"delay":[1,4],"fifo":false,"loss":0.05},"cs":3,
	"events":[{"at":0,"do":"request","node":10},{"at":2,"do":"request","node":50}],"until":400}`

// Every kind of live intervention a link can carry, node indexes for ra5.
var raMenu = []sim.Action{
	{Do: sim.ActRequest, Node: 0, From: -1, To: -1},
	{Do: sim.ActDrop, From: 1, To: -1, Type: "REPLY"},
	{Do: sim.ActRequest, Node: 3, From: -1, To: -1},
	{Do: sim.ActPartition, From: -1, To: -1, Groups: [][]int{{0, 1}, {4}}},
	{Do: sim.ActRequest, Node: 2, From: -1, To: -1},
	{Do: sim.ActHeal, From: -1, To: -1},
	{Do: sim.ActCrash, Node: 4, From: -1, To: -1},
	{Do: sim.ActRequest, Node: 1, From: -1, To: -1},
	{Do: sim.ActRecover, Node: 4, From: -1, To: -1},
	{Do: sim.ActDrop, From: -1, To: 2, Type: "REQUEST"},
	{Do: sim.ActNetwork, From: -1, To: -1, Net: sim.NetChange{Set: sim.NetDelay | sim.NetFIFO, DelayMin: 2, DelayMax: 5, FIFO: true}},
}

// A run with 20 live interventions survives the trip through a link: the replay of
// the decoded link is the original run, byte for byte, and the link stays short.
func TestLink_RoundTripReplaysTheSameRun(t *testing.T) {
	cfg, ivs, step := liveRun(t, ra5, 20, raMenu)
	kinds := map[sim.ActionKind]bool{}
	for _, iv := range ivs {
		kinds[iv.Action.Do] = true
	}
	for _, a := range raMenu {
		if !kinds[a.Do] {
			t.Fatalf("no %s intervention was accepted in the run", a.Do)
		}
	}
	link, err := LinkFromRun([]byte(ra5), cfg, ivs, step)
	if err != nil {
		t.Fatal(err)
	}
	path, err := link.Path()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("5 processes, %d interventions, step %d: %d characters (%s)", len(ivs), step, len(path), path)
	if len(path) >= 2000 {
		t.Errorf("the link is %d characters; want well under 2000", len(path))
	}
	if !strings.HasPrefix(path, "/r/v2.ricart-agrawala.") {
		t.Errorf("path %q does not start with /r/v2.ricart-agrawala.", path)
	}
	back, err := DecodeLink(strings.TrimPrefix(path, "/r/"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, link) {
		t.Fatalf("decoded link differs:\n got %+v\nwant %+v", back, link)
	}
	cfg2, ivs2, err := back.Run()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ivs2, ivs) {
		t.Fatalf("interventions differ:\n got %+v\nwant %+v", ivs2, ivs)
	}
	if want, got := replayTrace(t, cfg, ivs, step), replayTrace(t, cfg2, ivs2, back.Step); !bytes.Equal(got, want) {
		t.Fatalf("seed %d: the link's run differs from the original", cfg.Seed)
	}
}

// Elections, partitions with ids that are not indexes, and hold-mode deliveries.
func TestLink_RoundTripElectionAndHold(t *testing.T) {
	doc := `{"version":1,"algorithm":"bully","nodes":4,"ids":[3,9,1,7],"seed":3,"network":{"hold":true}}`
	sc, _ := Parse([]byte(doc))
	cfg, _ := sc.Config()
	s, err := sim.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ivs []sim.Intervention
	apply := func(a sim.Action) {
		t.Helper()
		if err := s.Apply(a); err != nil {
			t.Fatalf("seed %d: %v: %v", cfg.Seed, a.Do, err)
		}
		ivs = append(ivs, sim.Intervention{Step: s.Steps(), Action: a})
	}
	apply(sim.Action{Do: sim.ActCrash, Node: 1, From: -1, To: -1})
	apply(sim.Action{Do: sim.ActElect, Node: 2, From: -1, To: -1})
	for range 4 {
		in := s.InFlight()
		if len(in) == 0 {
			break
		}
		apply(sim.Action{Do: sim.ActDeliver, Msg: in[len(in)-1].Msg.ID, From: -1, To: -1})
		if _, err := s.Step(); err != nil {
			t.Fatal(err)
		}
	}
	apply(sim.Action{Do: sim.ActPartition, From: -1, To: -1, Groups: [][]int{{3, 0}}})
	link, err := LinkFromRun([]byte(doc), cfg, ivs, s.Steps())
	if err != nil {
		t.Fatal(err)
	}
	if g := link.Interventions[len(link.Interventions)-1].Event.Groups; !reflect.DeepEqual(g, [][]int{{7, 3}}) {
		t.Fatalf("partition groups in the link: %v; want ids [[7 3]]", g)
	}
	if n := link.Interventions[0].Event.Node; n == nil || *n != 9 {
		t.Fatalf("crash node in the link: %v; want id 9", n)
	}
	code, err := EncodeLink(link)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeLink(code)
	if err != nil {
		t.Fatal(err)
	}
	cfg2, ivs2, err := back.Run()
	if err != nil {
		t.Fatal(err)
	}
	if want, got := replayTrace(t, cfg, ivs, s.Steps()), replayTrace(t, cfg2, ivs2, back.Step); !bytes.Equal(got, want) {
		t.Fatalf("seed %d: the link's run differs from the original", cfg.Seed)
	}
}

// The intervention JSON is a scenario event with "step" for "at".
func TestLink_InterventionsAreScenarioEvents(t *testing.T) {
	sc, _ := Parse([]byte(ra5))
	node := 30
	l := Link{Scenario: sc, Step: 9, Interventions: []Intervention{{Step: 4, Event: Event{At: 77, Do: "crash", Node: &node}}}}
	code, err := EncodeLink(l)
	if err != nil {
		t.Fatal(err)
	}
	data := inflate(t, code)
	if !bytes.Contains(data, []byte(`"interventions":[{"step":4,"do":"crash","node":30}]`)) {
		t.Fatalf("wire JSON %s", data)
	}
}

func inflate(t *testing.T, code string) []byte {
	t.Helper()
	payload := code[strings.LastIndexByte(code, '.')+1:]
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := out.ReadFrom(flate.NewReader(bytes.NewReader(raw))); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// deflated builds a format-1 code around any JSON, as a tamperer would.
func deflated(slug, data string) string {
	var buf bytes.Buffer
	zw, _ := flate.NewWriter(&buf, flate.BestCompression)
	zw.Write([]byte(data))
	zw.Close()
	return "v1." + slug + "." + base64.RawURLEncoding.EncodeToString(buf.Bytes())
}

func TestDecodeLink_Errors(t *testing.T) {
	sc := `{"version":1,"algorithm":"ricart-agrawala","nodes":5,"seed":1}`
	good := deflated("ricart-agrawala", `{"scenario":`+sc+`,"step":3}`)
	if _, err := DecodeLink(good); err != nil {
		t.Fatalf("the good code fails: %v", err)
	}
	bomb := deflated("ricart-agrawala", `{"scenario":`+sc+`,"step":3,"x":"`+strings.Repeat("a", MaxLinkBytes+10)+`"}`)
	many := make([]string, MaxLinkInterventions+1)
	for k := range many {
		many[k] = `{"step":1,"do":"heal"}`
	}
	tooMany := deflated("ricart-agrawala", `{"scenario":`+sc+`,"interventions":[`+strings.Join(many, ",")+`],"step":3}`)
	tests := []struct {
		name, code string
		kind       LinkErrorKind
		slug       string
		want       string
	}{
		{"newer format", "v4.bully.AAAA", LinkNewer, "bully", "link: this link was made by a newer version of the playground (format 4); this server reads format 3"},
		{"newer format, new algorithm", "v4.paxos.xyz", LinkNewer, "paxos", "format 4"},
		{"empty", "", LinkTruncated, "", "link: the link is cut short: copy it again whole"},
		{"only the version", "v1", LinkTruncated, "", "cut short"},
		{"half the slug", "v1.ricart", LinkTruncated, "", "cut short"},
		{"no payload", "v1.ricart-agrawala.", LinkTruncated, "ricart-agrawala", "cut short"},
		{"payload cut", good[:len(good)-6], LinkTruncated, "ricart-agrawala", "cut short"},
		{"not a link", "hello", LinkInvalid, "", "not a playground link"},
		{"version zero", "v0.bully.AAAA", LinkInvalid, "", "not a playground link"},
		{"unknown algorithm", "v1.paxos.AAAA", LinkInvalid, "", `algorithm: "paxos" is unknown`},
		{"bad characters", "v1.bully.AA+/AA", LinkInvalid, "bully", "characters a link never has"},
		{"not deflate", "v1.bully." + base64.RawURLEncoding.EncodeToString([]byte{0xff, 0xfe, 0xfd, 0xfc}), LinkInvalid, "bully", "does not unpack"},
		{"not JSON", deflated("bully", "hello"), LinkInvalid, "bully", "not a run"},
		{"unknown field", deflated("ricart-agrawala", `{"scenario":`+sc+`,"stepp":3}`), LinkInvalid, "ricart-agrawala", `unknown field "stepp"`},
		{"wrong type", deflated("ricart-agrawala", `{"scenario":`+sc+`,"step":"3"}`), LinkInvalid, "ricart-agrawala", "link: step: the link was altered: expected an integer"},
		{"trailing data", deflated("ricart-agrawala", `{"scenario":`+sc+`,"step":3}{}`), LinkInvalid, "ricart-agrawala", "unexpected data"},
		{"no scenario", deflated("ricart-agrawala", `{"step":3}`), LinkInvalid, "ricart-agrawala", "link: scenario: missing"},
		{"slug mismatch", deflated("bully", `{"scenario":`+sc+`,"step":3}`), LinkInvalid, "bully", "scenario.algorithm"},
		{"bad scenario", deflated("ricart-agrawala", `{"scenario":{"version":1,"algorithm":"ricart-agrawala","nodes":500,"seed":1},"step":3}`), LinkInvalid, "ricart-agrawala", "link: scenario.nodes: 500 is out of range"},
		{"negative step", deflated("ricart-agrawala", `{"scenario":`+sc+`,"step":-1}`), LinkInvalid, "ricart-agrawala", "link: step: -1 is out of range"},
		{"bad node", deflated("ricart-agrawala", `{"scenario":`+sc+`,"interventions":[{"step":1,"do":"heal"},{"step":1,"do":"heal"},{"step":2,"do":"heal"},{"step":2,"do":"crash","node":9}],"step":3}`),
			LinkInvalid, "ricart-agrawala", "link: interventions[3].node: 9 is not a node id"},
		{"bad do", deflated("ricart-agrawala", `{"scenario":`+sc+`,"interventions":[{"step":1,"do":"jump"}],"step":3}`), LinkInvalid, "ricart-agrawala", "link: interventions[0].do: \"jump\" is unknown"},
		{"wrong family", deflated("ricart-agrawala", `{"scenario":`+sc+`,"interventions":[{"step":1,"do":"elect","node":1}],"step":3}`), LinkInvalid, "ricart-agrawala", "interventions[0].do"},
		{"steps go back", deflated("ricart-agrawala", `{"scenario":`+sc+`,"interventions":[{"step":4,"do":"heal"},{"step":2,"do":"heal"}],"step":3}`), LinkInvalid, "ricart-agrawala", "link: interventions[1].step: 2 is before"},
		{"at instead of step", deflated("ricart-agrawala", `{"scenario":`+sc+`,"interventions":[{"at":4,"do":"heal"}],"step":3}`), LinkInvalid, "ricart-agrawala", "link: interventions[0].at"},
		{"duplicate key", deflated("ricart-agrawala", `{"scenario":`+sc+`,"step":3,"step":9}`), LinkInvalid, "ricart-agrawala", "link: step: the link was altered: step is given twice"},
		{"duplicate key in the scenario", deflated("ricart-agrawala", `{"scenario":{"version":1,"algorithm":"ricart-agrawala","nodes":5,"nodes":3,"seed":1},"step":3}`), LinkInvalid, "ricart-agrawala", "scenario.nodes"},
		{"zip bomb", bomb, LinkInvalid, "ricart-agrawala", "more than 1048576 bytes"},
		{"too many interventions", tooMany, LinkInvalid, "ricart-agrawala", "link: interventions: 10001 interventions is more than the limit"},
		{"too long", "v1.bully." + strings.Repeat("A", MaxLinkCode), LinkInvalid, "", "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeLink(tt.code)
			var le *LinkError
			if !errors.As(err, &le) {
				t.Fatalf("DecodeLink: %v; want a *LinkError", err)
			}
			if le.Kind != tt.kind || le.Slug != tt.slug || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("DecodeLink: kind %d slug %q: %v\nwant kind %d slug %q, containing %q", le.Kind, le.Slug, err, tt.kind, tt.slug, tt.want)
			}
		})
	}
}

// Whatever length a copy keeps, a cut code says it is cut, never something else.
func TestDecodeLink_EveryPrefixIsTruncated(t *testing.T) {
	cfg, ivs, step := liveRun(t, ra5, 5, raMenu)
	l, err := LinkFromRun([]byte(ra5), cfg, ivs, step)
	if err != nil {
		t.Fatal(err)
	}
	code, err := EncodeLink(l)
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(code) {
		_, err := DecodeLink(code[:n])
		var le *LinkError
		if !errors.As(err, &le) || le.Kind != LinkTruncated {
			t.Fatalf("prefix %q: %v; want a cut-short error", code[:n], err)
		}
	}
}

// Links of the curated scenarios, as /s/{name} shares them with a few interventions.
func TestLink_CuratedScenariosStayShort(t *testing.T) {
	for _, e := range Curated() {
		doc, err := json.Marshal(e.Scenario)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := e.Scenario.Config()
		if err != nil {
			t.Fatal(err)
		}
		l, err := LinkFromRun(doc, cfg, nil, 40)
		if err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
		p, err := l.Path()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%-45s %5d bytes of JSON, link %4d characters", e.Name, len(doc), len(p))
		// docs/links.md: 4000 characters; 8000 with a source (a challenge's rules).
		if budget := 4000 + 4000*min(1, len(e.Scenario.Source)); len(p) > budget {
			t.Errorf("%s: link of %d characters, more than %d", e.Name, len(p), budget)
		}
		back, err := DecodeLink(strings.TrimPrefix(p, "/r/"))
		if err != nil || !reflect.DeepEqual(back, l) {
			t.Fatalf("%s: round trip: %v", e.Name, err)
		}
	}
}

func TestLinkFromRun_RejectsWhatALinkCannotSay(t *testing.T) {
	sc, _ := Parse([]byte(ra5))
	cfg, _ := sc.Config()
	_, err := LinkFromRun([]byte(ra5), cfg, []sim.Intervention{{Step: 1, Action: sim.Action{Do: sim.ActCrash, Node: 7}}}, 2)
	if err == nil || !strings.Contains(err.Error(), "link: interventions[0]: node index 7 is out of range") {
		t.Fatalf("LinkFromRun with a bad index: %v", err)
	}
	_, err = LinkFromRun([]byte(ra5), cfg, []sim.Intervention{{Step: 1, Action: sim.Action{Do: sim.ActionKind(200)}}}, 2)
	if err == nil || !strings.Contains(err.Error(), "link: interventions[0]: unknown action 200") {
		t.Fatalf("LinkFromRun with an unknown kind: %v", err)
	}
	_, err = LinkFromRun([]byte(`{"version":1}`), cfg, nil, 2)
	if err == nil || !strings.Contains(err.Error(), "link: scenario:") {
		t.Fatalf("LinkFromRun with a bad scenario: %v", err)
	}
}

// FuzzDecodeLink: no code makes the decoder panic, and any code it accepts gives a
// link that encodes to a code decoding to the very same link.
func FuzzDecodeLink(f *testing.F) {
	sc := `{"version":1,"algorithm":"bully","nodes":4,"seed":1}`
	f.Add(deflated("bully", `{"scenario":`+sc+`,"interventions":[{"step":1,"do":"partition","groups":[[0,1],[]]}],"step":3}`))
	f.Add(deflated("bully", `{"scenario":`+sc+`,"step":0}`))
	f.Add("v2.bully.AAAA")
	f.Add("v1.")
	f.Fuzz(func(t *testing.T, code string) {
		l, err := DecodeLink(code)
		if err != nil {
			var le *LinkError
			if !errors.As(err, &le) {
				t.Fatalf("%q: %T %v is not a *LinkError", code, err, err)
			}
			return
		}
		again, err := EncodeLink(l)
		if err != nil {
			t.Fatalf("%q decodes but does not encode: %v", code, err)
		}
		l2, err := DecodeLink(again)
		if err != nil {
			t.Fatalf("%q: the re-encoded %q fails: %v", code, again, err)
		}
		if !reflect.DeepEqual(l, l2) {
			t.Fatalf("%q: decode(encode(link)) differs:\n%s\n%s", code, dump(l), dump(l2))
		}
	})
}

func dump(l Link) string {
	b, _ := json.Marshal(l)
	return string(b)
}

// FuzzDecodeLinkJSON fuzzes the data inside a well-formed code, where the fields are
// checked: the same properties as FuzzDecodeLink.
func FuzzDecodeLinkJSON(f *testing.F) {
	f.Add(`{"scenario":{"version":1,"algorithm":"bully","nodes":4,"ids":[5,1,9,2],"seed":1,"network":{"delay":2,"fifo":false}},"interventions":[{"step":1,"do":"partition","groups":[[5,1],[]]},{"step":2,"do":"crash","node":9}],"step":3}`)
	f.Add(`{"scenario":{"version":1,"algorithm":"bully","seed":1,"params":{ },"captions":[],"events":[]},"interventions":[],"step":0}`)
	f.Add(`{"scenario":{"version":1,"algorithm":"bully","seed":1,"network":{"hold":true}},"interventions":[{"step":0,"do":"deliver","msg":3},{"step":0,"do":"drop","msg":0,"from":1,"type":"ELECTION"}],"step":9}`)
	f.Fuzz(func(t *testing.T, data string) {
		code := deflated("bully", data)
		l, err := DecodeLink(code)
		if err != nil {
			if !errors.As(err, new(*LinkError)) {
				t.Fatalf("%s: %T %v is not a *LinkError", data, err, err)
			}
			return
		}
		again, err := EncodeLink(l)
		if err != nil {
			t.Fatalf("%s decodes but does not encode: %v", data, err)
		}
		l2, err := DecodeLink(again)
		if err != nil {
			t.Fatalf("%s: the re-encoded code fails: %v", data, err)
		}
		if !reflect.DeepEqual(l, l2) {
			t.Fatalf("%s: decode(encode(link)) differs:\n%s\n%s", data, dump(l), dump(l2))
		}
	})
}

// BenchmarkLinkRoundTrip: encoding and decoding the 20-intervention link of
// TestLink_RoundTripReplaysTheSameRun (figures in docs/benchmarks.md).
func BenchmarkLinkRoundTrip(b *testing.B) {
	cfg, ivs, step := liveRun(b, ra5, 20, raMenu)
	l, err := LinkFromRun([]byte(ra5), cfg, ivs, step)
	if err != nil {
		b.Fatal(err)
	}
	code, _ := EncodeLink(l)
	b.Run("encode", func(b *testing.B) {
		for b.Loop() {
			if _, err := EncodeLink(l); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			if _, err := DecodeLink(code); err != nil {
				b.Fatal(err)
			}
		}
	})
}
