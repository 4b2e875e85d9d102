package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/teach-dist/playground/web"
)

func mustFrame(t *testing.T, s string) frame {
	t.Helper()
	var f frame
	if err := json.Unmarshal([]byte(s), &f); err != nil {
		t.Fatal(err)
	}
	return f
}

// The checker counts what a stream loses or repeats, and accepts a reconnection whose
// snapshot's recent events cover what the drop cut off.
func TestContinuityCountsLossesAndDuplicates(t *testing.T) {
	for _, tc := range []struct {
		name             string
		frames           []string
		lost, dup, steps int64
		caughtUp         int64
	}{
		{"in order", []string{
			`{"type":"snapshot","step":3,"seq":9}`,
			`{"type":"events","batches":[{"step":4,"events":[{"seq":10},{"seq":11}]},{"step":4,"events":[{"seq":12}]}]}`,
			`{"type":"events","batches":[{"step":5,"events":[]},{"step":6,"events":[{"seq":13}]}]}`,
		}, 0, 0, 0, 0},
		{"a hole", []string{
			`{"type":"snapshot","step":3,"seq":9}`,
			`{"type":"events","batches":[{"step":4,"events":[{"seq":10},{"seq":13}]}]}`,
		}, 2, 0, 0, 0},
		{"a repeat", []string{
			`{"type":"snapshot","step":3,"seq":9}`,
			`{"type":"events","batches":[{"step":4,"events":[{"seq":9},{"seq":10}]}]}`,
		}, 0, 1, 0, 0},
		{"a step skipped", []string{
			`{"type":"snapshot","step":3,"seq":9}`,
			`{"type":"events","batches":[{"step":5,"events":[{"seq":10}]}]}`,
		}, 0, 0, 1, 0},
		{"reconnection covered by recent", []string{
			`{"type":"snapshot","step":3,"seq":9}`,
			`{"type":"events","batches":[{"step":4,"events":[{"seq":10}]}]}`,
			`{"type":"snapshot","step":6,"seq":14,"recent":[{"seq":8},{"seq":9},{"seq":10},{"seq":11},{"seq":12},{"seq":13},{"seq":14}]}`,
			`{"type":"events","batches":[{"step":7,"events":[{"seq":15}]}]}`,
		}, 0, 0, 0, 1},
		{"reconnection beyond recent", []string{
			`{"type":"snapshot","step":3,"seq":9}`,
			`{"type":"snapshot","step":9,"seq":20,"recent":[{"seq":15},{"seq":16},{"seq":17},{"seq":18},{"seq":19},{"seq":20}]}`,
		}, 5, 0, 0, 0},
		{"reconnection to an older point", []string{
			`{"type":"snapshot","step":3,"seq":9}`,
			`{"type":"snapshot","step":2,"seq":6}`,
		}, 0, 3, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var k continuity
			st := &stats{}
			for _, s := range tc.frames {
				f := mustFrame(t, s)
				if f.Type == "snapshot" {
					k.snapshot(f, st)
				} else {
					k.events(f, st)
				}
			}
			if st.lost.Load() != tc.lost || st.dup.Load() != tc.dup || st.badStep.Load() != tc.steps || st.caughtUp.Load() != tc.caughtUp {
				t.Fatalf("lost %d dup %d steps %d caught up %d; want %d %d %d %d", st.lost.Load(), st.dup.Load(),
					st.badStep.Load(), st.caughtUp.Load(), tc.lost, tc.dup, tc.steps, tc.caughtUp)
			}
		})
	}
}

// A small storm against an in-process server: every client resumes, nothing lost or
// repeated.
func TestStormResumesEveryClient(t *testing.T) {
	srv := web.New(web.Options{})
	ts := httptest.NewServer(srv)
	defer func() {
		srv.Close()
		ts.Close()
	}()
	var out bytes.Buffer
	c := &config{sessions: 8, path: "/play/ricart-agrawala?n=3", every: 200 * time.Millisecond, nodes: 3,
		warmup: 1500 * time.Millisecond, after: time.Second, conc: 4, out: &out}
	if err := storm(context.Background(), c, &server{base: ts.URL, pid: os.Getpid()}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "8 of 8 resumed, 0 failed") || !strings.Contains(out.String(), "0 events lost, 0 duplicated, 0 step jumps") {
		t.Fatalf("report:\n%s", out.String())
	}
}

func TestLoopbackOnly(t *testing.T) {
	c := &config{url: "http://192.0.2.1:8080", pid: 1}
	if _, err := startServer(context.Background(), c, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("a remote server was accepted: %v", err)
	}
}
