package importrules

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/teach-dist/playground"

// rule says what one package (or a family of packages, pattern ending in "/...") may
// import from the module and the outside world, and whether it may start goroutines or
// open sockets. Goroutines, clocks and sockets belong to the live layers only.
type rule struct {
	pattern    string
	may        []string // module packages it may import ("/..." for a family)
	thirdParty []string // outside modules it may import (prefixes)
	goroutines bool     // may contain a go statement
	sockets    bool     // may import net, gorilla/websocket or nats
	stdOnly    bool     // only the standard library besides `may`
}

var (
	// helpers are the scaffolding the algorithms share (docs/adding-an-algorithm.md):
	// an algorithm imports runtime/sim and these, and never another algorithm.
	helpers  = []string{"algorithms/params", "algorithms/cs", "algorithms/nodeid", "algorithms/ringnext", "algorithms/heartbeat"}
	pure     = []string{"runtime/sim", "algorithms/..."}
	analyses = append([]string{"scenarios"}, pure...)
	// options are what a service's Options may use to fill in its defaults.
	options = "internal/defaults"
)

// The table, most specific first. Arrows point one way:
// cmd -> web -> runtime/{session,lecture,explore,...} -> scenarios -> algorithms -> runtime/sim
// (layout_test.go keeps the floors).
var rules = []rule{
	{pattern: "runtime/sim", stdOnly: true},
	{pattern: "runtime/sim/simtest", may: []string{"runtime/sim"}, stdOnly: true},
	{pattern: "algorithms", may: pure, stdOnly: true},                                                             // the registry lists every algorithm
	{pattern: "algorithms/ringnext/ringtest", may: []string{"runtime/sim", "runtime/sim/simtest"}, stdOnly: true}, // the ring elections' tests' helper
	// Algorithms written in Starlark: the interpreter is the one outside module an
	// algorithm may import. It stays pure as every algorithm does (no goroutine here;
	// algorithms/purity_test.go forbids clocks, randomness, locks and I/O in its files).
	// Inside go.starlark.net, only its profiler (StartProfile, never called) starts a
	// goroutine and reads the clock, print writes to stderr unless replaced (the package
	// replaces it), and sync/atomic serves thread cancellation: a script reaches no
	// clock, randomness, I/O or goroutine.
	{pattern: "algorithms/starlarkalg", may: append([]string{"runtime/sim"}, helpers...), thirdParty: []string{"go.starlark.net/"}},
	{pattern: "algorithms/...", may: append([]string{"runtime/sim"}, helpers...), stdOnly: true},
	{pattern: "scenarios", may: pure, stdOnly: true},
	{pattern: "static", stdOnly: true},
	{pattern: "internal/importrules", stdOnly: true},
	{pattern: "internal/testwait", stdOnly: true}, // tests' one way to wait
	{pattern: "internal/defaults", stdOnly: true}, // the services' options, filled in
	{pattern: "internal/guide", stdOnly: true},    // its test follows docs/adding-an-algorithm.md in a copy
	{pattern: "runtime/protocol", may: []string{"runtime/sim"}, stdOnly: true},
	{pattern: "runtime/causal", may: analyses, stdOnly: true},
	{pattern: "runtime/cost", may: analyses, stdOnly: true},
	{pattern: "runtime/shiviz", may: append([]string{"runtime/causal"}, analyses...), stdOnly: true},
	{pattern: "runtime/explore", may: analyses, stdOnly: true},
	{pattern: "runtime/fairq", may: []string{options}, stdOnly: true}, // the explorer's and compare's fair queue
	// Grading searches through an Explorer its caller gives (the sandbox's pool): it
	// runs no source itself.
	{pattern: "runtime/grade", may: append([]string{"runtime/explore"}, analyses...), stdOnly: true},
	// The compare engine runs many seeds at once: its worker pool is the one goroutine
	// owner outside the live layers, bounded by the server's slots.
	{pattern: "runtime/compare", may: append([]string{"runtime/cost", "runtime/fairq", options}, analyses...), stdOnly: true, goroutines: true},
	// The sandbox starts and feeds the worker processes that run students' sources,
	// and is that worker in them: it runs the explorer for a source's search.
	{pattern: "runtime/sandbox", may: append([]string{"runtime/explore", "runtime/fairq", options}, analyses...), stdOnly: true, goroutines: true},
	{pattern: "runtime/session", may: append([]string{"runtime/protocol", options}, analyses...), stdOnly: true, goroutines: true},
	{pattern: "runtime/lecture", may: append([]string{"runtime/session", "runtime/protocol", options}, analyses...),
		thirdParty: []string{"rsc.io/qr"}, goroutines: true},
	{pattern: "runtime/lecture/natsbroker", may: []string{"runtime/lecture", "runtime/protocol", options},
		thirdParty: []string{"github.com/nats-io/"}, goroutines: true, sockets: true},
	{pattern: "web/...", may: []string{"web/...", "runtime/...", "scenarios", "algorithms/...", "static", options},
		thirdParty: []string{"github.com/", "golang.org/x/"}, goroutines: true, sockets: true},
	{pattern: "cmd/internal/procfs", stdOnly: true}, // the tools' readings of /proc
	// The tools share what is the same between them under cmd/internal (only cmd sees it).
	{pattern: "cmd/...", may: []string{"cmd/internal/...", "web/...", "runtime/...", "scenarios", "algorithms/...", "static"},
		thirdParty: []string{"github.com/"}, goroutines: true, sockets: true},
}

