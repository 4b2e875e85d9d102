package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"strings"
	"testing"
)

func TestRunSaysWhatItWasAsked(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		code       int
		out, inErr string // what stdout and stderr must hold
	}{
		{args: nil, code: 2, inErr: "sandbox-sigterm  SIGTERM while"},
		{args: []string{"help"}, code: 0, out: "rebind           a page of a site"},
		{args: []string{"nope"}, code: 2, inErr: `"nope" is not an attack`},
		{args: []string{"rebind", "-h"}, code: 0},
		{args: []string{"sessions", "-loads", "many"}, code: 2, inErr: "invalid value"},
		// A whole attack, small: the in-process server, a client, a socket.
		{args: []string{"rebind"}, code: 0},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), tc.args, &stdout, &stderr); code != tc.code {
			t.Errorf("abuse %v: exit %d, want %d (stderr %q)", tc.args, code, tc.code, stderr.String())
		}
		if !strings.Contains(stdout.String(), tc.out) || !strings.Contains(stderr.String(), tc.inErr) {
			t.Errorf("abuse %v: stdout %q, stderr %q; want them to hold %q and %q", tc.args, stdout.String(), stderr.String(), tc.out, tc.inErr)
		}
	}
}

// Every attack is listed once, with a line that says what it does, and declares its
// flags without clashing (a flag declared twice panics).
func TestEveryAttackDeclaresItself(t *testing.T) {
	seen := map[string]bool{}
	for _, a := range attacks {
		if seen[a.name] || a.about == "" {
			t.Errorf("attack %q: listed twice, or without a description", a.name)
		}
		seen[a.name] = true
		fs := flag.NewFlagSet(a.name, flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		if a.flags(fs) == nil {
			t.Errorf("attack %q: no attack to run", a.name)
		}
	}
}
