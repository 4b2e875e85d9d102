package main

import (
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/scenarios"
)

// runLink is the path of a share link (/r/...) of the run of scenario doc with the
// interventions ivs, at step: a long run opens there.
func runLink(doc string, ivs []sim.Intervention, step int) (string, error) {
	sc, err := scenarios.Parse([]byte(doc))
	if err != nil {
		return "", err
	}
	cfg, err := sc.Config()
	if err != nil {
		return "", err
	}
	link, err := scenarios.LinkFromRun([]byte(doc), cfg, ivs, step)
	if err != nil {
		return "", err
	}
	return link.Path()
}
