package nodeid

import (
	"slices"
	"testing"
)

func TestMapping(t *testing.T) {
	ids := []int{30, 10, 20}
	for _, tc := range []struct {
		name string
		got  []int
		want []int
	}{
		{"All in order", All(ids, []int{2, 0}), []int{20, 30}},
		{"All of nothing is empty, not nil", All(ids, nil), []int{}},
		{"Where in index order", Where(ids, []bool{true, false, true}), []int{30, 20}},
		{"Where of nothing is empty, not nil", Where(ids, []bool{false, false, false}), []int{}},
		{"Filter in index order", Filter(ids, func(i int) bool { return i != 1 }), []int{30, 20}},
		{"Filter of nothing is empty, not nil", Filter(ids, func(int) bool { return false }), []int{}},
	} {
		if tc.got == nil || !slices.Equal(tc.got, tc.want) {
			t.Errorf("%s: %#v, want %#v", tc.name, tc.got, tc.want)
		}
	}
	if Of(ids, 1) != 10 || Of(ids, -1) != -1 {
		t.Errorf("Of(1) = %d, Of(-1) = %d; want 10, -1", Of(ids, 1), Of(ids, -1))
	}
}
