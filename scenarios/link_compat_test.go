package scenarios

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
)

// Links saved from earlier builds (testdata/links: the code and the trace that build
// gave) replay the same run today, whatever defaults changed since: each link carries
// the defaults epoch it was made under and is pinned to it. Rule labels are compared
// by node and place only: labels were renamed to say which come from the notes
// (docs/labels.md), which names the rules but changes no step of the run; fields
// added to trace v1 since a link was saved are left out of the comparison.
func TestLinksFromEarlierBuildsReplayTheSameRun(t *testing.T) {
	codes, err := filepath.Glob(filepath.Join("testdata", "links", "*.link"))
	if err != nil || len(codes) < 10 {
		t.Fatalf("saved links: %v (%d)", err, len(codes))
	}
	for _, path := range codes {
		name := strings.TrimSuffix(filepath.Base(path), ".link")
		t.Run(name, func(t *testing.T) {
			code, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(strings.TrimSuffix(path, ".link") + ".jsonl")
			if err != nil {
				t.Fatal(err)
			}
			l, err := DecodeLink(strings.TrimSpace(string(code)))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			got := replayLink(t, l)
			if g, w := withoutRuleNames(t, got), withoutRuleNames(t, want); !bytes.Equal(g, w) {
				t.Fatalf("the link replays another run: %s", firstDiff(g, w))
			}
			// Shared again today, it is a current link with what it pinned written out,
			// and still the same run.
			again, err := EncodeLink(l)
			if err != nil {
				t.Fatal(err)
			}
			l2, err := DecodeLink(again)
			if err != nil {
				t.Fatalf("decode the re-shared link: %v", err)
			}
			if !bytes.Equal(replayLink(t, l2), got) {
				t.Fatal("the re-shared link replays another run")
			}
		})
	}
}

func replayLink(t *testing.T, l Link) []byte {
	t.Helper()
	cfg, ivs, err := l.Run()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Until = 0
	var buf []byte
	if _, err := sim.Replay(cfg, ivs, l.Step, sim.NewEncoder(cfg.Spec, cfg.IDs).Lines(&buf)); err != nil {
		t.Fatal(err)
	}
	return buf
}

// withoutRuleNames blanks the label of every rule event.
func withoutRuleNames(t *testing.T, trace []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	for _, line := range bytes.Split(bytes.TrimSpace(trace), []byte("\n")) {
		var ev map[string]json.RawMessage
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if string(ev["type"]) == `"rule"` {
			ev["rule"] = json.RawMessage(`""`)
		}
		// Fields trace v1 gained since (a violation's processes and wait-for cycle)
		// add to an event and change no step: an older build wrote none.
		if string(ev["type"]) == `"violation"` {
			delete(ev, "nodes")
			delete(ev, "cycle")
		}
		b, _ := json.Marshal(ev)
		out.Write(b)
		out.WriteByte('\n')
	}
	return out.Bytes()
}

func TestMergeUnsetFillsOnlyWhatTheLinkLeftToDefaults(t *testing.T) {
	tests := []struct{ have, earlier, want string }{
		{``, `{"skip":"none"}`, `{"skip":"none"}`},
		{`{}`, `{"skip":"none"}`, `{"skip":"none"}`},
		{`{"skip":"detector"}`, `{"skip":"none"}`, `{"skip":"detector"}`},
		{`{"ack":true}`, `{"skip":"none"}`, `{"ack":true,"skip":"none"}`},
		{`{"heartbeat":{"period":4}}`, `{"heartbeat":{"timeout":"silence"}}`, `{"heartbeat":{"period":4,"timeout":"silence"}}`},
		{`{"heartbeat":{"timeout":3}}`, `{"heartbeat":{"timeout":"silence"}}`, `{"heartbeat":{"timeout":3}}`},
	}
	for _, tc := range tests {
		got, err := mergeUnset(json.RawMessage(tc.have), json.RawMessage(tc.earlier))
		if err != nil || string(got) != tc.want {
			t.Errorf("merge %s under %s: %s %v, want %s", tc.earlier, tc.have, got, err, tc.want)
		}
	}
}

func TestLinkEpochs(t *testing.T) {
	tests := []struct {
		format, recorded, want int
		kind                   LinkErrorKind
		bad                    bool
	}{
		{1, 0, 1, 0, false},
		{1, 2, 0, LinkInvalid, true},
		{2, 1, 1, 0, false},
		{2, sim.DefaultsEpoch, sim.DefaultsEpoch, 0, false},
		{2, 0, 0, LinkInvalid, true},
		{2, sim.DefaultsEpoch + 1, 0, LinkNewer, true},
	}
	for _, tc := range tests {
		got, err := linkEpoch(tc.format, tc.recorded)
		if tc.bad != (err != nil) || got != tc.want || (err != nil && err.Kind != tc.kind) {
			t.Errorf("format %d, defaults %d: %d %v", tc.format, tc.recorded, got, err)
		}
	}
}

// A run opened from a link keeps its scenario document, which is parsed again to
// share the run or explore it: read again, it must give the same run. An old link's
// scenario says version 1, but its defaults are those of the link's epoch, not of
// version 1 files: decoded, it is a version 2 document with what it pinned written out.
func TestLinkScenariosReadAgainGiveTheSameRun(t *testing.T) {
	codes, err := filepath.Glob(filepath.Join("testdata", "links", "*.link"))
	if err != nil || len(codes) == 0 {
		t.Fatalf("saved links: %v", err)
	}
	for _, path := range codes {
		code, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		l, err := DecodeLink(strings.TrimSpace(string(code)))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var doc bytes.Buffer
		if err := l.Scenario.Encode(&doc); err != nil {
			t.Fatal(err)
		}
		again, err := Parse(doc.Bytes())
		if err != nil {
			t.Fatalf("%s: the link's scenario read again: %v", path, err)
		}
		a, errA := l.Scenario.Config()
		b, errB := again.Config()
		if errA != nil || errB != nil {
			t.Fatalf("%s: %v %v", path, errA, errB)
		}
		if !slices.Equal(a.IDs, b.IDs) || fmt.Sprint(a.Params) != fmt.Sprint(b.Params) {
			t.Errorf("%s: read again, ids %v params %+v; the link's: ids %v params %+v", path, b.IDs, b.Params, a.IDs, a.Params)
		}
	}
}
