package lecturehttp

import (
	"context"

	"github.com/teach-dist/playground/runtime/lecture"
	"github.com/teach-dist/playground/runtime/session"
	"github.com/teach-dist/playground/runtime/sim"
)

// runSpec is the algorithm a lecture's run runs now, when the lecture is this
// server's: the rules loaded from the run's source if the presenter runs edited rules
// (a challenge, Edit rules), so the pseudocode the hall reads is the one that runs. It
// is nil for a lecture another server hosts, whose page shows the algorithm's own.
func runSpec(ctx context.Context, l lecture.Followed) *sim.Spec {
	local, ok := l.(interface{ Session() *session.Session })
	if !ok || local.Session() == nil {
		return nil
	}
	rec, err := local.Session().Recipe(ctx)
	if err != nil || rec.Config.Spec == nil || rec.Config.Spec.Slug != l.Algorithm() {
		return nil
	}
	return rec.Config.Spec
}
