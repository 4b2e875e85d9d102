// Command spinvsexplore puts one question to SPIN and to the playground's explorer
// in one go, and prints their answers side by side (docs/benchmarks.md, "Explorer
// vs SPIN"): Ricart-Agrawala with N processes, each asking for the CS once at the
// start, FIFO channels; is mutual exclusion kept, and can no process be left waiting
// with nothing left to happen?
//
//	go run ./cmd/spinvsexplore --n 4,5
//
// SPIN checks the Promela twin promela/ricart-agrawala.pml (`spin -a`, `cc`, then
// `pan -m100000`): with partial-order reduction, without it, and with the clock
// frozen after the request (an abstraction sound for this question only). The
// explorer runs `playground explore` (built once, so that the figures are its own)
// on the same configuration, written as a scenario file. Each figure comes from the
// kernel's accounting of the child process (getrusage): wall time, CPU time, peak
// resident memory. Everything runs on this machine, one run at a time; nothing goes
// on the network.
//
// SPIN is not a Go module: `apt-get install -y spin` (Debian, Ubuntu) or
// https://spinroot.com.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/teach-dist/playground/cmd/internal/cli"
	"github.com/teach-dist/playground/cmd/internal/procfs"
	"github.com/teach-dist/playground/runtime/explore"
)

func main() {
	cli.Main("spinvsexplore", func(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
		return run(ctx, args, stdout, stderr)
	})
}

type config struct {
	nodes      []int
	spin, cc   string
	playground string
	depth      int
	memory     int64 // bytes, for both checkers
	timeout    time.Duration
	workers    int // explore --workers (0: one per core)
	spinOnly   bool
	skipSpin   bool
	wrong      bool
	keep       bool
	args       []string // as given, for the report
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("spinvsexplore", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := config{args: args}
	nodes := fs.String("n", "4", "process counts, comma separated (2 to 8)")
	fs.StringVar(&c.spin, "spin", "spin", "the spin command")
	fs.StringVar(&c.cc, "cc", "cc", "the C compiler for pan.c")
	fs.StringVar(&c.playground, "playground", "", "a built playground binary (default: build ./cmd/playground into the work directory)")
	fs.IntVar(&c.depth, "depth", 100000, "pan -m: SPIN's search depth bound")
	memory := fs.Int64("memory-mb", 4096, "memory bound of each search, in MiB: pan's -DMEMLIM and explore's --max-memory")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Minute, "stop each search after this long (it is then reported as stopped, with where it was)")
	fs.IntVar(&c.workers, "workers", 0, "the explorer's --workers: goroutines that expand states (0: one per core; the answer is the same for any number)")
	fs.BoolVar(&c.spinOnly, "spin-only", false, "run only SPIN")
	fs.BoolVar(&c.skipSpin, "explore-only", false, "run only the explorer")
	fs.BoolVar(&c.wrong, "wrong", false, "also run SPIN on the twin's two wrong variants (no id tie-break; deferred requests never answered), which must be caught")
	fs.BoolVar(&c.keep, "keep", false, "keep the work directory (pan.c, pan, the scenario files)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: spinvsexplore [flags]\n\nRuns SPIN on the Promela twin of Ricart-Agrawala and `playground explore` on the same\nconfiguration, and prints states, seconds and memory of each.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("unexpected arguments %q (flags only)", fs.Args())
	}
	var err error
	if c.nodes, err = parseNodes(*nodes); err != nil {
		return err
	}
	if *memory < 64 || c.depth < 1 || c.timeout <= 0 {
		return errors.New("--memory-mb must be at least 64, --depth and --timeout positive")
	}
	if c.workers < 0 || c.workers > explore.MaxWorkers {
		return fmt.Errorf("--workers: %d is not allowed (1 to %d, or 0 for one per core)", c.workers, explore.MaxWorkers)
	}
	if c.spinOnly && c.skipSpin {
		return errors.New("--spin-only and --explore-only exclude each other")
	}
	c.memory = *memory << 20
	return compare(ctx, &c, stdout, stderr)
}

// parseNodes reads "4,5".
func parseNodes(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < minNodes || n > maxNodes {
			return nil, fmt.Errorf("--n: %q is not a process count from %d to %d", f, minNodes, maxNodes)
		}
		out = append(out, n)
	}
	return out, nil
}

// row is one line of the table.
type row struct {
	n                   int
	checker, verdict    string
	states, transitions int64
	depth               int
	build, wall, cpu    time.Duration
	peakRSS             int64
}

