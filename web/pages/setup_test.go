package pages

import (
	"testing"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/runtime/sim"
)

// Every declared param of every algorithm gets a control named p.<name>, of its kind.
func TestEveryParamHasAControl(t *testing.T) {
	for _, spec := range algorithms.All() {
		controls := BuildPlay(spec, "").Params
		if len(controls) != len(spec.Params) {
			t.Fatalf("%s: %d controls for %d params", spec.Slug, len(controls), len(spec.Params))
		}
		for i, p := range spec.Params {
			c := controls[i]
			if c.Input != "p."+p.Name || c.Kind != string(p.Kind) || c.Default != p.Default || c.Doc != p.Doc {
				t.Errorf("%s: control %+v does not follow param %+v", spec.Slug, c, p)
			}
		}
	}
}

func TestParamControlPlaceholders(t *testing.T) {
	for _, tc := range []struct {
		p    sim.Param
		want string
	}{
		{sim.Param{Name: "hop", Kind: sim.ParamInt, Min: 1, Default: "1"}, "default 1"},
		{sim.Param{Name: "regenerate", Kind: sim.ParamInt, Zero: "off", Default: "0"}, "default 0 · 0: off"},
		{sim.Param{Name: "answerTimeout", Kind: sim.ParamInt, Min: 1}, "default"},
		{sim.Param{Name: "holder", Kind: sim.ParamNode, Default: sim.LowestID}, "default: the lowest id"},
		{sim.Param{Name: "tree", Kind: sim.ParamObject}, "JSON; empty: the default"},
		{sim.Param{Name: "heartbeat", Kind: sim.ParamObject, Fields: []sim.Param{{Name: "period", Kind: sim.ParamInt}, {Name: "on", Kind: sim.ParamBool}}},
			`{"period": n, "on": true}; empty: the default`},
	} {
		if got := paramControls([]sim.Param{tc.p})[0].Placeholder; got != tc.want {
			t.Errorf("%s: placeholder %q, want %q", tc.p.Name, got, tc.want)
		}
	}
}
