package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/teach-dist/playground/cmd/internal/cli"
)

const exploreData = "../../runtime/explore/testdata/"

// exploreSummary is the CONTRACT of `playground explore`'s output.
type exploreSummary struct {
	Result         string   `json:"result"`
	Property       string   `json:"property"`
	States         *int64   `json:"states"`
	Transitions    *int64   `json:"transitions"`
	Depth          *int     `json:"depth"`
	Seconds        *float64 `json:"seconds"`
	Bound          string   `json:"bound"`
	Reduction      []string `json:"reduction"`
	Workers        int      `json:"workers"`
	Counterexample *struct {
		Scenario map[string]any `json:"scenario"`
		Link     string         `json:"link"`
	} `json:"counterexample"`
}

func exploreArgs(t *testing.T, stdin string, args ...string) (exploreSummary, string, int) {
	t.Helper()
	out, errOut, err := runArgs(t, stdin, append([]string{"explore"}, args...)...)
	code := 0
	if err != nil {
		code = cli.ExitCode(err)
		errOut += "playground: " + err.Error() + "\n" // as main prints it
	}
	var s exploreSummary
	if code != 1 {
		if jerr := json.Unmarshal([]byte(out), &s); jerr != nil {
			t.Fatalf("stdout is not the JSON summary (%v):\n%s", jerr, out)
		}
		if s.States == nil || s.Transitions == nil || s.Depth == nil || s.Seconds == nil {
			t.Fatalf("the summary lacks a contract field:\n%s", out)
		}
	}
	return s, errOut, code
}

func TestExploreFindsMaekawaDeadlockExit3(t *testing.T) {
	s, errOut, code := exploreArgs(t, "", "--quiet", exploreData+"maekawa-basic-3.json")
	if code != exitViolation || s.Result != "violation" || s.Property != "deadlock" {
		t.Fatalf("exit %d, %+v", code, s)
	}
	cx := s.Counterexample
	if cx == nil || !strings.HasPrefix(cx.Link, "/r/v2.maekawa.") || cx.Scenario["network"].(map[string]any)["hold"] != true {
		t.Fatalf("counterexample %+v", cx)
	}
	if !strings.Contains(errOut, "deadlock freedom is broken") {
		t.Errorf("stderr %q", errOut)
	}
}

func TestExploreProvesSuzukiKasamiExit0(t *testing.T) {
	s, _, code := exploreArgs(t, "", "--quiet", exploreData+"suzuki-kasami-3.json")
	if code != 0 || s.Result != "ok" || *s.States != 70 || s.Counterexample != nil {
		t.Fatalf("exit %d, %+v", code, s)
	}
}

// The reductions Ricart-Agrawala declares shrink the search; --full turns them off,
// and both prove the same.
func TestExploreReducesUnlessFull(t *testing.T) {
	red, _, code := exploreArgs(t, "", "--quiet", exploreData+"ricart-agrawala-3.json")
	if code != 0 || red.Result != "ok" || *red.States != 35 || len(red.Reduction) == 0 || red.Reduction[0] != "canonical" {
		t.Fatalf("exit %d, %+v", code, red)
	}
	full, _, code := exploreArgs(t, "", "--quiet", "--full", exploreData+"ricart-agrawala-3.json")
	if code != 0 || full.Result != "ok" || *full.States != 3074 || full.Reduction != nil {
		t.Fatalf("--full: exit %d, %+v", code, full)
	}
}

