package starlarkalg

import (
	"embed"
	"slices"
	"strings"

	"github.com/teach-dist/playground/runtime/sim"
)

// The templates are Starlark versions of Go algorithms, with the same rule labels,
// pseudocode and behaviour: a student edits one to start from a working algorithm, and
// the tests prove the adapter by running both on the same scenarios.
//
//go:embed templates/*.star
var templateFS embed.FS

// Template returns the source of the template for a Go algorithm's slug.
func Template(slug string) (string, bool) {
	b, err := templateFS.ReadFile("templates/" + slug + ".star")
	if err != nil {
		return "", false
	}
	return string(b), true
}

// Templates lists the slugs that have a template, in name order.
func Templates() []string {
	entries, _ := templateFS.ReadDir("templates") // embedded: cannot fail
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		out = append(out, strings.TrimSuffix(e.Name(), ".star"))
	}
	slices.Sort(out) // by slug: the files' order puts "a-b.star" before "a.star"
	return out
}

// The skeletons of an algorithm written from scratch, one per family: small working
// algorithms that declare their own name, title and costs (own.go).
//
//go:embed skeletons/*.star
var skeletonFS embed.FS

// Skeleton returns the skeleton for a family ("mutex" or "election").
func Skeleton(family sim.Family) (string, bool) {
	b, err := skeletonFS.ReadFile("skeletons/" + string(family) + ".star")
	if err != nil {
		return "", false
	}
	return string(b), true
}
