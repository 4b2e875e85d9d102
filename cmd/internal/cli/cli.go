// Package cli is what each tool's main does around its work: a context cancelled on
// an interrupt or SIGTERM, the standard streams, and on an error the message under the
// tool's name and its exit status. The work itself (run) stays a function that tests
// call with their own arguments and streams.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Run is a tool's work: its arguments without the program name, and its streams.
type Run func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error

// ExitCoder is an error that chooses the exit status (the playground's explore exits 3
// when a property breaks); any other error exits 1.
type ExitCoder interface {
	error
	ExitCode() int
}

// Main runs run on the process's arguments and streams until it returns or the
// process is interrupted, then exits: "name: error" on stderr and ExitCode's status
// when run failed.
func Main(name string, run Run) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(ExitCode(err))
	}
}

// ExitCode is the status err asks for: an ExitCoder's own, 1 for any other error, 0
// for none.
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	if ec, ok := errors.AsType[ExitCoder](err); ok {
		return ec.ExitCode()
	}
	return 1
}
