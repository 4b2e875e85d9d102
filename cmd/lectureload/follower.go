package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/runtime/protocol"
)

// A follower of the tool: one WebSocket that reads every frame, checks the numbering
// and times the events frames.

// head is what a follower reads of each frame (docs/protocol.md): its type and, for an
// events frame, the step it leads to. Decoding only these fields keeps the tool's own
// work small beside the server's; the stamp (lseq) is read by protocol.StampOf.
type head struct {
	Type string `json:"type"`
	Step int64  `json:"step"`
}

type follower struct {
	proto       int
	x           *protocol.Expander // of a compact follower
	wire        atomic.Int64
	seen        atomic.Int64 // f.last, for the end of the run
	timed       bool         // reads every frame whole: its latencies count
	eventsBytes int64
	eventsN     int
	otherBytes  int64
	otherN      int
	bad         int
	conn        *websocket.Conn // a follower read through gorilla, or
	raw         *rawSock        // an untimed one read by the sweeper (rawfollower.go)
	ended       atomic.Bool     // its connection ended: the server let it go, or it broke
	latencies   []time.Duration
	frames      int
	gaps        int
	repeats     int
	last        int64
	first       int64 // the number of the catch-up frames, which all carry it
	step0       int64
	err         error
}

// join opens f's WebSocket to path on base. A timed follower, and any with pace 0,
// reads through gorilla on a goroutine of its own (read); the others are read by the
// sweeper once per pace, outside the network poller (rawfollower.go).
func (f *follower) join(base, path string, pace time.Duration) error {
	if f.timed || pace <= 0 {
		conn, err := dial(base, path, &f.wire)
		f.conn = conn
		return err
	}
	raw, err := dialRaw(base, path, &f.wire)
	f.raw = raw
	return err
}

// close closes a follower read through gorilla (the sweeper closes the others).
func (f *follower) close() {
	if f.conn != nil {
		_ = f.conn.Close()
	}
}

// dial opens a WebSocket to path; count counts the bytes read.
func dial(base, path string, count *atomic.Int64) (*websocket.Conn, error) {
	d := *websocket.DefaultDialer
	d.HandshakeTimeout = 30 * time.Second
	d.NetDialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &countingConn{Conn: c, n: count}, nil
	}
	conn, _, err := d.Dial("ws"+strings.TrimPrefix(base, "http")+path, http.Header{"Origin": {base}})
	return conn, err
}

// read takes every frame until the connection closes (follower.frame); a timed
// follower hands each events frame's step to stepped, with the wall clock (UnixNano)
// at which it was read.
func (f *follower) read(stepped func(step, now int64)) {
	var buf bytes.Buffer // reused: the tool's own garbage would show up as latency
	for {
		_, r, err := f.conn.NextReader()
		if err == nil {
			buf.Reset()
			_, err = buf.ReadFrom(r)
		}
		now := time.Now().UnixNano()
		if err != nil {
			f.end(err)
			return
		}
		f.frame(buf.Bytes(), now, stepped)
	}
}

// frame checks one frame's numbering (every follower) and counts its bytes; a timed
// follower hands an events frame's step to stepped with now, when it was read.
func (f *follower) frame(raw []byte, now int64, stepped func(step, now int64)) {
	b, ok := f.protocol1(raw)
	if !ok {
		return
	}
	stamp, ok := protocol.StampOf(b)
	if !ok {
		return
	}
	seq := int64(stamp)
	if f.last == 0 || seq == f.first && f.last == f.first {
		// The catch-up on joining is not a step's: leave it out of the bytes.
		f.wire.Add(-int64(len(raw) + wsHeader(len(raw))))
	} else {
		f.tally(raw, b)
	}
	f.frames++
	switch {
	case f.last == 0:
		f.first = seq
	case seq == f.last+1, seq == f.first && f.last == f.first:
		// the next frame, or one more of the catch-up
	case seq <= f.last:
		f.repeats++
	default:
		f.gaps++
	}
	f.last = max(f.last, seq)
	f.seen.Store(f.last)
	if !f.timed {
		return // its frames carry no step to time (protocol1): spare the tool a decode
	}
	var h head
	if json.Unmarshal(b, &h) == nil && h.Type == "events" {
		stepped(h.Step, now)
	}
}

// readTimed reads as read does, timing each events frame against the command that
// made its step (sent: UnixNano per step after step0).
func (f *follower) readTimed(sent []atomic.Int64) {
	f.read(func(step, now int64) {
		if step-f.step0 > 0 && step-f.step0 < int64(len(sent)) {
			if t := sent[step-f.step0].Load(); t > 0 {
				f.latencies = append(f.latencies, time.Duration(now-t))
			}
		}
	})
}
