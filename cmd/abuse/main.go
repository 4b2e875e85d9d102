// Command abuse reproduces the attacks of docs/security.md against a playground on
// loopback, at full scale, and prints what the server did (loopback only).
//
//	go run ./cmd/abuse              # the attacks, one line each
//	go run ./cmd/abuse ATTACK -h    # an attack's flags
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
)

// attack is a subcommand: flags declares its flags on fs and returns the attack, which
// runs once they are parsed. onLocal, behindProxy and onChild (servers.go) start the
// attack's target first and stop it after.
type attack struct {
	name, about string
	flags       func(fs *flag.FlagSet) func(ctx context.Context) error
}

// attacks, by what they go for; each one's comment says what it does and what it
// showed before its bound.
var attacks = []attack{
	// Pages, runs and connections (pages.go)
	{"sessions", "one address loads pages past the session cap, then another asks for a run", onLocal(sessionsAttack)},
	{"ipv6", "page loads from every address of one IPv6 /64, then from another /64", behindProxy(ipv6Attack)},
	{"cpu", "heavy runs from one address while a fresh visitor's page, socket and snapshot are timed", onLocal(cpuAttack)},
	{"seeks", "sessions seeking far into a long run while another user steps", behindProxy(seeksAttack)},
	{"viewers", "viewers of a 128-process run that never read while another seeks", behindProxy(viewersAttack)},
	{"bodies", "POSTs whose bodies never come: how long the server keeps them", behindProxy(bodiesAttack)},
	{"rebind", "a page of a site whose name resolves to the server (DNS rebinding) asks for a page and a socket", behindProxy(rebindAttack)},
	// Costly work (costly.go)
	{"explorer", "loops of heavy searches from one address while another explores", onLocal(explorerAttack)},
	{"compare", "loops of heavy comparisons from one address while another asks trivial ones (-server: a playground binary)", onChild(compareAttack)},
	{"exports", "the costliest exports at once, then clients that never read them (-server: a playground binary, under ulimit -v)", onChild(exportsAttack)},
	// Lectures (lectures.go)
	{"lecture-slots", "one address starts lectures past the lecture cap, then another starts one", onLocal(lectureSlotsAttack)},
	{"followers", "one address opens thousands of follower sockets of one lecture, then another joins", behindProxy(followersAttack)},
	{"cluster-places", "one address takes follower places on both servers of a NATS cluster", clusterPlacesAttack},
	{"guesses", "one address guesses join codes until it is refused", behindProxy(guessesAttack)},
	{"answers", "one address answers a lecture's question from thousands of new followers", behindProxy(answersAttack)},
	{"answer-tricks", "one address answers again and again through other questions' answers and bad choices", behindProxy(answerTricksAttack)},
	{"forks", "a follower's fork steps past the presenter's open question", behindProxy(forksAttack)},
	// Students' sources (sandbox.go)
	{"sandbox-bombs", "students' sources that build gigabytes or spin, by link, page and follower (-server: a playground binary)", onChild(sandboxBombsAttack)},
	{"sandbox-keep", "students' sources that keep 100 MiB each in a global (-server: a playground binary)", onChild(sandboxKeepAttack)},
	{"sandbox-cpu", "runs of a source whose handler takes minutes of CPU, beside a fresh visitor (-server: a playground binary)", onChild(sandboxCPUAttack)},
	{"sandbox-checks", "Checks of a source that takes minutes, cancelled, while another address waits (-server: a playground binary)", onChild(sandboxChecksAttack)},
	{"sandbox-sigterm", "SIGTERM while students' sources keep the sandbox busy (-server: a playground binary)", onChild(sandboxSigtermAttack)},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run runs the attack args name and returns the exit status: 0, 1 when the attack
// failed, 2 when it was asked for wrongly.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		usage(stdout)
		return 0
	}
	for _, a := range attacks {
		if a.name != args[0] {
			continue
		}
		fs := flag.NewFlagSet(a.name, flag.ContinueOnError)
		fs.SetOutput(stderr)
		attack := a.flags(fs)
		if err := fs.Parse(args[1:]); errors.Is(err, flag.ErrHelp) {
			return 0
		} else if err != nil {
			return 2
		}
		if err := attack(ctx); err != nil {
			fmt.Fprintln(stderr, "abuse:", err)
			return 1
		}
		return 0
	}
	fmt.Fprintf(stderr, "abuse: %q is not an attack\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: abuse ATTACK [flags]   (abuse ATTACK -h: its flags; docs/security.md: what each showed)")
	fmt.Fprintln(w, "attacks:")
	for _, a := range attacks {
		fmt.Fprintf(w, "  %-16s %s\n", a.name, a.about)
	}
}
