package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// A follower that had not read the last frame of its protocol counts as behind, and
// the verdict says loss; gaps and repeats add up over followers; the targets are the
// flags'.
func TestReportCountsFollowersBehindAsLoss(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	tests := []struct {
		name     string
		fl       []*follower
		behind   int
		verdicts string
	}{
		{"every follower at the last frame", []*follower{
			{proto: 2, timed: true, last: 12, latencies: []time.Duration{ms(10), ms(20)}},
			{proto: 2, timed: true, last: 12, latencies: []time.Duration{ms(30), ms(40)}},
			{proto: 1, timed: true, last: 40, latencies: []time.Duration{ms(50), ms(60)}},
		}, 0, "p99 <= 100.0ms: met; CPU <= 1.5 cores: met; no loss, no repeat: met"},
		{"one compact follower two frames short", []*follower{
			{proto: 2, timed: true, last: 12, latencies: []time.Duration{ms(10), ms(20)}},
			{proto: 2, timed: true, last: 10, latencies: []time.Duration{ms(30), ms(40)}},
			{proto: 1, timed: true, last: 40, latencies: []time.Duration{ms(50), ms(60)}},
		}, 1, "no loss, no repeat: NOT met"},
		{"a repeat", []*follower{
			{proto: 2, timed: true, last: 12, repeats: 1, latencies: []time.Duration{ms(10), ms(20)}},
			{proto: 2, timed: true, last: 12, latencies: []time.Duration{ms(30), ms(40)}},
			{proto: 2, timed: true, last: 12, latencies: []time.Duration{ms(50), ms(60)}},
		}, 0, "no loss, no repeat: NOT met"},
		{"late", []*follower{
			{proto: 2, timed: true, last: 12, latencies: []time.Duration{ms(10), ms(200)}},
			{proto: 2, timed: true, last: 12, latencies: []time.Duration{ms(30), ms(400)}},
			{proto: 2, timed: true, last: 12, latencies: []time.Duration{ms(50), ms(600)}},
		}, 0, "p99 <= 100.0ms: NOT met"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := result{total: 2, wall: time.Second, serverCPU: 0.5, fl: tt.fl}
			if got := r.tally().behind; got != tt.behind {
				t.Fatalf("behind %d, want %d", got, tt.behind)
			}
			var out bytes.Buffer
			r.print(&out, config{wantP99: ms(100), wantCores: 1.5})
			if !strings.Contains(out.String(), tt.verdicts) {
				t.Fatalf("the report does not say %q:\n%s", tt.verdicts, out.String())
			}
		})
	}
}
