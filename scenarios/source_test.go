package scenarios

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/teach-dist/playground/algorithms/starlarkalg"
)

// raTemplate is the Ricart-Agrawala template; raNoTieBreak forgets to break ties by
// id, so two requests with the same timestamp both get answered.
func raTemplate(t *testing.T) (template, noTieBreak string) {
	t.Helper()
	src, ok := starlarkalg.Template("ricart-agrawala")
	if !ok {
		t.Fatal("no ricart-agrawala template")
	}
	const tie = "return s.ts < m.ts or (s.ts == m.ts and ctx.self_id < ctx.id(m.sender))"
	if !strings.Contains(src, tie) {
		t.Fatalf("the template no longer has %q", tie)
	}
	return src, strings.Replace(src, tie, "return s.ts < m.ts", 1)
}

// twoAtOnce is a scenario where P0 and P1 ask for the CS at the same time, so their
// requests carry the same timestamp.
func twoAtOnce(source string) *Scenario {
	zero, one := 0, 1
	return &Scenario{Version: 1, Algorithm: "ricart-agrawala", Nodes: 3, Seed: 7, Source: source,
		Network: &Network{Delay: Delay{1}}, Until: 60,
		Events: []Event{{At: 1, Do: "request", Node: &zero}, {At: 1, Do: "request", Node: &one}}}
}

// A scenario's source is what runs: the template gives the Go algorithm's trace byte
// for byte, and the same scenario with the tie-break removed lets two processes in.
func TestScenarioSource_RunsInsteadOfTheGoAlgorithm(t *testing.T) {
	template, broken := raTemplate(t)
	goTrace := trace(t, twoAtOnce(""))
	if got := trace(t, twoAtOnce(template)); !bytes.Equal(got, goTrace) {
		t.Errorf("the template's trace differs from the Go algorithm's:\n%s\nwant\n%s", got, goTrace)
	}
	if bytes.Contains(goTrace, []byte(`"violation"`)) {
		t.Fatal("the Go algorithm breaks mutual exclusion here")
	}
	if got := trace(t, twoAtOnce(broken)); !bytes.Contains(got, []byte(`"property":"mutual-exclusion"`)) {
		t.Errorf("the edited source did not run: no mutual-exclusion violation in\n%s", got)
	}
}

// A source that does not load, or on an algorithm without a template, is refused
// naming the field and, for the source, the line.
func TestScenarioSource_BadSourcesNameTheLine(t *testing.T) {
	template, _ := raTemplate(t)
	syntaxErr := strings.Replace(template, `ctx.rule("RR1")`, `ctx.rule("RR1"))`, 1)
	line := strings.Count(syntaxErr[:strings.Index(syntaxErr, `ctx.rule("RR1"))`)], "\n") + 1
	cases := []struct {
		name     string
		sc       *Scenario
		field    string
		line     int
		contains string
	}{
		{"syntax error", twoAtOnce(syntaxErr), "source", line, "line " + itoa(line) + ": unexpected ')'"},
		{"runaway at load", twoAtOnce(template + "\ndef spin():\n    while True:\n        pass\nspin()\n"), "source", 0, "more than 200000 units of work"},
		{"another family", twoAtOnce(strings.Replace(template, `family = "mutex"`, `family = "election"`, 1)), "source", 0, `declares family "election", but ricart-agrawala is of family "mutex"`},
		{"a playground's name", twoAtOnce(template + "\nname = \"bully\"\n"), "source", 0, `name: "bully" is one of the playground's algorithms`},
		{"challenge without source", &Scenario{Version: 1, Algorithm: "central", Seed: 1, Challenge: &Challenge{Goal: "x", Prove: []string{"mutual-exclusion"}}}, "challenge", 0, "needs a starting source"},
		{"challenge with an unknown property", func() *Scenario {
			sc := twoAtOnce(template)
			sc.Challenge = &Challenge{Goal: "fix it", Prove: []string{"mutual-exclusion", "liveness"}}
			return sc
		}(), "challenge.prove[1]", 0, `"liveness" is unknown`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.sc.Validate()
			var e *Error
			if !errors.As(err, &e) || e.Field != c.field || !strings.Contains(e.Reason, c.contains) || (c.line != 0 && e.Line != c.line) {
				t.Fatalf("got %v (line %d), want field %s at line %d containing %q", err, lineOf(e), c.field, c.line, c.contains)
			}
		})
	}
}

func lineOf(e *Error) int {
	if e == nil {
		return -1
	}
	return e.Line
}

// A link carries the source: written as format 3 (links without one stay format 2,
// as earlier builds wrote them), read back whole, and refused in a format 2 code.
func TestLinkSource_RoundTripsInFormat3(t *testing.T) {
	_, broken := raTemplate(t)
	code, err := EncodeLink(Link{Scenario: twoAtOnce(broken), Step: 12})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(code, "v3.ricart-agrawala.") {
		t.Errorf("code %.30s..., want format 3", code)
	}
	l, err := DecodeLink(code)
	if err != nil {
		t.Fatal(err)
	}
	if l.Scenario.Source != broken || l.Step != 12 {
		t.Errorf("decoded step %d and a source of %d bytes, want 12 and the %d bytes encoded", l.Step, len(l.Scenario.Source), len(broken))
	}
	plain, err := EncodeLink(Link{Scenario: twoAtOnce("")})
	if err != nil || !strings.HasPrefix(plain, "v2.ricart-agrawala.") {
		t.Errorf("a link without a source: %.30s (%v), want format 2", plain, err)
	}
	altered := "v2" + strings.TrimPrefix(code, "v3")
	var le *LinkError
	if _, err := DecodeLink(altered); !errors.As(err, &le) || le.Field != "scenario.source" || le.Kind != LinkInvalid {
		t.Errorf("a format 2 code with a source: %v, want it refused as altered", err)
	}
	// the budget docs/links.md states: a template edited a little fits in a few KB.
	if len(code) > 8000 {
		t.Errorf("the code is %d characters, more than docs/links.md's budget of 8000", len(code))
	}
}
