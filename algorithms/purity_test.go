package algorithms

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Algorithms are pure state machines: no clock, no randomness, no locks, no I/O and no
// goroutines. This test reads every non-test file under algorithms/ to keep it so.
func TestAlgorithmsArePure(t *testing.T) {
	forbidden := map[string]bool{"time": true, "math/rand": true, "math/rand/v2": true,
		"sync": true, "sync/atomic": true, "net": true, "net/http": true, "os": true, "log": true,
		"log/slog": true, "unsafe": true}
	files := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		files++
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if forbidden[p] {
				t.Errorf("%s imports %q: algorithms must stay pure", path, p)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if g, ok := n.(*ast.GoStmt); ok {
				t.Errorf("%s starts a goroutine at offset %d: algorithms must stay pure", path, g.Pos())
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < len(all) {
		t.Fatalf("read %d files, fewer than the %d registered algorithms", files, len(all))
	}
}

func TestRegistryIsComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range All() {
		if seen[s.Slug] {
			t.Errorf("slug %q registered twice", s.Slug)
		}
		seen[s.Slug] = true
		if s.Title == "" || s.Summary == "" || s.New == nil || len(s.Rules) == 0 || len(s.Vars) == 0 || len(s.Messages) == 0 || len(s.Costs) == 0 {
			t.Errorf("%s: title, summary, rules, vars, messages, costs and New are all required", s.Slug)
		}
		if s.Family != "mutex" && s.Family != "election" {
			t.Errorf("%s: family %q", s.Slug, s.Family)
		}
		if s.Defaults.Nodes < 2 || s.Defaults.Until <= 0 || s.Defaults.Delay[1] < s.Defaults.Delay[0] {
			t.Errorf("%s: defaults %+v", s.Slug, s.Defaults)
		}
		labels := map[string]bool{}
		for _, r := range s.Rules {
			if labels[r.Label] {
				t.Errorf("%s: rule %s twice", s.Slug, r.Label)
			}
			labels[r.Label] = true
			if len(r.Lines) == 0 || r.Says == "" {
				t.Errorf("%s: rule %s needs pseudocode lines and a sentence", s.Slug, r.Label)
			}
		}
		if _, ok := Lookup(s.Slug); !ok {
			t.Errorf("Lookup(%q) failed", s.Slug)
		}
	}
	if _, ok := Lookup("no-such"); ok {
		t.Error("Lookup accepted an unknown slug")
	}
}
