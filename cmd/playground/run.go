package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/runtime/sandbox"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/scenarios"
)

func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parseFlags turns flag's own errors (already printed with the usage) into one error.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%s: %w", fs.Name(), err)
	}
	return nil
}

func runCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("run", stderr)
	seed := fs.Int64("seed", -1, "override the scenario's seed (0 or more)")
	until := fs.Int("until", 0, "override the scenario's end time")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: playground run [--seed N] [--until T] SCENARIO\n\nSCENARIO is a scenario file, a curated name (see 'playground list') or - for stdin.")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("run: expected exactly one SCENARIO (a file, a curated name, or -)")
	}
	box, done := loadSourcesIn(sandbox.Options{Workers: 1}) // a source runs in a sandbox worker
	defer done()
	sc, err := loadScenario(fs.Arg(0), stdin)
	if err != nil {
		return err
	}
	if *seed < -1 {
		return fmt.Errorf("run: --seed: %d must be 0 or more", *seed)
	}
	if *seed >= 0 {
		sc.Seed = uint64(*seed)
	}
	if *until < 0 || *until > sim.MaxTime {
		return fmt.Errorf("run: --until: %d is out of range (1 to %d)", *until, sim.MaxTime)
	}
	if *until > 0 {
		sc.Until = *until
	}
	cfg, err := sc.Config()
	if err != nil {
		return err
	}
	if sc.Source != "" {
		// A student's source runs, whole, in a sandbox worker, which writes the trace.
		if err := box.Run(context.Background(), sc, stdout); err != nil {
			return fmt.Errorf("run: %w", err)
		}
		return nil
	}
	out := bufio.NewWriterSize(stdout, 64<<10)
	var werr error
	s, err := sim.New(cfg, sim.NewEncoder(cfg.Spec, cfg.IDs).To(out, &werr))
	if err == nil {
		err = s.Run()
	}
	if ferr := out.Flush(); werr == nil {
		werr = ferr
	}
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	return werr
}

// loadSourcesIn starts a sandbox of opts and makes it the scenarios' source loader: a
// student's source then loads and runs only in its workers. done gives the loading
// back to this process and closes the sandbox.
func loadSourcesIn(opts sandbox.Options) (box *sandbox.Pool, done func()) {
	box = sandbox.New(opts)
	scenarios.UseSourceLoader(box)
	return box, func() {
		scenarios.UseSourceLoader(scenarios.InProcess)
		box.Close()
	}
}

// loadScenario reads "-" (stdin), a file, or a curated name, in that order.
func loadScenario(arg string, stdin io.Reader) (*scenarios.Scenario, error) {
	if arg == "-" {
		return scenarios.Decode(stdin)
	}
	f, err := os.Open(arg)
	if err == nil {
		defer f.Close()
		sc, err := scenarios.Decode(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", arg, err)
		}
		return sc, nil
	}
	if sc, ok := scenarios.Lookup(arg); ok {
		copy := *sc // the curated value is shared: override fields on a copy
		return &copy, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return nil, fmt.Errorf("%q is neither a file nor a curated scenario (curated: %s)", arg, strings.Join(scenarios.Names(), ", "))
}

// listing is the CONTRACT of `playground list --json`.
type listing struct {
	Algorithms []listedAlgorithm `json:"algorithms"`
	Scenarios  []listedScenario  `json:"scenarios"`
}

type listedAlgorithm struct {
	Slug   string `json:"slug"`
	Title  string `json:"title"`
	Family string `json:"family"`
}

type listedScenario struct {
	Name      string `json:"name"`
	Algorithm string `json:"algorithm"`
	Title     string `json:"title"`
}

func listCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("list", stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("list: unexpected argument %q", fs.Arg(0))
	}
	var l listing
	for _, s := range algorithms.All() {
		l.Algorithms = append(l.Algorithms, listedAlgorithm{Slug: s.Slug, Title: s.Title, Family: string(s.Family)})
	}
	for _, e := range scenarios.Curated() {
		l.Scenarios = append(l.Scenarios, listedScenario{Name: e.Name, Algorithm: e.Scenario.Algorithm, Title: e.Scenario.Title})
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(l)
	}
	fmt.Fprintln(stdout, "Algorithms:")
	for _, a := range l.Algorithms {
		fmt.Fprintf(stdout, "  %-24s %-9s %s\n", a.Slug, a.Family, a.Title)
	}
	fmt.Fprintln(stdout, "\nCurated scenarios (playground run NAME):")
	for _, s := range l.Scenarios {
		fmt.Fprintf(stdout, "  %-34s %-22s %s\n", s.Name, s.Algorithm, s.Title)
	}
	return nil
}
