package runs

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/scenarios"
)

// A share link decodes into the run it was made from: a curated scenario keeps its
// name, the timeline reaches its last intervention when that is past the step shown,
// and a code that is not a link is refused.
func TestDecodeLink(t *testing.T) {
	cur := scenarios.Curated()[0]
	doc, err := json.Marshal(cur.Scenario)
	if err != nil {
		t.Fatal(err)
	}
	setup, err := SetupOf(cur.Scenario, cur.Name)
	if err != nil {
		t.Fatal(err)
	}
	crash := []sim.Intervention{{Step: 6, Action: sim.Action{Do: sim.ActCrash, Node: 0}}}
	for _, tc := range []struct {
		name    string
		ivs     []sim.Intervention
		step    int
		horizon int
	}{
		{"no interventions", nil, 3, 3},
		{"an intervention past the step shown", crash, 2, 6},
		{"the step shown past the interventions", crash, 9, 9},
	} {
		l, err := scenarios.LinkFromRun(doc, setup.Config, tc.ivs, tc.step)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		path, err := l.Path()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		lr, err := DecodeLink(strings.TrimPrefix(path, "/r/"))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if lr.Setup.Name != cur.Name || lr.Link.Step != tc.step || lr.Horizon() != tc.horizon || len(lr.IVs) != len(tc.ivs) {
			t.Errorf("%s: name %q, step %d, horizon %d, %d interventions; want %q, %d, %d, %d",
				tc.name, lr.Setup.Name, lr.Link.Step, lr.Horizon(), len(lr.IVs), cur.Name, tc.step, tc.horizon, len(tc.ivs))
		}
	}
	if _, err := DecodeLink("not-a-link"); err == nil {
		t.Error("a code that is not a link decoded")
	}
}
