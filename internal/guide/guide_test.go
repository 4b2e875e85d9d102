package guide

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	guidePath = "docs/adding-an-algorithm.md"
	example   = "internal/guide/testdata/baton" // the worked example, laid out as in the repository
	// inCopy marks the go test that runs in the copy: there this test does not run again.
	inCopy = "PLAYGROUND_GUIDE_COPY"
)

// The guide followed to the letter adds an algorithm and leaves the tests green: in a
// copy of the repository's tracked files, the worked example's files go where the
// guide's table puts them, the checklist's diffs are applied and its commands run in
// order; the last is the done command, and it must pass.
func TestTheGuideAddsAnAlgorithm(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED under -short: the guide test (docs/adding-an-algorithm.md followed in a copy of the repository) did not run; run go test ./internal/guide/ or make test")
	}
	if os.Getenv(inCopy) != "" {
		t.Skip("this is the copy the guide test made: it does not test itself again")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, guidePath))
	if err != nil {
		t.Fatal(err)
	}
	g, err := parseGuide(string(doc))
	if err != nil {
		t.Fatalf("%s: %v", guidePath, err)
	}
	if err := g.coversExample(filepath.Join(root, example)); err != nil {
		t.Fatalf("%s: %v", guidePath, err)
	}
	if len(g.commands) == 0 {
		t.Fatalf("%s: the checklist has no ```sh block, so no done command", guidePath)
	}

	dir := workDir(t, root)
	repo := filepath.Join(dir, "repo")
	keep, err := syncTracked(root, repo)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range g.files {
		keep[f] = true
		if err := copyFile(filepath.Join(root, example, f), filepath.Join(repo, f)); err != nil {
			t.Fatal(err)
		}
	}
	if err := removeOthers(repo, keep); err != nil {
		t.Fatal(err)
	}
	// The course notes beside the copy, as beside the repository, for the tests that
	// read them.
	if notes := filepath.Join(root, "..", "shared"); exists(notes) {
		link := filepath.Join(dir, "shared")
		if _, err := os.Lstat(link); err != nil {
			if err := os.Symlink(notes, link); err != nil {
				t.Fatal(err)
			}
		}
	}

	ctx := context.Background()
	if deadline, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline.Add(-30*time.Second))
		defer cancel()
	}
	for _, s := range g.steps {
		if s.diff != nil {
			if err := s.diff.apply(repo); err != nil {
				t.Fatalf("%s: the diff of %s does not apply: %v", guidePath, s.diff.file, err)
			}
			continue
		}
		start := time.Now()
		out, err := run(ctx, repo, s.command)
		if err != nil {
			if ctx.Err() != nil {
				t.Fatalf("%s: %q did not finish in the time the test has left (the first run in a new copy takes minutes: give go test a larger -timeout)\n%s", guidePath, s.command, tail(out, 60))
			}
			t.Fatalf("%s: %q fails in a copy of the repository with the worked example added (%s):\n%s", guidePath, s.command, repo, tail(out, 80))
		}
		t.Logf("%s: %s", time.Since(start).Round(time.Second), s.command)
	}
}

// guide is what the test takes from the page: the worked example's files, and the
// checklist's diffs and commands in order.
type guide struct {
	files    []string // paths in the repository, as the table links them under example
	steps    []step
	commands []string
}

// step is a diff to apply or a command to run.
type step struct {
	diff    *patch
	command string
}

var (
	fence       = regexp.MustCompile("^( *)```([a-z]*)\\s*$")
	exampleLink = regexp.MustCompile(`\]\(\.\./` + regexp.QuoteMeta(example) + `/([^)#\s]+)\)`)
)

// parseGuide reads the page: every link into the worked example, and the ```diff and
// ```sh blocks of the section "## Checklist". A block indented under a list item has
// that indentation removed.
func parseGuide(doc string) (*guide, error) {
	g := &guide{}
	for _, m := range exampleLink.FindAllStringSubmatch(doc, -1) {
		if !slices.Contains(g.files, m[1]) {
			g.files = append(g.files, m[1])
		}
	}
	_, checklist, ok := strings.Cut(doc, "\n## Checklist\n")
	if !ok {
		return nil, fmt.Errorf(`no section "## Checklist"`)
	}
	if end := strings.Index(checklist, "\n## "); end >= 0 {
		checklist = checklist[:end]
	}
	lines := strings.Split(checklist, "\n")
	for i := 0; i < len(lines); i++ {
		m := fence.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		indent, lang := len(m[1]), m[2]
		var body []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			body = append(body, strings.TrimPrefix(lines[i], strings.Repeat(" ", indent)))
		}
		if i == len(lines) {
			return nil, fmt.Errorf("a ``` block of the checklist is not closed")
		}
		switch lang {
		case "diff":
			p, err := parsePatch(body)
			if err != nil {
				return nil, err
			}
			g.steps = append(g.steps, step{diff: p})
		case "sh":
			cmd := strings.Join(body, "\n")
			g.steps = append(g.steps, step{command: cmd})
			g.commands = append(g.commands, cmd)
		}
	}
	return g, nil
}

