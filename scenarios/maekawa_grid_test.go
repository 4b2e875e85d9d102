package scenarios

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
)

// Note 003's 36-process grid: the curated scenario gives p14 and p29 exactly the
// note's voting sets, which meet in p17 and p26.
func TestMaekawaGrid36HasTheNotesSets(t *testing.T) {
	sc, ok := Lookup("maekawa-grid-36")
	if !ok {
		t.Fatal("no curated scenario maekawa-grid-36")
	}
	cfg, err := sc.Config()
	if err != nil {
		t.Fatal(err)
	}
	setOf := func(id int) []int {
		t.Helper()
		i := slices.Index(cfg.IDs, id)
		if i < 0 {
			t.Fatalf("no process p%d in ids %v", id, cfg.IDs)
		}
		var st struct{ Set []int }
		if err := json.Unmarshal(sim.EncodeState(cfg.Spec.New(i, &sim.Setup{IDs: cfg.IDs, Params: cfg.Params})), &st); err != nil {
			t.Fatal(err)
		}
		return st.Set
	}
	v14, v29 := setOf(14), setOf(29)
	for _, tc := range []struct {
		name      string
		got, want []int
	}{
		{"V14", v14, []int{2, 8, 13, 14, 15, 16, 17, 18, 20, 26, 32}},
		{"V29", v29, []int{5, 11, 17, 23, 25, 26, 27, 28, 29, 30, 35}},
		{"V14 ∩ V29", slices.DeleteFunc(slices.Clone(v14), func(x int) bool { return !slices.Contains(v29, x) }), []int{17, 26}},
	} {
		if !slices.Equal(tc.got, tc.want) {
			t.Errorf("%s = %v, want %v (note 003)", tc.name, tc.got, tc.want)
		}
	}
}
