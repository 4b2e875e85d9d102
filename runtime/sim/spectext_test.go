package sim

import (
	"reflect"
	"strings"
	"testing"
)

const sample = `# A comment, then a blank line.

slug: demo
title: A demo
family: mutex
summary: Shows the format.
defaults: nodes=3 delay=1..2 fifo=true cs=2 until=100 firstid=1

rule DM-1: Asking for the CS
notes: 000
| state := WANTED
|     send REQUEST to everyone   // indented, as written
|
says: asks
differs: the notes say otherwise
why now: answers {from} at once

var state: RELEASED or WANTED
message REQUEST REQ ts=ts arg=who: asks: politely

cost messages per CS entry
note 000 002 = 2*(n - 1): 2(N-1)
note 003: O(N)
formula = 2*(n - 1): 2(N-1): REQUEST and REPLY
initiators: 1

cost a range
formula = 0 to n/2 + 1: 0 to N/2+1

cost k initiators
formula = 2*k*n: 2kN

cost no figure
note 001 = sqrt(n) - 1: √N-1
`

func TestParse(t *testing.T) {
	s, err := ParseSpec(sample)
	if err != nil {
		t.Fatal(err)
	}
	want := Spec{
		Slug: "demo", Title: "A demo", Family: Mutex, Summary: "Shows the format.",
		Defaults: Defaults{Nodes: 3, Delay: [2]int{1, 2}, FIFO: true, CS: 2, Until: 100, FirstID: 1},
		Rules: []Rule{{Label: "DM-1", Notes: "000", Group: "Asking for the CS",
			Lines: []string{"state := WANTED", "    send REQUEST to everyone   // indented, as written", ""},
			Says:  "asks", Differs: "the notes say otherwise", Why: map[string]string{"now": "answers {from} at once"}}},
		Vars:     []Var{{Name: "state", Doc: "RELEASED or WANTED"}},
		Messages: []MessageType{{Name: "REQUEST", Label: "REQ", Doc: "asks: politely", TS: "ts", Arg: "who"}},
	}
	got := *s
	got.Costs = nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%#v\nwant\n%#v", got, want)
	}

	if len(s.Costs) != 4 {
		t.Fatalf("got %d costs, want 4", len(s.Costs))
	}
	c := s.Costs[0]
	if c.Name != "messages per CS entry" || c.Formula != "2(N-1): REQUEST and REPLY" || c.Initiators != 1 ||
		len(c.Notes) != 2 || !reflect.DeepEqual(c.Notes[0].In, []string{"000", "002"}) || c.Notes[0].Formula != "2(N-1)" ||
		c.Notes[1].Value != nil || c.Value(5) != 8 || c.Notes[0].Value(5) != 8 {
		t.Errorf("cost 0: %#v", c)
	}
	if r := s.Costs[1]; r.Value != nil || r.Low(6) != 0 || r.High(6) != 4 {
		t.Errorf("a range: %#v", r)
	}
	if k := s.Costs[2]; k.Value != nil || k.ValueK(5, 2) != 20 {
		t.Errorf("k initiators: %#v", k)
	}
	if f := s.Costs[3]; f.Formula != "" || f.Value != nil || f.Notes[0].Value(9) != 2 {
		t.Errorf("no figure: %#v", f)
	}
}

// A nil field stays nil, so that a Spec from a text encodes as one written in Go did.
func TestParseLeavesAbsentFieldsNil(t *testing.T) {
	s, err := ParseSpec("rule A-1: G\nsays: x\ncost c\nformula: y")
	if err != nil {
		t.Fatal(err)
	}
	if s.Rules[0].Why != nil || s.Rules[0].Lines != nil || s.Costs[0].Notes != nil || s.Costs[0].Value != nil {
		t.Errorf("got %#v and %#v", s.Rules[0], s.Costs[0])
	}
}

func TestParseErrorsNameTheLine(t *testing.T) {
	for _, tc := range []struct{ text, err string }{
		{"| a line", "line 1: a line of pseudocode before any rule"},
		{"# c\n\nrule A-1", `line 3: want "rule LABEL: group"`},
		{"rule A B: G", `line 1: want "rule LABEL: group"`},
		{"says: x", `line 1: unknown field "says" here`},
		{"rule A-1: G\nsays: x\nsays: y", "line 3: says given twice"},
		{"family: both", `line 1: family: want mutex or election, got "both"`},
		{"why x: y", `line 1: want "why CASE: sentence" after a rule`},
		{"var a b: c", `line 1: want "var NAME: doc"`},
		{"message REQ: asks", `line 1: want "message NAME LABEL [slot=key ...]: doc"`},
		{"message REQUEST REQ size=s: asks", `line 1: message REQUEST: want ts=, arg=, vec= or queue= with a key, got "size=s"`},
		{"note 000: x", `line 1: want "note NOTES [= value]: formula" after a cost`},
		{"cost c\nnote = 1: x", "line 2: a note names the notes that give it"},
		{"cost c\nnote 000 = 1 to 2: x", "line 2: a note's value is one number of n"},
		{"cost c\nnote 000 = 2*m: x", `line 2: value "2*m": want a number, n, k, ( or sqrt, got "m"`},
		{"cost c\nformula = (n: x", `line 2: value "(n": want )`},
		{"cost c\nformula = n n: x", `line 2: value "n n": unexpected "n"`},
		{"cost c\nformula = k to n: x", "line 2: a range is of n alone"},
		{"cost c\nformula: x\nformula: y", `line 3: want one "formula [= value]: figure" after a cost`},
		{"initiators: 1", "line 1: initiators outside a cost"},
		{"cost c\ninitiators: one", `line 2: initiators: want a whole number, got "one"`},
		{"defaults: nodes=3 delay=1..2 fifo=true cs=2", "line 1: defaults: until missing"},
		{"defaults: nodes=3 delay=1-2", "line 1: defaults: delay=1-2: "},
		{"defaults: speed=3", `line 1: defaults: unknown field "speed"`},
		{"defaults: cs=1 cs=2", "line 1: defaults: cs given twice"},
		{"cost", "line 1: a cost needs a name"},
		{"ruler A-1: G", `line 1: unknown line "ruler A-1: G"`},
	} {
		_, err := ParseSpec(tc.text)
		if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
			t.Errorf("ParseSpec(%q) = %v, want an error starting %q", tc.text, err, tc.err)
		}
	}
}

func TestBuildKeepsTheCodeAndCostFindsByName(t *testing.T) {
	newNode := func(int, *Setup) Node { return nil }
	s := BuildSpec(sample, Spec{Slug: "ignored", CrashLeaderFirst: true, New: newNode})
	if s.Slug != "demo" || !s.CrashLeaderFirst || s.New == nil || len(s.Rules) != 1 {
		t.Errorf("got %#v", s)
	}
	s.Cost("a range").Initiators = 2
	if s.Costs[1].Initiators != 2 {
		t.Errorf("Cost did not return the spec's own cost")
	}
	defer func() {
		if recover() == nil {
			t.Errorf("Cost of an unknown name did not panic")
		}
	}()
	s.Cost("no such cost")
}
