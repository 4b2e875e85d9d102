// Command playground is the teaching playground: `serve` (the default) hosts the web
// playground; `run` prints a scenario's trace; `list` shows what is built in.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/teach-dist/playground/cmd/internal/cli"
)

func main() { cli.Main("playground", run) }

// exitError carries a specific exit status (explore's 3 for a broken property).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }
func (e *exitError) ExitCode() int { return e.code }

const usage = `usage: playground [command] [flags]

commands:
  serve              the web playground (default)
  run SCENARIO       print the trace of a scenario (a file, a curated name, or - for stdin)
  list [--json]      the algorithms and curated scenarios
  explore SCENARIO   check every interleaving of a small scenario (JSON summary; exit 3 if a property breaks)
  grade ASSIGNMENT SUBMISSION
                     grade a source against an assignment (a summary; --gradescope, --json, --junit)
  grade pack ASSIGNMENT -o FILE
                     build a Gradescope autograder for an assignment

run 'playground COMMAND -h' for a command's flags`

// run is the whole program, minus the process: tests call it directly.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	err := dispatch(ctx, args, stdin, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil // -h printed the usage; that is a success
	}
	return err
}

func dispatch(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serveCmd(ctx, args, stdout, stderr)
	case "run":
		return runCmd(args, stdin, stdout, stderr)
	case "list":
		return listCmd(args, stdout, stderr)
	case "explore":
		return exploreCmd(ctx, args, stdin, stdout, stderr)
	case "grade":
		return gradeCmd(ctx, args, stdout, stderr)
	case "help":
		fmt.Fprintln(stdout, usage)
		return nil
	}
	return fmt.Errorf("unknown command %q\n%s", cmd, usage)
}
