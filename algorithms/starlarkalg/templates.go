package starlarkalg

import (
	"embed"
	"slices"
	"strings"
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
