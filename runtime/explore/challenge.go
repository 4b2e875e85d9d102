package explore

import (
	"fmt"
	"slices"
	"strings"

	"github.com/teach-dist/playground/scenarios"
)

// Verdict says whether a search's result meets a challenge (scenarios.Challenge).
type Verdict struct {
	Met bool   `json:"met"`
	Why string `json:"why"`
}

// Meets judges a result against a challenge: met when the search was complete, found
// no broken property, and checked every property the challenge asks for.
func Meets(c *scenarios.Challenge, res *Result) Verdict {
	words := func(props []string) string {
		out := make([]string, len(props))
		for k, p := range props {
			out[k] = PropertyWords(p)
		}
		return strings.Join(out, ", ")
	}
	switch res.Result {
	case ResultViolation:
		if slices.Contains(c.Prove, res.Property) {
			return Verdict{Why: fmt.Sprintf("%s is broken (the counterexample shows how)", PropertyWords(res.Property))}
		}
		return Verdict{Why: fmt.Sprintf("%s is broken, so the search stopped before it could prove %s", PropertyWords(res.Property), words(c.Prove))}
	case ResultOK:
		for _, p := range c.Prove {
			if !slices.Contains(res.Checked, p) {
				return Verdict{Why: fmt.Sprintf("the search does not check %s for this algorithm", PropertyWords(p))}
			}
		}
		return Verdict{Met: true, Why: fmt.Sprintf("every run of this configuration keeps %s (%d states)", words(c.Prove), res.States)}
	}
	return Verdict{Why: "the search stopped at a bound (" + res.Bound + ") before it covered every run"}
}
