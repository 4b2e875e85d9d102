package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/teach-dist/playground/web"
)

func serveCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", stderr)
	defAddr := ":8080"
	if p := os.Getenv("PORT"); p != "" {
		defAddr = ":" + p
	}
	addr := fs.String("addr", defAddr, "address to listen on (default :8080, or :$PORT)")
	maxSessions := fs.Int("max-sessions", 200, "live runs at once; past it new visitors see a 'server full' page")
	idle := fs.Duration("idle", 10*time.Minute, "end a run nobody has watched for this long")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: playground serve [--addr ADDR] [--max-sessions N] [--idle D]\n\nThe web playground, with everything embedded.")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("serve: unexpected argument %q", fs.Arg(0))
	}
	if *maxSessions < 1 {
		return fmt.Errorf("serve: --max-sessions: %d must be at least 1", *maxSessions)
	}
	if *idle < time.Second {
		return fmt.Errorf("serve: --idle: %v must be at least 1s", *idle)
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	srv := web.New(web.Options{MaxSessions: *maxSessions, Idle: *idle, Logger: logger})
	return srv.ListenAndServe(ctx, *addr, func(bound string) {
		host := bound
		if strings.HasPrefix(host, "[::]:") || strings.HasPrefix(host, "0.0.0.0:") {
			host = "localhost:" + host[strings.LastIndex(host, ":")+1:]
		}
		fmt.Fprintf(stdout, "playground: serving on http://%s/\n", host)
	})
}