var socketImports = []string{"net", "github.com/gorilla/websocket", "github.com/nats-io/nats.go"}

func matches(pattern, pkg string) bool {
	if fam, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == fam || strings.HasPrefix(pkg, fam+"/")
	}
	return pkg == pattern
}

func ruleFor(pkg string) (rule, bool) {
	for _, r := range rules {
		if matches(r.pattern, pkg) {
			return r, true
		}
	}
	return rule{}, false
}

type pkgInfo struct {
	path, dir string
	imports   []string
	files     []string
}

// list runs `go list` over the module and returns its packages (non-test files only).
func list(t *testing.T, patterns ...string) []pkgInfo {
	t.Helper()
	args := append([]string{"list", "-f", "{{.ImportPath}}\t{{.Dir}}\t{{join .Imports \" \"}}\t{{join .GoFiles \" \"}}"}, patterns...)
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkgInfo
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 4 {
			t.Fatalf("go list line %q", sc.Text())
		}
		pkgs = append(pkgs, pkgInfo{path: f[0], dir: f[1], imports: strings.Fields(f[2]), files: strings.Fields(f[3])})
	}
	return pkgs
}

func TestEveryPackageKeepsTheImportRules(t *testing.T) {
	pkgs := list(t, module+"/...")
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages: is the test run from the module?", len(pkgs))
	}
	for _, p := range pkgs {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.path, module), "/")
		r, ok := ruleFor(rel)
		if !ok {
			t.Errorf("%s is not in the import rules table: state where it stands (internal/importrules)", rel)
			continue
		}
		for _, imp := range p.imports {
			if why := breach(r, imp); why != "" {
				t.Errorf("%s imports %s: %s", rel, imp, why)
			}
		}
		if !r.goroutines {
			for _, f := range p.files {
				if pos, ok := startsGoroutine(t, filepath.Join(p.dir, f)); ok {
					t.Errorf("%s starts a goroutine (%s): only runtime/session, runtime/lecture, web and cmd do", rel, pos)
				}
			}
		}
	}
}

// isStd: a standard library path has no dot in its first element.
func isStd(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

func startsGoroutine(t *testing.T, file string) (string, bool) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var at string
	ast.Inspect(f, func(n ast.Node) bool {
		if g, ok := n.(*ast.GoStmt); ok && at == "" {
			at = fset.Position(g.Pos()).String()
		}
		return at == ""
	})
	return at, at != ""
}

// The checker itself must be able to fail: each kind of breach is caught.
func TestTheRulesCatchEachBreach(t *testing.T) {
	cases := []struct {
		pkg, imp string
		allowed  bool
	}{
		{"runtime/sim", "github.com/teach-dist/playground/algorithms", false},
		{"algorithms/central", "github.com/teach-dist/playground/runtime/session", false},
		{"algorithms/central", "github.com/teach-dist/playground/algorithms/params", true},
		{"algorithms/bully", "github.com/teach-dist/playground/algorithms/ring", false},
		{"algorithms/ring", "github.com/teach-dist/playground/algorithms/ringnext", true},
		{"algorithms/ringnext", "github.com/teach-dist/playground/algorithms/nodeid", true},
		{"algorithms", "github.com/teach-dist/playground/algorithms/bully", true},
		{"algorithms/central", "github.com/teach-dist/playground/scenarios", false},
		{"algorithms/central", "go.starlark.net/starlark", false},
		{"algorithms/starlarkalg", "go.starlark.net/starlark", true},
		{"algorithms/starlarkalg", "github.com/teach-dist/playground/algorithms/params", true},
		{"algorithms/starlarkalg", "github.com/teach-dist/playground/algorithms/bully", false},
		{"algorithms/starlarkalg", "github.com/teach-dist/playground/runtime/session", false},
		{"runtime/session", "github.com/teach-dist/playground/web", false},
		{"runtime/explore", "net", false},
		{"runtime/sim", "github.com/go-chi/chi/v5", false},
		{"web/anything", "github.com/teach-dist/playground/runtime/session", true},
		{"runtime/lecture", "github.com/gorilla/websocket", false},
		{"cmd/abuse", "github.com/teach-dist/playground/cmd/internal/procfs", true},
		{"cmd/internal/procfs", "github.com/teach-dist/playground/web", false},
	}
	for _, c := range cases {
		r, ok := ruleFor(c.pkg)
		if !ok {
			t.Fatalf("no rule for %s", c.pkg)
		}
		got := breach(r, c.imp) == ""
		if got != c.allowed {
			t.Errorf("%s importing %s: allowed=%v, want %v", c.pkg, c.imp, got, c.allowed)
		}
	}
	if _, ok := ruleFor("runtime/newthing"); ok {
		t.Error("an unlisted package matched a rule: new packages must state where they stand")
	}
}

// breach says why r forbids importing imp, or "" when it may.
func breach(r rule, imp string) string {
	if own, ok := strings.CutPrefix(imp, module+"/"); ok {
		if !slices.ContainsFunc(r.may, func(m string) bool { return matches(m, own) }) {
			return fmt.Sprintf("the rules allow only %v of the module", r.may)
		}
		return ""
	}
	if !r.sockets && slices.Contains(socketImports, imp) {
		return "only web, cmd and the NATS broker open sockets"
	}
	if isStd(imp) || !r.stdOnly && slices.ContainsFunc(r.thirdParty, func(pre string) bool { return strings.HasPrefix(imp, pre) }) {
		return ""
	}
	return fmt.Sprintf("outside modules allowed here: %v", r.thirdParty)
}
