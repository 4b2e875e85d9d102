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
// and every package of the module is on it. An algorithm the registry lists counts as
// named by the algorithms/ line ("one pure state machine per algorithm"), so that
// adding one (docs/adding-an-algorithm.md) needs no edit of the README.
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
	var pkgs []string
	registered := map[string]bool{}
	for _, p := range list(t, module+"/...") {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.path, module), "/")
		pkgs = append(pkgs, rel)
		if rel == "algorithms" {
			for _, imp := range p.imports {
				if alg, ok := strings.CutPrefix(imp, module+"/"); ok {
					registered[alg] = true
				}
			}
		}
	}
	for _, rel := range unlisted(pkgs, listed, registered) {
		t.Errorf("package %s is not in README's layout: say what it is there", rel)
	}
}

// unlisted are the packages (module-relative, "" the module's root) the layout does
// not name: neither listed, nor an algorithm the registry imports (registered) while
// the layout names algorithms/.
func unlisted(pkgs []string, listed, registered map[string]bool) []string {
	var out []string
	for _, rel := range pkgs {
		name, under := strings.CutPrefix(rel, "algorithms/")
		algorithm := under && !strings.Contains(name, "/") && registered[rel]
		if rel == "" || listed[rel] || algorithm && listed["algorithms"] {
			continue
		}
		out = append(out, rel)
	}
	return out
}

// A registered algorithm needs no line of its own; a helper beside the algorithms, a
// package inside an algorithm's folder and any other package do.
func TestUnlistedAcceptsRegisteredAlgorithmsOnly(t *testing.T) {
	listed := map[string]bool{"algorithms": true, "algorithms/central": true, "web": true}
	registered := map[string]bool{"algorithms/central": true, "algorithms/carvalhoroucairol": true, "runtime/sim": true}
	pkgs := []string{"", "algorithms", "algorithms/central", "algorithms/carvalhoroucairol", "algorithms/newhelper",
		"algorithms/carvalhoroucairol/crtest", "runtime/sim", "web", "web/newpart"}
	got := strings.Join(unlisted(pkgs, listed, registered), " ")
	if want := "algorithms/newhelper algorithms/carvalhoroucairol/crtest runtime/sim web/newpart"; got != want {
		t.Errorf("unlisted\n got %s\nwant %s", got, want)
	}
	delete(listed, "algorithms")
	if got := unlisted([]string{"algorithms/carvalhoroucairol"}, listed, registered); len(got) != 1 {
		t.Errorf("without an algorithms/ line a registered algorithm must be listed: got %v", got)
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

// layers are the floors of the house, top first: a package imports its own floor and
// the ones below, never one above. The README states the same order.
var layers = []struct {
	name     string
	patterns []string
}{
	{"cmd", []string{"cmd/..."}},
	{"web", []string{"web/..."}},
	{"runtime services", []string{"runtime/session/...", "runtime/lecture/...", "runtime/explore", "runtime/compare", "runtime/sandbox",
		"runtime/cost", "runtime/causal", "runtime/shiviz", "runtime/protocol", "runtime/fairq"}},
	{"scenarios", []string{"scenarios"}},
	{"algorithms", []string{"algorithms/..."}},
	{"runtime/sim", []string{"runtime/sim/..."}},
}

// readmeOrder is the sentence of README's layout that states the floors.
const readmeOrder = "`cmd -> web -> runtime/{session,lecture,explore,compare,sandbox,...} -> scenarios -> algorithms -> runtime/sim`"

func layerOf(rel string) int {
	for k, l := range layers {
		for _, p := range l.patterns {
			if matches(p, rel) {
				return k
			}
		}
	}
	return -1
}

func TestImportsGoDownTheLayersTheReadmeStates(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(strings.Fields(string(readme)), " "), readmeOrder) {
		t.Errorf("README.md does not state the import order %s", readmeOrder)
	}
	for _, p := range list(t, module+"/...") {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.path, module), "/")
		from := layerOf(rel)
		if from < 0 {
			continue // internal/, static: no floor
		}
		for _, imp := range p.imports {
			dep, ok := strings.CutPrefix(imp, module+"/")
			if !ok {
				continue
			}
			if to := layerOf(dep); to >= 0 && to < from {
				t.Errorf("%s (%s) imports %s (%s), a floor above it", rel, layers[from].name, dep, layers[to].name)
			}
		}
	}
}
