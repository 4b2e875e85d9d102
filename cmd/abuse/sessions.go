package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"time"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/web"
)

func init() { attacks["sessions"] = sessionsAttack }

// sessionsAttack: one address loads N pages (each a new run), with a socket on each
// unless -sockets=false, on a server capped at -max sessions; then a second address
// asks for a page, a socket and a snapshot: one address must not fill the session cap.
func sessionsAttack(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("sessions", flag.ContinueOnError)
	loads := fs.Int("loads", 205, "page loads from the attacking address")
	maxSessions := fs.Int("max", 200, "the server's --max-sessions")
	sockets := fs.Bool("sockets", true, "open (and keep) a socket on each attacking page")
	if err := fs.Parse(args); err != nil {
		return err
	}
	base, stop, err := fairServer(ctx, web.Options{MaxSessions: *maxSessions})
	if err != nil {
		return err
	}
	defer stop()
	attacker := newFairClient("127.0.0.1")
	codes := map[int]int{}
	var conns []*websocket.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	start := time.Now()
	for range *loads {
		attacker.fresh()
		code, id, err := attacker.page(base + "/play/ricart-agrawala?n=3")
		if err != nil {
			return err
		}
		codes[code]++
		if *sockets && code == http.StatusOK {
			if c, err := attacker.socket(base, id); err == nil {
				conns = append(conns, c)
			}
		}
	}
	fmt.Printf("attacker 127.0.0.1: %d page loads in %v: status %v, %d sockets open\n", *loads, time.Since(start).Round(time.Millisecond), codes, len(conns))
	victim := newFairClient("127.0.0.2")
	t0 := time.Now()
	code, id, err := victim.page(base + "/play/bully?n=3")
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		return fmt.Errorf("second address 127.0.0.2: page %d (%v): the server stayed full", code, time.Since(t0))
	}
	c, err := victim.socket(base, id)
	if err != nil {
		return fmt.Errorf("second address 127.0.0.2: socket: %w", err)
	}
	c.Close()
	fmt.Printf("second address 127.0.0.2: page 200, socket and snapshot in %v\n", time.Since(t0).Round(time.Millisecond))
	return nil
}
