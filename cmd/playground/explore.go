package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/teach-dist/playground/runtime/explore"
	"github.com/teach-dist/playground/runtime/sandbox"
)

// Exit statuses of explore (CONTRACT: 0 every property holds, 3 one breaks; 1 bad
// input). A bound reached proves nothing, so it is neither.
const (
	exitViolation = 3
	exitBounded   = 2
)

func exploreCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("explore", stderr)
	maxStates := fs.Int64("max-states", explore.DefaultMaxStates, "stop after this many states (the result is then \"bounded\")")
	maxMemory := fs.String("max-memory", "4GB", "stop when the search holds this much memory, e.g. 512MB or 4GB")
	timeout := fs.Duration("timeout", 0, "stop after this long, e.g. 30s or 5m (0: no limit)")
	timeMode := fs.String("time", "auto", "auto (keep time for algorithms that set timers, unless one whose timers only pace retries is proved without time), on (always keep time), or off")
	requests := fs.Int("requests", 0, fmt.Sprintf("replace the scenario's requests: every process asks this many times, 1 to %d (the first at the start, the others whenever it is free)", explore.MaxRequests))
	quiet := fs.Bool("quiet", false, "no progress lines on stderr")
	full := fs.Bool("full", false, "search the full graph: none of the reductions the algorithm declares (same verdict, more states)")
	workers := fs.Int("workers", 0, fmt.Sprintf("goroutines that expand states at once, 1 to %d (0: one per core); the result is the same for any number", explore.MaxWorkers))
	fs.Usage = func() {
		fmt.Fprintln(stderr, `usage: playground explore [flags] SCENARIO

Checks every interleaving of the scenario's messages, time-outs, workload and faults,
breadth-first, and prints a JSON summary. Exit status: 0 every property holds, 3 one
breaks (the summary has a counterexample: a scenario in hold mode and a /play link),
2 a bound was reached first (nothing proved), 1 bad input.

SCENARIO is a scenario file, a curated name (see 'playground list') or - for stdin.`)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("explore: expected exactly one SCENARIO (a file, a curated name, or -)")
	}
	opt := explore.Options{MaxStates: *maxStates, NoReduce: *full, Workers: *workers, Go: func(fn func()) { go fn() }}
	if *maxStates <= 0 {
		return fmt.Errorf("explore: --max-states: %d must be positive", *maxStates)
	}
	if *workers < 0 || *workers > explore.MaxWorkers {
		return fmt.Errorf("explore: --workers: %d is not allowed (1 to %d, or 0 for one per core)", *workers, explore.MaxWorkers)
	}
	mem, err := parseBytes(*maxMemory)
	if err != nil {
		return fmt.Errorf("explore: --max-memory: %v", err)
	}
	opt.MaxMemory = mem
	switch *timeMode {
	case "auto":
		opt.Time = explore.TimeAuto
	case "on":
		opt.Time = explore.TimeOn
	case "off":
		opt.Time = explore.TimeOff
	default:
		return fmt.Errorf("explore: --time: %q is not allowed (allowed: auto, on, off)", *timeMode)
	}
	if *timeout < 0 {
		return fmt.Errorf("explore: --timeout: %v must not be negative", *timeout)
	}
	// A source is a student's code: it loads, runs and is searched in sandbox workers
	// under a memory limit a little above the search's own (runtime/sandbox).
	box, done := loadSourcesIn(sandbox.Options{Workers: 1, Memory: max(2*mem+256<<20, 512<<20)})
	defer done()
	sc, err := loadScenario(fs.Arg(0), stdin)
	if err != nil {
		return err
	}
	if *requests != 0 {
		if sc, err = explore.WithRequests(sc, *requests); err != nil {
			return err
		}
	}
	if *timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}
	if !*quiet {
		opt.ProgressEvery = progressEvery
		opt.Progress = func(p explore.Progress) {
			fmt.Fprintf(stderr, "explore: %d states, depth %d, %.0f states/s, %s\n", p.States, p.Depth, p.StatesPerSecond, formatBytes(p.Memory))
		}
	}
	// The search's arrays are large, pointer-free (cheap to collect around) and grow by
	// reallocation: collecting more often returns the old copies before the process
	// doubles its footprint, and a soft limit a little above --max-memory holds it
	// there (this process does nothing else).
	defer debug.SetGCPercent(debug.SetGCPercent(20))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(mem + mem/4))
	search := explore.Explore
	if sc.Source != "" {
		search = box.Explore
	}
	res, err := search(ctx, sc, opt)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(res); err != nil {
		return err
	}
	switch res.Result {
	case explore.ResultViolation:
		return &exitError{code: exitViolation, err: errors.New("explore: " + res.Message)}
	case explore.ResultBounded:
		return &exitError{code: exitBounded, err: errors.New("explore: " + res.Message)}
	}
	return nil
}

// progressEvery is how often a long search reports on stderr (tests shorten it).
var progressEvery = time.Second

// parseBytes reads 512MB, 2GB, 1.5GiB, 4096 (bytes) ...; K, M, G are powers of 1024.
func parseBytes(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "IB"), "B")
	mult := int64(1)
	switch {
	case strings.HasSuffix(t, "K"):
		mult, t = 1<<10, strings.TrimSuffix(t, "K")
	case strings.HasSuffix(t, "M"):
		mult, t = 1<<20, strings.TrimSuffix(t, "M")
	case strings.HasSuffix(t, "G"):
		mult, t = 1<<30, strings.TrimSuffix(t, "G")
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil || v <= 0 || v*float64(mult) > 1<<50 {
		return 0, fmt.Errorf("%q is not a size (write e.g. 512MB or 4GB)", s)
	}
	return int64(v * float64(mult)), nil
}

func formatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", n>>10)
}
