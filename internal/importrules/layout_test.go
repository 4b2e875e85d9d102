package importrules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// layoutPaths reads the folders README's "## Layout" block names: on each line the
// words ending in "/" before the description, and on a line indented under one
// (algorithms/: bakery/ bully/ ...) the folders inside it.
func layoutPaths(t *testing.T, readme string) []string {
	t.Helper()
	_, after, ok := strings.Cut(readme, "\n## Layout\n")
	if !ok {
		t.Fatal("README has no \"## Layout\" section")
	}
	parts := strings.SplitN(after, "```", 3)
	if len(parts) < 3 {
		t.Fatal("README's layout section has no ``` block")
	}
	var paths []string
	parent := "" // the first folder of the last line that is not indented
	for _, line := range strings.Split(parts[1], "\n") {
		indented := strings.HasPrefix(line, " ")
		first := ""
		for _, w := range strings.Fields(strings.ReplaceAll(line, ",", " ")) {
			if !strings.HasSuffix(w, "/") || strings.ContainsAny(w, "()`:") {
				break // the description starts
			}
			p := strings.TrimSuffix(w, "/")
			if indented {
				p = parent + "/" + p
			} else if first == "" {
				first = p
			}
			paths = append(paths, p)
		}
		if first != "" {
			parent = first
		}
	}
	return paths
}

// README's layout is the map a newcomer reads first: every folder it names exists,
// and every package of the module is on it.
func TestReadmeLayoutNamesEveryPackage(t *testing.T) {
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, p := range layoutPaths(t, string(readme)) {
		listed[p] = true
		if fi, err := os.Stat(filepath.Join(root, p)); err != nil || !fi.IsDir() {
			t.Errorf("README's layout names %s/, which is not a folder of the repository", p)
		}
	}
	for _, p := range list(t, module+"/...") {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.path, module), "/")
		if rel != "" && !listed[rel] {
			t.Errorf("package %s is not in README's layout: say what it is there", rel)
		}
	}
}

// The reader of the layout understands the forms the README uses, and a folder
// missing from it is found.
func TestLayoutPathsReadsTheBlock(t *testing.T) {
	readme := "intro\n## Layout\n\n```\n" +
		"cmd/tool/     a tool: runs things/\n" +
		"algorithms/   the registry (docs/x.md):\n" +
		"  a/ b/\n" +
		"algorithms/cs/, algorithms/nodeid/  shared names\n" +
		"web/          the server\n" +
		"```\n\nmore/ text\n"
	got := strings.Join(layoutPaths(t, readme), " ")
	want := "cmd/tool algorithms algorithms/a algorithms/b algorithms/cs algorithms/nodeid web"
	if got != want {
		t.Fatalf("layout paths\n got %s\nwant %s", got, want)
	}
}
