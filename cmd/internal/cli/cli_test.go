package cli

import (
	"errors"
	"fmt"
	"testing"
)

type broken struct{}

func (broken) Error() string { return "a property breaks" }
func (broken) ExitCode() int { return 3 }

func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{errors.New("bad flag"), 1},
		{broken{}, 3},
		{fmt.Errorf("explore: %w", broken{}), 3},
	} {
		if got := ExitCode(tc.err); got != tc.want {
			t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}
