package defaults

import (
	"testing"
	"time"
)

func TestPositiveKeepsAPositiveValueAndReplacesTheRest(t *testing.T) {
	for _, tc := range []struct{ v, want int }{{5, 5}, {0, 7}, {-3, 7}} {
		v := tc.v
		Positive(&v, 7)
		if v != tc.want {
			t.Errorf("Positive(%d, 7) = %d, want %d", tc.v, v, tc.want)
		}
	}
	d := time.Duration(0)
	Positive(&d, time.Second)
	if d != time.Second {
		t.Errorf("a zero duration became %v, want 1s", d)
	}
}
