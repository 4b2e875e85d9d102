package grade

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/teach-dist/playground/scenarios"
)

// The curated assignments: every curated challenge (scenarios.Challenge) is one, its
// own configuration its one check with a point per property it asks to prove, and the
// files of library/ are the others (NAME.json, its starting source in NAME.star).
//
//go:embed library/*.json library/*.star
var libraryFS embed.FS

var library = mustLoadLibrary()

// mustLoadLibrary reads the curated assignments once; a broken one is a build defect
// the package's tests catch.
func mustLoadLibrary() map[string]*Assignment {
	out := map[string]*Assignment{}
	for _, e := range scenarios.Curated() {
		if e.Scenario.Challenge == nil {
			continue
		}
		a, err := fromChallenge(e.Name, e.Scenario)
		if err != nil {
			panic(fmt.Sprintf("curated challenge %s: %v", e.Name, err))
		}
		out[e.Name] = a
	}
	files, _ := fs.Glob(libraryFS, "library/*.json") // the pattern is valid
	for _, file := range files {
		data, err := libraryFS.ReadFile(file)
		if err != nil {
			panic(err)
		}
		a, err := Parse(data, func(name string) ([]byte, error) { return libraryFS.ReadFile(path.Join("library", name)) })
		if err != nil {
			panic(fmt.Sprintf("curated assignment %s: %v", path.Base(file), err))
		}
		if a.Name != strings.TrimSuffix(path.Base(file), ".json") || out[a.Name] != nil {
			panic(fmt.Sprintf("curated assignment %s: its name %q is not its file's or is taken", path.Base(file), a.Name))
		}
		out[a.Name] = a
	}
	return out
}

// fromChallenge is a curated challenge as an assignment.
func fromChallenge(name string, sc *scenarios.Scenario) (*Assignment, error) {
	ref, err := json.Marshal(name)
	if err != nil {
		return nil, err
	}
	points := map[string]float64{}
	for _, p := range sc.Challenge.Prove {
		points[p] = 1
	}
	a := &Assignment{Assignment: Version, Name: name, Title: sc.Title, Goal: sc.Challenge.Goal,
		Algorithm: sc.Algorithm, Source: sc.Source,
		Checks: []Check{{Name: "the challenge's configuration", Scenario: ref, Points: points}}}
	return a, a.validate()
}

// Lookup returns the curated assignment with this name. Callers must not modify it.
func Lookup(name string) (*Assignment, bool) {
	a, ok := library[name]
	return a, ok
}

// Names lists the curated assignments.
func Names() []string { return slices.Sorted(maps.Keys(library)) }
