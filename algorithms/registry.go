// Package algorithms is the registry of every algorithm the playground teaches. Each
// algorithm lives in its own subpackage as a pure state machine (see runtime/sim's
// contract); this package only lists them.
package algorithms

import (
	"slices"

	"github.com/teach-dist/playground/algorithms/bakery"
	"github.com/teach-dist/playground/algorithms/bully"
	"github.com/teach-dist/playground/algorithms/central"
	"github.com/teach-dist/playground/algorithms/lamport"
	"github.com/teach-dist/playground/algorithms/maekawa"
	"github.com/teach-dist/playground/algorithms/raymond"
	"github.com/teach-dist/playground/algorithms/ricartagrawala"
	"github.com/teach-dist/playground/algorithms/ricartagrawalatoken"
	"github.com/teach-dist/playground/algorithms/ring"
	"github.com/teach-dist/playground/algorithms/ringlist"
	"github.com/teach-dist/playground/algorithms/suzukikasami"
	"github.com/teach-dist/playground/algorithms/tokenring"
	"github.com/teach-dist/playground/runtime/sim"
)

// all is in catalogue order: mutual exclusion first, then election. Each builds a new
// Spec, so that no caller changes what another sees.
var all = []func() *sim.Spec{
	central.Spec,
	lamport.Spec,
	ricartagrawala.Spec,
	ricartagrawalatoken.Spec,
	tokenring.Spec,
	suzukikasami.Spec,
	raymond.Spec,
	maekawa.Spec,
	bakery.Spec,
	bully.Spec,
	ring.Spec,
	ringlist.Spec,
}

// slugs are all's slugs, in its order, each as its Spec says it.
var slugs = func() []string {
	out := make([]string, len(all))
	for i, spec := range all {
		out[i] = spec().Slug
	}
	return out
}()

// All returns every registered algorithm, in catalogue order.
func All() []*sim.Spec {
	out := make([]*sim.Spec, len(all))
	for i, spec := range all {
		out[i] = spec()
	}
	return out
}

// Lookup returns the algorithm with this slug.
func Lookup(slug string) (*sim.Spec, bool) {
	if i := slices.Index(slugs, slug); i >= 0 {
		return all[i](), true
	}
	return nil, false
}

// Slugs lists the registered slugs, for error messages.
func Slugs() []string { return slices.Clone(slugs) }
