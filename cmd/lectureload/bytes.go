package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"time"

	"github.com/teach-dist/playground/runtime/protocol"
)

// What a follower's frames cost on the wire, by protocol: protocol 1 (JSON objects,
// docs/protocol.md) or 2 (compact frames, runtime/protocol/compact.go). The tool can
// give half of its followers each, so one run compares them on the same steps.

// countingConn counts the bytes read from a socket: the WebSocket framing included.
type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	k, err := c.Conn.Read(p)
	c.n.Add(int64(k))
	return k, err
}

// wireStats is what the followers of one protocol received.
type wireStats struct {
	followers   int
	socket      int64 // bytes read from their sockets
	eventsBytes int64 // payload bytes of events frames
	eventsN     int
	otherBytes  int64 // payload bytes of every other frame
	otherN      int
	bad         int // frames that could not be read
}

func (w *wireStats) add(f *follower) {
	w.followers++
	w.socket += f.wire.Load()
	w.eventsBytes += f.eventsBytes
	w.eventsN += f.eventsN
	w.otherBytes += f.otherBytes
	w.otherN += f.otherN
	w.bad += f.bad
}

// perStep is bytes per follower per step.
func (w *wireStats) perStep(b int64, steps int64) float64 {
	if w.followers == 0 || steps <= 0 {
		return 0
	}
	return float64(b) / float64(w.followers) / float64(steps)
}

func reportWire(out io.Writer, stats map[int]*wireStats, steps int64) {
	fmt.Fprintf(out, "bytes per follower per step over %d steps (socket: what the follower's socket read, WebSocket framing included):\n", steps)
	for _, p := range []int{1, 2} {
		w := stats[p]
		if w == nil || w.followers == 0 {
			continue
		}
		fmt.Fprintf(out, "  protocol %d (%d followers): socket %.1f B; events frames %.1f B (%d frames each); other frames %.1f B (%d each); unreadable %d\n",
			p, w.followers, w.perStep(w.socket, steps), w.perStep(w.eventsBytes, steps), w.eventsN/w.followers,
			w.perStep(w.otherBytes, steps), w.otherN/w.followers, w.bad)
	}
	if a, b := stats[1], stats[2]; a != nil && b != nil && a.followers > 0 && b.followers > 0 {
		r := a.perStep(a.socket, steps) / b.perStep(b.socket, steps)
		fmt.Fprintf(out, "compact frames: %.1fx fewer bytes per follower per step (1/10 of protocol 1: %s)\n", r, verdict(r >= 10))
	}
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

// protocol1 turns what a follower read into the protocol-1 frame it stands for: a
// compact frame through the follower's expander, a protocol-1 frame as it is.
func (f *follower) protocol1(b []byte) ([]byte, bool) {
	if len(b) == 0 || b[0] != '[' {
		return b, true
	}
	if f.x == nil {
		// Not expanded: the number, and whether it is an events frame, for the counts.
		n, ok := protocol.StampOf(b)
		if !ok {
			f.bad++
			return nil, false
		}
		rest := b[bytes.IndexByte(b, ',')+1:]
		typ := "events"
		if bytes.HasPrefix(rest, []byte(`{"type":"`)) && !bytes.HasPrefix(rest, []byte(`{"type":"events"`)) {
			typ = "other"
		}
		return protocol.Stamp(n, []byte(`{"type":"`+typ+`"}`)), true
	}
	n, v1, err := f.x.Expand(b)
	if err != nil {
		f.bad++
		return nil, false
	}
	if v1 == nil { // the checkpoint's table: a numbered frame with nothing for the page
		v1 = protocol.Stamp(n, []byte("{}"))
	}
	return v1, true
}

// tally counts a frame's payload by its type.
func (f *follower) tally(raw, v1 []byte) {
	if bytes.Contains(v1[:min(len(v1), 40)], []byte(`"type":"events"`)) {
		f.eventsBytes += int64(len(raw))
		f.eventsN++
		return
	}
	f.otherBytes += int64(len(raw))
	f.otherN++
}

// caughtUp waits (at most limit) until every follower has read the last frame any
// follower of its protocol read: the counts then cover the same steps for all of them.
func caughtUp(fl []*follower, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		top := map[int]int64{}
		for _, f := range fl {
			top[f.proto] = max(top[f.proto], f.seen.Load())
		}
		behind := false
		for _, f := range fl {
			behind = behind || f.seen.Load() < top[f.proto]
		}
		if !behind {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// sampleEvery is how far apart the compact followers that expand every frame are: all
// of them up to 200 followers, then about a hundred (two in every sampleEvery).
func sampleEvery(followers int) int { return max(2, followers/50) }

// wsHeader is the size of a server frame's WebSocket header for a payload of n bytes.
func wsHeader(n int) int {
	switch {
	case n < 126:
		return 2
	case n < 1<<16:
		return 4
	}
	return 10
}
