package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/cmd/internal/cli"
	"github.com/teach-dist/playground/scenarios"
)

func runArgs(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), err
}

func TestRunCuratedPrintsTraceV1(t *testing.T) {
	out, _, err := runArgs(t, "", "run", "ricart-agrawala-concurrent")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i, line := range lines {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("line %d is not JSON: %s", i+1, line)
		}
		if ev["seq"] != float64(i) {
			t.Fatalf("line %d has seq %v", i+1, ev["seq"])
		}
		if _, ok := ev["t"]; !ok {
			t.Fatalf("line %d has no t", i+1)
		}
	}
	if !strings.Contains(lines[len(lines)-1], `"type":"end"`) {
		t.Fatalf("last line is not the end event: %s", lines[len(lines)-1])
	}
}

func TestRunFromFileAndStdinMatchCurated(t *testing.T) {
	sc, _ := scenarios.Lookup("ricart-agrawala-concurrent")
	var doc bytes.Buffer
	if err := sc.Encode(&doc); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(path, doc.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	want, _, _ := runArgs(t, "", "run", "ricart-agrawala-concurrent")
	fromFile, _, err := runArgs(t, "", "run", path)
	if err != nil || fromFile != want {
		t.Fatalf("file run differs (err %v)", err)
	}
	fromStdin, _, err := runArgs(t, doc.String(), "run", "-")
	if err != nil || fromStdin != want {
		t.Fatalf("stdin run differs (err %v)", err)
	}
	otherSeed, _, err := runArgs(t, "", "run", "--seed", "99", "ricart-agrawala-concurrent")
	if err != nil || otherSeed == want {
		t.Fatalf("--seed did not change the run (err %v)", err)
	}
	short, _, err := runArgs(t, "", "run", "--until", "5", "ricart-agrawala-concurrent")
	if err != nil || strings.Count(short, "\n") >= strings.Count(want, "\n") {
		t.Fatalf("--until did not shorten the run (err %v)", err)
	}
}

func TestListJSONIsTheContract(t *testing.T) {
	out, _, err := runArgs(t, "", "list", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var l struct {
		Algorithms []map[string]string `json:"algorithms"`
		Scenarios  []map[string]string `json:"scenarios"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		t.Fatal(err)
	}
	if len(l.Algorithms) != len(algorithms.All()) || len(l.Scenarios) != len(scenarios.Curated()) {
		t.Fatalf("listed %d algorithms and %d scenarios", len(l.Algorithms), len(l.Scenarios))
	}
	for _, a := range l.Algorithms {
		if a["slug"] == "" || a["title"] == "" || (a["family"] != "mutex" && a["family"] != "election") || len(a) != 3 {
			t.Fatalf("algorithm entry %v", a)
		}
	}
	for _, s := range l.Scenarios {
		if s["name"] == "" || s["algorithm"] == "" || s["title"] == "" || len(s) != 3 {
			t.Fatalf("scenario entry %v", s)
		}
	}
	text, _, err := runArgs(t, "", "list")
	if err != nil || !strings.Contains(text, "ricart-agrawala") {
		t.Fatalf("plain list: %v %q", err, text)
	}
}

func TestBadInputIsAClearError(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"version":1,"algorithm":"ricart-agrawala","nodes":500}`), 0o644)
	unknown := filepath.Join(dir, "unknown.json")
	os.WriteFile(unknown, []byte(`{"version":1,"algorithm":"ricart-agrawala","speed":2}`), 0o644)
	tests := []struct {
		name  string
		stdin string
		args  []string
		says  string
	}{
		{"unknown command", "", []string{"fly"}, `unknown command "fly"`},
		{"run without scenario", "", []string{"run"}, "exactly one SCENARIO"},
		{"run two scenarios", "", []string{"run", "a", "b"}, "exactly one SCENARIO"},
		{"run missing", "", []string{"run", "no-such-thing"}, "neither a file nor a curated scenario"},
		{"run bad field", "", []string{"run", bad}, "nodes: 500 is out of range"},
		{"run unknown field", "", []string{"run", unknown}, "speed"},
		{"run bad stdin", "{", []string{"run", "-"}, "not valid JSON"},
		{"run unknown flag", "", []string{"run", "--fast", "x"}, "flag provided but not defined"},
		{"run bad seed", "", []string{"run", "--seed", "-4", "ricart-agrawala-concurrent"}, "--seed"},
		{"run seed not a number", "", []string{"run", "--seed", "abc", "ricart-agrawala-concurrent"}, "invalid value"},
		{"run bad until", "", []string{"run", "--until", "-1", "ricart-agrawala-concurrent"}, "--until"},
		{"list argument", "", []string{"list", "extra"}, "unexpected argument"},
		{"list unknown flag", "", []string{"list", "--xml"}, "flag provided but not defined"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runArgs(t, tc.stdin, tc.args...)
			if err == nil {
				t.Fatalf("%v succeeded", tc.args)
			}
			if !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("error %q does not say %q", err, tc.says)
			}
			if cli.ExitCode(err) != 1 {
				t.Fatalf("exit code %d, want 1", cli.ExitCode(err))
			}
		})
	}
}

