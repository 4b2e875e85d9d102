package sim_test

import (
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
)

func TestRuleWhyIsRecordedAndEncoded(t *testing.T) {
	ctx := sim.NewContext(0, []int{4, 9})
	ctx.RuleWhy("RH1", "older")
	ctx.Rule("RA3")
	effects := ctx.Effects()
	if effects[0].Rule != "RH1" || effects[0].Why != "older" || effects[1].Why != "" {
		t.Fatalf("effects %+v", effects)
	}
	enc := sim.NewEncoder(&sim.Spec{Slug: "x"}, []int{4, 9})
	withWhy := string(enc.Append(nil, &sim.Event{Seq: 3, T: 7, Type: sim.EvRule, Node: 1, Rule: "RH1", Why: "older"}))
	if withWhy != `{"seq":3,"t":7,"type":"rule","node":9,"rule":"RH1","why":"older"}` {
		t.Fatalf("encoded %s", withWhy)
	}
	without := string(enc.Append(nil, &sim.Event{Seq: 3, T: 7, Type: sim.EvRule, Node: 1, Rule: "RA3"}))
	if strings.Contains(without, "why") {
		t.Fatalf("a rule without a case wrote one: %s", without)
	}
}
