package simtest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
)

// recorder is a testing.TB that keeps what a helper reports, so a test can see the
// helper fail.
type recorder struct {
	testing.TB
	failures []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...) }

// echo answers a request by sending ASK to node 1 and entering, and declares itself
// leader on an election: enough for every part of Check.
type echo struct{ asked int }

func (e *echo) Step(ctx *sim.Context, in *sim.Input) {
	switch in.Kind {
	case sim.Request:
		ctx.Rule("EC-1")
		e.asked++
		ctx.Send(1, sim.Message{Type: "ASK", TS: e.asked})
		ctx.SetTimer("retry", 4)
		ctx.Enter()
	case sim.Elect:
		ctx.Rule("EC-2")
		ctx.Leader(ctx.SelfID())
	}
}
func (e *echo) Clone() sim.Node           { c := *e; return &c }
func (e *echo) Encode(w *sim.StateWriter) { w.Int("asked", e.asked) }
func echoFixture(t testing.TB) *Fixture {
	return &Fixture{T: t, Ctx: sim.NewContext(0, []int{5, 6}), Node: &echo{}}
}
func request(f *Fixture) { f.Step(sim.Input{Kind: sim.Request}) }
func wantFailures(t *testing.T, r *recorder, n int) {
	t.Helper()
	if len(r.failures) != n {
		t.Fatalf("%d failures, want %d: %q", len(r.failures), n, r.failures)
	}
}

func TestCheckPassesOnTheStepAndReportsEachDifference(t *testing.T) {
	r := &recorder{}
	f := echoFixture(r)
	request(f)
	f.Check(Want{Rules: []string{"EC-1"}, Sent: []string{"ASK->1"}, Effects: []string{"set retry 4", "enter"}, State: `{"asked":1}`})
	wantFailures(t, r, 0)

	f.Check(Want{Rules: []string{"EC-2"}, Sent: []string{"ASK->0"}, Leaders: []int{5}, State: `{"asked":2}`})
	wantFailures(t, r, 5)
	for k, part := range []string{"rules", "sent", "effects", "leaders", "state"} {
		if !strings.HasPrefix(r.failures[k], part) {
			t.Errorf("failure %d is %q, want one about %s", k, r.failures[k], part)
		}
	}

	r.failures = nil
	f.Step(sim.Input{Kind: sim.Elect})
	f.Check(Want{Rules: []string{"EC-2"}, Leaders: []int{5}, State: `{"asked":1}`})
	wantFailures(t, r, 0)
}

func TestSentIsWrittenByShow(t *testing.T) {
	r := &recorder{}
	f := echoFixture(r)
	request(f)
	f.WantSent("ASK->1")
	f.Show = TypeToTS
	f.WantSent("ASK->1@1")
	wantFailures(t, r, 0)
	f.WantSent("ASK->1")
	f.WantEffects("enter")
	wantFailures(t, r, 2)
}

func TestUntestedRulesReadsTheTestsNames(t *testing.T) {
	spec := &sim.Spec{Rules: []sim.Rule{{Label: "AB-1"}, {Label: "AB-2"}, {Label: "AB-3"}, {Label: "AB-10"}}}
	got, err := UntestedRules(spec, "testdata/named")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"AB-2", "AB-3"}; !slices.Equal(got, want) {
		t.Errorf("untested %v, want %v", got, want)
	}
	r := &recorder{}
	EveryRuleHasATest(r, spec, "testdata/named")
	wantFailures(t, r, 2)
	if _, err := UntestedRules(spec, "testdata/nowhere"); err != nil {
		t.Errorf("a folder without tests: %v", err)
	}
}

func TestParseTableReportsEachWrongCase(t *testing.T) {
	type params struct{ K int }
	parse := func(raw []byte, ids []int) (any, error) {
		if string(raw) == "bad" {
			return nil, errors.New("params.k: bad")
		}
		return params{K: len(raw) + len(ids)}, nil
	}
	cases := []ParseCase{
		{"", params{K: 2}, ""},
		{"bad", nil, "params.k:"},
		{"x", params{K: 9}, ""},   // decodes to 3
		{"bad", nil, "params.j:"}, // another error
		{"", nil, "params.k:"},    // no error at all
		{"bad", params{K: 1}, ""}, // an error where none is wanted
	}
	r := &recorder{}
	ParseTable(r, parse, []int{1, 2}, cases)
	wantFailures(t, r, 4)
}
