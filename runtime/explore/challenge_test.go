package explore

import (
	"context"
	"strings"
	"testing"

	"github.com/teach-dist/playground/algorithms/starlarkalg"
	"github.com/teach-dist/playground/scenarios"
)

// Every curated challenge is wrong as shipped and right once fixed: the explorer finds
// one of the properties it asks for broken in its starting source, with a
// counterexample that replays through the kernel, and proves them all with the
// algorithm's template in its place (the fix).
func TestChallenges_StartBrokenAndTheTemplateMeetsThem(t *testing.T) {
	found := 0
	for _, e := range scenarios.Curated() {
		c := e.Scenario.Challenge
		if c == nil {
			continue
		}
		found++
		t.Run(e.Name, func(t *testing.T) {
			sc, _, err := DefaultWorkload(e.Scenario)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Explore(context.Background(), sc, Options{MaxStates: 2_000_000})
			if err != nil {
				t.Fatal(err)
			}
			v := Meets(c, res)
			if v.Met || res.Result != ResultViolation || res.Counterexample == nil || !res.Counterexample.Replayed ||
				res.Counterexample.Scenario.Source != e.Scenario.Source || !strings.Contains(v.Why, "is broken") {
				t.Fatalf("starting source: %s %s, verdict %+v; want a replayed counterexample with the source", res.Result, res.Property, v)
			}
			fixed := *sc
			fixed.Source, _ = starlarkalg.Template(sc.Algorithm)
			res, err = Explore(context.Background(), &fixed, Options{MaxStates: 2_000_000})
			if err != nil {
				t.Fatal(err)
			}
			if v := Meets(c, res); !v.Met {
				t.Fatalf("the template: %s %s (%s), verdict %+v; want it met", res.Result, res.Property, res.Message, v)
			}
		})
	}
	if found < 6 {
		t.Fatalf("%d curated challenges, want at least 6", found)
	}
}
