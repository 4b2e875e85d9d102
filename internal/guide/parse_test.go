package guide

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// What the guide test takes from a page: the example's links anywhere, and only the
// checklist's diffs and commands, in order, indented blocks included.
func TestParseGuideReadsTheChecklist(t *testing.T) {
	doc := "# Page\n\nSee [`a/b.go`](../" + example + "/a/b.go) and [c](../" + example + "/c.json).\n\n" +
		"```sh\nnot run: before the checklist\n```\n\n## Checklist\n\n1. Step.\n\n" +
		"   ```diff\n   --- a/r.go\n   +++ a/r.go\n   @@ one @@\n    \tx\n   +\ty\n   ```\n\n" +
		"   ```sh\n   go test ./a/\n   ```\n\n```go\nnot a step\n```\n\n" +
		"```sh\ngo test ./...\ngo vet ./...\n```\n\n## After\n\n```sh\nnot run: after the checklist\n```\n"
	g, err := parseGuide(doc)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(g.files, " ") != "a/b.go c.json" {
		t.Errorf("files %v", g.files)
	}
	if len(g.steps) != 3 || g.steps[0].diff == nil || g.steps[0].diff.file != "a/r.go" ||
		strings.Join(g.steps[0].diff.hunks[0], "|") != " \tx|+\ty" ||
		g.steps[1].command != "go test ./a/" || g.steps[2].command != "go test ./...\ngo vet ./..." {
		t.Errorf("steps %+v", g.steps)
	}
	for _, bad := range []string{"no checklist here", "## Checklist\n```sh\nnever closed\n", "## Checklist\n```diff\n--- a\n+++ a\n-removed\n```\n"} {
		if _, err := parseGuide(bad); err == nil {
			t.Errorf("%q: parsed without an error", bad)
		}
	}
}

// A diff's additions go after its context, which must stand once in the file.
func TestPatchApplies(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) {
		if err := os.WriteFile(filepath.Join(dir, "r.go"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := &patch{file: "r.go", hunks: [][]string{{" \ta,", "+\tb,"}, {" }", "+// end"}}}
	write("var x = []int{\n\ta,\n\tc,\n}\n")
	if err := p.apply(dir); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "r.go")); string(got) != "var x = []int{\n\ta,\n\tb,\n\tc,\n}\n// end\n" {
		t.Errorf("patched:\n%s", got)
	}
	for _, s := range []string{"\tz,\n}\n", "\ta,\n\ta,\n}\n"} {
		write(s)
		if err := p.apply(dir); err == nil {
			t.Errorf("applied to %q, whose context is missing or twice", s)
		}
	}
}

// The page and the house agree even where the guide test does not run (-short): the
// page links every file of the worked example, and its diffs apply to the files as
// they are.
func TestTheGuideMatchesTheRepository(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, guidePath))
	if err != nil {
		t.Fatal(err)
	}
	g, err := parseGuide(string(doc))
	if err != nil {
		t.Fatal(err)
	}
	if err := g.coversExample(filepath.Join(root, example)); err != nil {
		t.Fatal(err)
	}
	copyDir := t.TempDir()
	for _, s := range g.steps {
		if s.diff == nil {
			continue
		}
		if err := copyFile(filepath.Join(root, s.diff.file), filepath.Join(copyDir, s.diff.file)); err != nil {
			t.Fatal(err)
		}
		if err := s.diff.apply(copyDir); err != nil {
			t.Errorf("%s: the diff of %s does not apply: %v", guidePath, s.diff.file, err)
		}
	}
	if len(g.commands) == 0 {
		t.Errorf("%s: the checklist has no ```sh block", guidePath)
	}
}
