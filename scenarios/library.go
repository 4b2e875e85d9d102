package scenarios

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// A curated scenario name.json may have a companion name.star: its source (a
// challenge's starting rules), kept in its own file so that it reads as code.
//
//go:embed library/*.json library/*.star
var libraryFS embed.FS

// Entry is one curated scenario.
type Entry struct {
	Name     string // stable: it is part of /s/{name} links
	Scenario *Scenario
}

var library = mustLoadLibrary()

// mustLoadLibrary parses the embedded scenarios once; a broken one is a build defect
// that the package's tests catch, so failing loudly at start-up is right.
func mustLoadLibrary() []Entry {
	files, _ := fs.Glob(libraryFS, "library/*.json") // the pattern is valid
	var out []Entry
	for _, file := range files {
		data, err := libraryFS.ReadFile(file)
		if err != nil {
			panic(err)
		}
		name := strings.TrimSuffix(path.Base(file), ".json")
		if src, err := libraryFS.ReadFile(path.Join("library", name+".star")); err == nil {
			data = withSource(data, string(src))
		}
		s, err := Parse(data)
		if err != nil {
			panic(fmt.Sprintf("curated scenario %s: %v", path.Base(file), err))
		}
		out = append(out, Entry{Name: name, Scenario: s})
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// withSource adds "source" to a scenario document: the last } of the object becomes
// ,"source":"..."}. A document that already has a source is refused by Parse (a key
// given twice).
func withSource(doc []byte, src string) []byte {
	end := bytes.LastIndexByte(doc, '}')
	if end < 0 {
		return doc // not an object: Parse says so
	}
	q, _ := json.Marshal(src) // a string always encodes
	out := append(bytes.Clone(doc[:end]), `,"source":`...)
	out = append(out, q...)
	return append(out, doc[end:]...)
}

// Curated returns the curated scenarios by name. Callers must not modify them.
func Curated() []Entry { return slices.Clone(library) }

// Lookup returns the curated scenario with this name.
func Lookup(name string) (*Scenario, bool) {
	for _, e := range library {
		if e.Name == name {
			return e.Scenario, true
		}
	}
	return nil, false
}

// Names lists the curated names, for error messages.
func Names() []string {
	out := make([]string, len(library))
	for i, e := range library {
		out[i] = e.Name
	}
	return out
}
