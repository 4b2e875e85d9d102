package starlarkalg

import (
	"math"
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
)

// ownSource is the smallest algorithm written from scratch: header plus what is given.
func ownSource(decls string) string {
	return `
title = "Token bag"
family = "mutex"
rules = [rule("TB-1", lines = ["x"], says = "x")]
messages = [message("M", "M")]
def init(setup):
    return {"clock": 0}
` + decls
}

func TestOwn_NameCostsAndCanon(t *testing.T) {
	cases := []struct {
		name, decls string
		err         string
		check       func(t *testing.T, s *sim.Spec)
	}{
		{"nothing declared", "", "", func(t *testing.T, s *sim.Spec) {
			if s.Name != "" || s.Costs != nil || s.Canon != nil {
				t.Errorf("name %q, costs %v, canon %v", s.Name, s.Costs, s.Canon)
			}
		}},
		{"a name", `name = "token-bag"`, "", func(t *testing.T, s *sim.Spec) {
			if s.Name != "token-bag" || s.Slug != "host" || s.Title != "Token bag" {
				t.Errorf("name %q slug %q title %q", s.Name, s.Slug, s.Title)
			}
		}},
		{"a bad name", `name = "Token Bag"`, `name: "Token Bag" must be`, nil},
		{"a number and a function", `costs = [cost("messages per CS entry", "N+1", value = lambda n: n + 1), cost("client delay", "2T", value = 2)]`, "", func(t *testing.T, s *sim.Spec) {
			if len(s.Costs) != 2 || s.Costs[0].Value(5) != 6 || s.Costs[0].Formula != "N+1" || s.Costs[1].Value(9) != 2 {
				t.Errorf("costs %+v", s.Costs)
			}
		}},
		{"a range", `costs = [cost("messages per election", "2N to 3N-1: one initiator", low = lambda n: 2 * n, high = lambda n: 3 * n - 1)]`, "", func(t *testing.T, s *sim.Spec) {
			// One figure, a range, as a Go algorithm declares one (sim.Cost.Low, High).
			if len(s.Costs) != 1 || s.Costs[0].Name != "messages per election" || s.Costs[0].Formula != "2N to 3N-1: one initiator" ||
				s.Costs[0].Value != nil || s.Costs[0].Low(4) != 8 || s.Costs[0].High(4) != 11 || !math.IsNaN(s.Costs[0].High(sim.MaxNodes+1)) {
				t.Errorf("costs %+v", s.Costs)
			}
		}},
		{"a formula alone", `costs = [cost("synchronisation delay", "T")]`, "", func(t *testing.T, s *sim.Spec) {
			if len(s.Costs) != 1 || s.Costs[0].Value != nil || s.Costs[0].Formula != "T" {
				t.Errorf("costs %+v", s.Costs)
			}
		}},
		{"a range upside down", `costs = [cost("m", "", low = 3, high = 2)]`, "costs[0]: low is 3 and high 2", nil},
		{"value and range", `costs = [cost("m", "", value = 1, low = 1, high = 2)]`, "costs[0]: give value, or low and high", nil},
		{"not a number", `costs = [cost("m", "", value = lambda n: "many")]`, "costs[0]: value: got string for 2 processes", nil},
		{"a failing function", `costs = [cost("m", "", value = lambda n: 1 // (n - 5))]`, "costs[0]: value(5): floored division by zero", nil},
		{"canon", `canon = {"asynchronous": True, "forget_when_quiet": ["clock"]}`, "", func(t *testing.T, s *sim.Spec) {
			if s.Canon == nil || !s.Canon.Asynchronous || s.Canon.Node == nil {
				t.Fatalf("canon %+v", s.Canon)
			}
		}},
		{"canon unknown", `canon = {"fast": True}`, "canon.fast: unknown", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec, err := Load("host", ownSource(c.decls))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got %v, want an error with %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, spec)
		})
	}
}

// forget_when_quiet takes an int variable as 0 once the workload is over, on a copy:
// the node itself keeps its value, and before the end the node is as it is.
func TestOwn_ForgetWhenQuiet(t *testing.T) {
	src := strings.Replace(ownSource(`canon = {"forget_when_quiet": ["clock"]}`), `{"clock": 0}`, `{"clock": 7, "state": "x"}`, 1)
	spec, err := Load("host", src)
	if err != nil {
		t.Fatal(err)
	}
	enc := func(nd sim.Node) string {
		var w sim.StateWriter
		nd.Encode(&w)
		return string(w.Bytes())
	}
	n := spec.New(0, &sim.Setup{IDs: []int{1, 2}})
	for _, c := range []struct {
		quiet bool
		want  string
	}{{false, `"clock":7`}, {true, `"clock":0`}} {
		if got := enc(spec.Canon.Node(n, c.quiet)); !strings.Contains(got, c.want) || !strings.Contains(got, `"state":"x"`) {
			t.Errorf("quiet %v: %s, want %s", c.quiet, got, c.want)
		}
	}
	if got := enc(n); !strings.Contains(got, `"clock":7`) {
		t.Errorf("the node itself changed: %s", got)
	}
}
