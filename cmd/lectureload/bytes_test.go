package main

import (
	"testing"

	"github.com/teach-dist/playground/runtime/protocol"
)

func TestWSHeaderSizes(t *testing.T) {
	for _, tt := range []struct{ payload, header int }{{0, 2}, {125, 2}, {126, 4}, {65535, 4}, {65536, 10}} {
		if got := wsHeader(tt.payload); got != tt.header {
			t.Errorf("wsHeader(%d) = %d, want %d", tt.payload, got, tt.header)
		}
	}
}

// A compact follower that does not expand still reads each frame's number and tells
// events frames from the others, for the counts; one that expands reads the frame.
func TestCompactFramesAreCountedByType(t *testing.T) {
	light := &follower{proto: 2}
	for _, tt := range []struct {
		frame string
		lseq  int64
		typ   string
	}{
		{`[12,[[0,[-3]],[[2,[1,3]]]]]`, 12, "events"},
		{`[13,{"s":4},[[0,[-3]],[]]]`, 13, "events"},
		{`[14,{"type":"question","id":1}]`, 14, "other"},
		{`[15,{"type":"table","strings":[],"payload":[]}]`, 15, "other"},
	} {
		b, ok := light.protocol1([]byte(tt.frame))
		if !ok {
			t.Fatalf("%s: not read", tt.frame)
		}
		if n, _ := protocol.StampOf(b); int64(n) != tt.lseq {
			t.Errorf("%s: lseq %d, want %d", tt.frame, n, tt.lseq)
		}
		light.tally([]byte(tt.frame), b)
	}
	if light.eventsN != 2 || light.otherN != 2 || light.bad != 0 {
		t.Errorf("counted %d events frames and %d others (%d unreadable), want 2 and 2", light.eventsN, light.otherN, light.bad)
	}
	// An expanding follower refuses a frame that does not fit its view.
	full := &follower{proto: 2, x: protocol.NewExpander()}
	if _, ok := full.protocol1([]byte(`[3,[[0],[]]]`)); ok || full.bad != 1 {
		t.Errorf("a delivery of a message not in flight was read (bad %d)", full.bad)
	}
}

func TestNodesOfTheRunPath(t *testing.T) {
	for _, tt := range []struct {
		path string
		n    int
	}{{"/play/ricart-agrawala?n=8", 8}, {"/play/token-ring", 5}, {"/play/x?n=zero", 5}} {
		if got := nodes(tt.path); got != tt.n {
			t.Errorf("nodes(%q) = %d, want %d", tt.path, got, tt.n)
		}
	}
}
