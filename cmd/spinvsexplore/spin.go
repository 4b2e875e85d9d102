package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// model is the Promela twin of algorithms/ricartagrawala (its header says how it
// matches the Go code).
//
//go:embed promela/ricart-agrawala.pml
var model []byte

const modelFile = "ricart-agrawala.pml"

// installHint is said whenever spin or a C compiler is missing.
const installHint = "install SPIN with `apt-get install -y spin` (Debian, Ubuntu; it brings gcc) " +
	"or from https://spinroot.com, and a C compiler (`apt-get install -y gcc`)"

// spinVariant is one way of running SPIN on the twin.
type spinVariant struct {
	name    string   // for the table
	defines []string // for spin -a (the model's macros)
	cflags  []string // for cc (pan's options)
}

var (
	variantPOR    = spinVariant{name: "SPIN, partial-order reduction"}
	variantNoPOR  = spinVariant{name: "SPIN, no reduction", cflags: []string{"-DNOREDUCE"}}
	variantFrozen = spinVariant{name: "SPIN, frozen clock", defines: []string{"-DFROZEN_CLOCK"}}
	// Wrong on purpose (the model's header): each must be caught.
	variantNoTieBreak = spinVariant{name: "SPIN, no id tie-break (wrong)", defines: []string{"-DNO_TIEBREAK"}}
	variantForget     = spinVariant{name: "SPIN, deferred never answered (wrong)", defines: []string{"-DFORGET_DEFERRED"}}
)

// spinTools finds spin and the C compiler, or says how to install them.
func spinTools(spin, cc string) (string, string, error) {
	sp, err := exec.LookPath(spin)
	if err != nil {
		return "", "", fmt.Errorf("spin not found (%q): %s", spin, installHint)
	}
	c, err := exec.LookPath(cc)
	if err != nil {
		return "", "", fmt.Errorf("no C compiler (%q): %s", cc, installHint)
	}
	return sp, c, nil
}

// spinVersion is the first line of `spin -V`.
func spinVersion(spin string) string {
	out, err := exec.Command(spin, "-V").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
}

// spinRun is what one pan run found.
type spinRun struct {
	result      string // "ok", "violation", "bounded"
	property    string // mutual-exclusion, deadlock (the kernel's names)
	bound       string // for bounded: memory, depth, time
	detail      string // pan's own words for an error, or where a stopped run was
	states      int64
	transitions int64
	depth       int
	build       time.Duration // spin -a and cc
	run         *measured
}

// spinSetup is how every pan is built and run.
type spinSetup struct {
	spin, cc   string
	workDir    string
	optimize   string // cc's -O flag: -O2 for figures; the tests take -O0, quicker to compile
	depth      int    // pan -m
	memLimitMB int64  // pan stops there (its -DMEMLIM) before it takes the machine's memory
	timeout    time.Duration
}

// runSpin writes the twin into a directory of its own, generates and compiles pan
// for n processes, and runs `pan -m depth`; a run past the timeout is killed.
func runSpin(ctx context.Context, s *spinSetup, v spinVariant, n int) (*spinRun, error) {
	spin, cc := s.spin, s.cc
	dir, err := os.MkdirTemp(s.workDir, "spin-")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, modelFile), model, 0o644); err != nil {
		return nil, err
	}
	start := time.Now()
	gen := append([]string{"-DN=" + strconv.Itoa(n)}, v.defines...)
	if out, err := runIn(ctx, dir, spin, append(gen, "-a", modelFile)...); err != nil {
		return nil, fmt.Errorf("spin -a (N=%d %s): %v\n%s", n, strings.Join(v.defines, " "), err, out)
	}
	cargs := append([]string{s.optimize, "-DSAFETY", "-DMEMLIM=" + strconv.FormatInt(s.memLimitMB, 10)}, v.cflags...)
	if out, err := runIn(ctx, dir, cc, append(cargs, "-o", "pan", "pan.c")...); err != nil {
		return nil, fmt.Errorf("cc pan.c: %v\n%s", err, out)
	}
	r := &spinRun{build: time.Since(start)}
	r.run, err = runMeasured(ctx, s.timeout, dir, "./pan", "-m"+strconv.Itoa(s.depth))
	if err != nil {
		return nil, fmt.Errorf("pan: %v", err)
	}
	if err := r.parse(r.run.stdout + r.run.stderr); err != nil {
		return nil, fmt.Errorf("pan (N=%d, %s): %v\n%s", n, v.name, err, r.run.stdout)
	}
	if r.run.timedOut {
		r.result, r.bound = "bounded", "time"
	}
	return r, nil
}

// runIn runs a build step, its output kept for the error.
func runIn(ctx context.Context, dir, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

var (
	reVector   = regexp.MustCompile(`depth reached (\d+), errors: (\d+)`)
	reStored   = regexp.MustCompile(`(?m)^\s*(\d+) states, stored`)
	reTrans    = regexp.MustCompile(`(?m)^\s*(\d+) transitions \(= stored\+matched\)`)
	reAssert   = regexp.MustCompile(`(?m)^pan:\d+: (assertion violated .*)$`)
	reEnd      = regexp.MustCompile(`(?m)^pan:\d+: (invalid end state .*)$`)
	reProgress = regexp.MustCompile(`(?m)^Depth=\s*(\d+) States=\s*(\S+) .*$`)
)

// parse reads pan's report. A run killed at its deadline has only progress lines
// (one per million states): the last says where it was.
func (r *spinRun) parse(out string) error {
	if r.run != nil && r.run.timedOut {
		if p := reProgress.FindAllStringSubmatch(out, -1); len(p) > 0 {
			last := p[len(p)-1]
			r.detail = "stopped at " + strings.Join(strings.Fields(last[0]), " ")
			f, _ := strconv.ParseFloat(last[2], 64)
			r.states = int64(f)
			r.depth, _ = strconv.Atoi(last[1])
		}
		return nil
	}
	m := reVector.FindStringSubmatch(out)
	if m == nil {
		return errors.New("no \"depth reached ..., errors: ...\" line in its report")
	}
	r.depth, _ = strconv.Atoi(m[1])
	errs, _ := strconv.Atoi(m[2])
	if s := reStored.FindStringSubmatch(out); s != nil {
		r.states, _ = strconv.ParseInt(s[1], 10, 64)
	}
	if s := reTrans.FindStringSubmatch(out); s != nil {
		r.transitions, _ = strconv.ParseInt(s[1], 10, 64)
	}
	switch {
	case errs > 0:
		r.result = "violation"
		if a := reAssert.FindStringSubmatch(out); a != nil {
			r.property, r.detail = "mutual-exclusion", a[1]
		} else if e := reEnd.FindStringSubmatch(out); e != nil {
			r.property, r.detail = "deadlock", e[1]
		} else {
			return fmt.Errorf("%d errors, neither an assertion nor an invalid end state", errs)
		}
	case strings.Contains(out, "reached -DMEMLIM bound"):
		r.result, r.bound = "bounded", "memory"
	case strings.Contains(out, "max search depth too small"):
		r.result, r.bound = "bounded", "depth"
	case strings.Contains(out, "Search not completed"):
		r.result, r.bound = "bounded", "unknown"
	default:
		r.result = "ok"
	}
	return nil
}