func TestHelpFlagIsNotAnError(t *testing.T) {
	_, stderr, err := runArgs(t, "", "run", "-h")
	if err != nil {
		t.Fatalf("err %v", err)
	}
	if !strings.Contains(stderr, "usage: playground run") {
		t.Fatalf("no usage on stderr: %q", stderr)
	}
}

// The real binary: exit status and stderr as the command-line contract says.
func TestBinaryExitCodes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "playground")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "run", "ricart-agrawala-concurrent")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	lines := 0
	for sc.Scan() {
		lines++
	}
	if lines < 10 {
		t.Fatalf("only %d trace lines", lines)
	}
	cmd = exec.Command(bin, "run", "-")
	cmd.Stdin = strings.NewReader(`{"version":1,"algorithm":"nope"}`)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("invalid scenario: %v, want exit 1", err)
	}
	if !strings.Contains(stderr.String(), `algorithm: "nope" is unknown`) {
		t.Fatalf("stderr %q does not name the field", stderr.String())
	}
}

// Scenario files saved from earlier builds (scenarios/testdata/files: the file and the
// trace `playground run` gave for it then) run the same today. A version 1 file keeps
// the defaults it was written with (defaults epoch 1): Maekawa's processes are 0..N-1
// there, so "node": 0 is a process, and a ring election does not skip the crashed
// leader. The same file as version 2 takes today's defaults. Rule labels are compared
// by place only: they were renamed since (docs/labels.md), which changes no step.
func TestScenarioFilesFromEarlierBuildsRunTheSameRun(t *testing.T) {
	dir := filepath.Join("..", "..", "scenarios", "testdata", "files")
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) < 3 {
		t.Fatalf("saved files: %v (%d)", err, len(files))
	}
	blank := func(trace string) string {
		var out []string
		for _, line := range strings.Split(strings.TrimSpace(trace), "\n") {
			var ev map[string]any
			if err := json.Unmarshal([]byte(line), &ev); err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			if ev["type"] == "rule" {
				ev["rule"] = ""
			}
			b, _ := json.Marshal(ev)
			out = append(out, string(b))
		}
		return strings.Join(out, "\n")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			want, err := os.ReadFile(strings.TrimSuffix(path, ".json") + ".jsonl")
			if err != nil {
				t.Fatal(err)
			}
			got, stderr, err := runArgs(t, "", "run", path)
			if err != nil {
				t.Fatalf("run: %v (%s)", err, stderr)
			}
			if blank(got) != blank(string(want)) {
				t.Fatalf("another run today:\n got %.400s\nwant %.400s", blank(got), blank(string(want)))
			}
			// Version 2 is read with today's defaults: Maekawa's ids are 1..N and
			// refuse node 0; the ring skips the crashed leader.
			doc, _ := os.ReadFile(path)
			v2 := strings.Replace(string(doc), `"version": 1`, `"version": 2`, 1)
			out, stderr, err := runArgs(t, v2, "run", "-")
			switch {
			case strings.HasPrefix(filepath.Base(path), "maekawa"):
				if err == nil || !strings.Contains(stderr+err.Error(), "0 is not a node id (ids: 1 2 3)") {
					t.Errorf("version 2 with node 0: %v %s, want 0 refused", err, stderr)
				}
			case strings.HasPrefix(filepath.Base(path), "ring"):
				if err != nil || blank(out) == blank(string(want)) || !strings.Contains(out, `"rule":"DT-1"`) {
					t.Errorf("version 2 ring: %v, want today's run, which skips the crashed leader", err)
				}
			default: // no default of central changed
				if err != nil || blank(out) != blank(string(want)) {
					t.Errorf("version 2 central: %v, want the same run", err)
				}
			}
		})
	}
}