func compare(ctx context.Context, c *config, stdout, stderr io.Writer) error {
	var spin, cc string
	if !c.skipSpin {
		var err error
		if spin, cc, err = spinTools(c.spin, c.cc); err != nil {
			return err
		}
	}
	work, err := os.MkdirTemp("", "spinvsexplore-")
	if err != nil {
		return err
	}
	if c.keep {
		fmt.Fprintln(stderr, "work directory:", work)
	} else {
		defer os.RemoveAll(work)
	}
	bin := c.playground
	if bin == "" && !c.spinOnly {
		fmt.Fprintln(stderr, "building cmd/playground ...")
		if bin, err = buildPlayground(ctx, work); err != nil {
			return err
		}
	}

	fmt.Fprintf(stdout, "spinvsexplore %s\n", strings.Join(c.args, " "))
	fmt.Fprintf(stdout, "%s; %d CPUs; load average %s at the start\n", time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.NumCPU(), procfs.LoadAverage())
	if spin != "" {
		fmt.Fprintf(stdout, "%s; pan built with `cc -O2 -DSAFETY -DMEMLIM=%d`, run as `pan -m%d`\n", spinVersion(spin), c.memory>>20, c.depth)
	}
	fmt.Fprintln(stdout)
	fmt.Fprintln(stdout, "| N | checker | verdict | states | transitions | depth | build s | wall s | CPU s | peak RSS |")
	fmt.Fprintln(stdout, "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	variants := []spinVariant{variantPOR, variantNoPOR, variantFrozen}
	if c.wrong {
		variants = append(variants, variantNoTieBreak, variantForget)
	}
	setup := &spinSetup{spin: spin, cc: cc, workDir: work, optimize: "-O2", depth: c.depth, memLimitMB: c.memory >> 20, timeout: c.timeout}
	var notes []string
	for _, n := range c.nodes {
		if !c.skipSpin {
			for _, v := range variants {
				fmt.Fprintf(stderr, "N=%d: %s ...\n", n, v.name)
				r, err := runSpin(ctx, setup, v, n)
				if err != nil {
					return err
				}
				printRow(stdout, spinRow(n, v, r, c.timeout))
				if r.detail != "" {
					notes = append(notes, fmt.Sprintf("N=%d, %s: %s", n, v.name, r.detail))
				}
			}
		}
		if !c.spinOnly {
			for _, full := range []bool{false, true} {
				fmt.Fprintf(stderr, "N=%d: playground explore (full %v) ...\n", n, full)
				r, err := runExplore(ctx, bin, work, n, strconv.FormatInt(c.memory>>20, 10)+"MB", c.timeout, full, c.workers)
				if err != nil {
					return err
				}
				printRow(stdout, exploreRow(n, r, c.timeout, full))
			}
		}
	}
	fmt.Fprintf(stdout, "\nload average %s at the end\n", procfs.LoadAverage())
	for _, s := range notes {
		fmt.Fprintln(stdout, "-", s)
	}
	return ctx.Err()
}

func spinRow(n int, v spinVariant, r *spinRun, timeout time.Duration) row {
	w := row{n: n, checker: v.name, states: r.states, transitions: r.transitions, depth: r.depth,
		build: r.build, wall: r.run.wall, cpu: r.run.cpu, peakRSS: r.run.peakRSS}
	switch r.result {
	case "ok":
		w.verdict = "ok"
	case "violation":
		w.verdict = r.property
	default:
		w.verdict = "stopped (" + r.bound + ")"
		if r.bound == "time" {
			w.verdict = "stopped after " + timeout.String()
		}
	}
	return w
}

func exploreRow(n int, r *exploreRun, timeout time.Duration, full bool) row {
	checker := "playground explore (reductions the algorithm declares"
	if full {
		checker = "playground explore --full ("
	} else {
		checker += ", "
	}
	w := row{n: n, checker: checker, wall: r.run.wall, cpu: r.run.cpu, peakRSS: r.run.peakRSS}
	if r.res == nil {
		w.checker += "workers unknown)"
		w.verdict = "killed after " + (timeout + time.Minute).String()
		return w
	}
	w.checker += workersWords(r.res.Workers) + ")"
	w.states, w.transitions, w.depth = r.res.States, r.res.Transitions, r.res.Depth
	switch r.res.Result {
	case "ok":
		w.verdict = "ok"
	case "violation":
		w.verdict = r.res.Property
	default:
		w.verdict = "stopped (" + r.res.Bound + ")"
	}
	return w
}

func workersWords(n int) string {
	if n == 1 {
		return "1 worker"
	}
	return strconv.Itoa(n) + " workers"
}

func printRow(w io.Writer, r row) {
	build := ""
	if r.build > 0 {
		build = secs(r.build)
	}
	trans := ""
	if r.transitions > 0 {
		trans = group(r.transitions)
	}
	fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %d | %s | %s | %s | %s |\n", r.n, r.checker, r.verdict,
		group(r.states), trans, r.depth, build, secs(r.wall), secs(r.cpu), mib(r.peakRSS))
}

func secs(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) }

func mib(b int64) string { return strconv.FormatInt(b>>20, 10) + " MiB" }

// group writes 2673322 as 2 673 322, as docs/benchmarks.md does.
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, ch := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(ch)
	}
	return b.String()
}
