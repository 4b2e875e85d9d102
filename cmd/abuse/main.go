// Command abuse reproduces the attacks of docs/security.md against a playground on
// loopback, at full scale, and prints what the server did (loopback only).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sort"
)

// attacks are the subcommands; each file of this package registers its own in init.
var attacks = map[string]func(ctx context.Context, args []string) error{}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if len(os.Args) < 2 || attacks[os.Args[1]] == nil {
		var names []string
		for n := range attacks {
			names = append(names, n)
		}
		sort.Strings(names)
		fmt.Fprintf(os.Stderr, "usage: abuse ATTACK [flags]; attacks: %v\n", names)
		os.Exit(2)
	}
	if err := attacks[os.Args[1]](ctx, os.Args[2:]); err != nil {
		fmt.Fprintln(os.Stderr, "abuse:", err)
		os.Exit(1)
	}
}