// Any number of workers gives the same answer; a number out of range is refused.
func TestExploreWorkersGiveTheSameAnswer(t *testing.T) {
	one, _, code := exploreArgs(t, "", "--quiet", "--workers", "1", exploreData+"lamport-non-fifo-3.json")
	if code != exitViolation || one.Workers != 1 {
		t.Fatalf("--workers 1: exit %d, %+v", code, one)
	}
	three, _, code := exploreArgs(t, "", "--quiet", "--workers", "3", exploreData+"lamport-non-fifo-3.json")
	if code != exitViolation || three.Workers != 3 {
		t.Fatalf("--workers 3: exit %d, %+v", code, three)
	}
	if *one.States != *three.States || *one.Transitions != *three.Transitions || *one.Depth != *three.Depth ||
		one.Counterexample.Link != three.Counterexample.Link {
		t.Fatalf("1 worker: %+v\n3 workers: %+v", one, three)
	}
	for _, bad := range []string{"-1", "257"} {
		_, errOut, code := exploreArgs(t, "", "--quiet", "--workers", bad, exploreData+"lamport-non-fifo-3.json")
		if code != 1 || !strings.Contains(errOut, "--workers: "+bad+" is not allowed") {
			t.Errorf("--workers %s: exit %d, stderr %q", bad, code, errOut)
		}
	}
}

func TestExploreBoundIsNotOK(t *testing.T) {
	s, errOut, code := exploreArgs(t, "", "--quiet", "--max-states", "500", exploreData+"ricart-agrawala-3-anytime.json")
	if code != exitBounded || s.Result != "bounded" || s.Bound != "max-states" || !strings.Contains(errOut, "--max-states 500") {
		t.Fatalf("exit %d, %+v, %s", code, s, errOut)
	}
}

func TestExploreProgressOnStderr(t *testing.T) {
	defer func(d time.Duration) { progressEvery = d }(progressEvery)
	progressEvery = time.Nanosecond
	_, errOut, code := exploreArgs(t, "", exploreData+"ricart-agrawala-3-anytime.json")
	if code != 0 || !strings.Contains(errOut, "states, depth") || !strings.Contains(errOut, "states/s") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	_, errOut, _ = exploreArgs(t, "", "--quiet", exploreData+"ricart-agrawala-3-anytime.json")
	if errOut != "" {
		t.Fatalf("--quiet printed %q", errOut)
	}
}

func TestExploreCuratedStdinAndRequests(t *testing.T) {
	// The curated deadlock, by name.
	s, _, code := exploreArgs(t, "", "--quiet", "maekawa-deadlock")
	if code != exitViolation || s.Property != "deadlock" {
		t.Fatalf("curated: exit %d, %+v", code, s)
	}
	// From stdin, with every process asking twice.
	doc, err := os.ReadFile(exploreData + "suzuki-kasami-3.json")
	if err != nil {
		t.Fatal(err)
	}
	s, _, code = exploreArgs(t, string(doc), "--quiet", "--requests", "2", "-")
	if code != 0 || *s.States != 10142 {
		t.Fatalf("stdin --requests 2: exit %d, %+v", code, s)
	}
}

func TestExploreBadInputExit1NamesTheField(t *testing.T) {
	dir := t.TempDir()
	write := func(name, doc string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--time", "maybe", exploreData + "suzuki-kasami-3.json"}, "--time"},
		{[]string{"--max-memory", "lots", exploreData + "suzuki-kasami-3.json"}, "--max-memory"},
		{[]string{"--max-states", "0", exploreData + "suzuki-kasami-3.json"}, "--max-states"},
		{[]string{"--requests", "9", exploreData + "suzuki-kasami-3.json"}, "requests"},
		{[]string{write("big.json", `{"version":2,"algorithm":"lamport","nodes":20}`)}, "nodes"},
		{[]string{write("bad.json", `{"version":2,"algorithm":"lamport","nodes":3,"events":[{"at":0,"do":"request","node":7}]}`)}, "events[0].node"},
		{[]string{}, "exactly one SCENARIO"},
	} {
		_, _, err := runArgs(t, "", append([]string{"explore", "--quiet"}, c.args...)...)
		var ee *exitError
		if err == nil || errors.As(err, &ee) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want exit 1 naming %s", c.args, err, c.want)
		}
	}
}

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{"512MB": 512 << 20, "2GB": 2 << 30, "1.5GiB": 3 << 29, "4096": 4096, "64k": 64 << 10} {
		if got, err := parseBytes(in); err != nil || got != want {
			t.Errorf("%s: %d %v, want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "lots", "-1GB", "0"} {
		if _, err := parseBytes(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