// coversExample checks that the page links every file of the worked example, and
// only those: what the test adds is what the page tells a reader to add.
func (g *guide) coversExample(dir string) error {
	var have []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		have = append(have, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		return err
	}
	linked := slices.Sorted(slices.Values(g.files))
	slices.Sort(have)
	if !slices.Equal(linked, have) {
		return fmt.Errorf("the page links the worked example's files %v, but %s holds %v", linked, example, have)
	}
	return nil
}

// patch is a ```diff block: "--- file" and "+++ file", then hunks, each starting
// "@@", of context lines (" ") and added lines ("+"). Only additions: a guide that
// asked a reader to delete code would say why in words.
type patch struct {
	file  string
	hunks [][]string // each line with its mark
}

func parsePatch(body []string) (*patch, error) {
	if len(body) < 3 || !strings.HasPrefix(body[0], "--- ") || !strings.HasPrefix(body[1], "+++ ") {
		return nil, fmt.Errorf("a ```diff block starts with --- FILE and +++ FILE: %q", body)
	}
	p := &patch{file: strings.TrimPrefix(body[1], "+++ ")}
	for _, l := range body[2:] {
		switch {
		case strings.HasPrefix(l, "@@"):
			p.hunks = append(p.hunks, nil)
		case len(p.hunks) > 0 && (strings.HasPrefix(l, " ") || strings.HasPrefix(l, "+")):
			p.hunks[len(p.hunks)-1] = append(p.hunks[len(p.hunks)-1], l)
		default:
			return nil, fmt.Errorf("%s: line %q is not a hunk header, a context line or an addition", p.file, l)
		}
	}
	return p, nil
}

// apply puts each hunk's additions in place: its context lines must stand together,
// once, in the file.
func (p *patch) apply(repo string) error {
	path := filepath.Join(repo, p.file)
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	lines := strings.Split(string(b), "\n")
	for _, h := range p.hunks {
		var old, patched []string
		for _, l := range h {
			if l[0] == ' ' {
				old = append(old, l[1:])
			}
			patched = append(patched, l[1:])
		}
		at := -1
		for i := 0; i+len(old) <= len(lines); i++ {
			if slices.Equal(lines[i:i+len(old)], old) {
				if at >= 0 {
					return fmt.Errorf("its context %q stands twice", old)
				}
				at = i
			}
		}
		if len(old) == 0 || at < 0 {
			return fmt.Errorf("its context %q is not in the file", old)
		}
		lines = slices.Concat(lines[:at], patched, lines[at+len(old):])
	}
	return os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644)
}

// workDir is this repository's copy, kept between runs in the temporary folder so that
// Go's build and test caches serve the next run, and locked while a test uses it.
func workDir(t *testing.T, root string) string {
	t.Helper()
	sum := sha256.Sum256([]byte(root))
	dir := filepath.Join(os.TempDir(), "playground-guide-"+hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lock.Close() }) // closing releases the lock
	return dir
}

// syncTracked makes repo hold root's tracked files as they are in the working tree,
// writing only those that differ (with their modification times, which Go's test cache
// reads), and returns their paths.
func syncTracked(root, repo string) (map[string]bool, error) {
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %v", err)
	}
	tracked := map[string]bool{}
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		fi, err := os.Lstat(filepath.Join(root, f))
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the working tree, or a link
		}
		tracked[f] = true
		if err := copyFile(filepath.Join(root, f), filepath.Join(repo, f)); err != nil {
			return nil, err
		}
	}
	return tracked, nil
}

// copyFile writes src's content to dst unless dst already has it, and gives dst src's
// mode and modification time.
func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	if have, err := os.ReadFile(dst); err == nil && bytes.Equal(have, b) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(dst, b, fi.Mode().Perm()); err != nil {
		return err
	}
	if err := os.Chmod(dst, fi.Mode().Perm()); err != nil {
		return err
	}
	return os.Chtimes(dst, fi.ModTime(), fi.ModTime())
}

// removeOthers deletes every file of repo not in keep: files an earlier run of the
// guide made (a golden trace) or that the repository no longer tracks.
func removeOthers(repo string, keep map[string]bool) error {
	return filepath.WalkDir(repo, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(repo, path)
		if err != nil || keep[filepath.ToSlash(rel)] {
			return err
		}
		return os.Remove(path)
	})
}

// run runs a command of the page with sh in the copy, its output and errors together.
func run(ctx context.Context, repo, command string) (string, error) {
	cmd := exec.CommandContext(ctx, "sh", "-ec", command)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), inCopy+"=1")
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// tail is the last n lines of out.
func tail(out string, n int) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
