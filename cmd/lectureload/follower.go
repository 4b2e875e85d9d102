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
	conn        *websocket.Conn
	latencies   []time.Duration
	frames      int
	gaps        int
	repeats     int
	last        int64
	first       int64 // the number of the catch-up frames, which all carry it
	step0       int64
	err         error
}

// pace is how often f reads its socket: a timed follower at once (its reads are
// timed), the others at most once per pace.
func (f *follower) pace(pace time.Duration) time.Duration {
	if f.timed {
		return 0
	}
	return pace
}

// dial opens a WebSocket to path; count, if not nil, counts the bytes read, and pace
// (> 0) reads them at most once per pace (countingConn).
func dial(base, path string, readBuffer int, count *atomic.Int64, pace time.Duration) (*websocket.Conn, error) {
	d := *websocket.DefaultDialer
	d.HandshakeTimeout = 30 * time.Second
	d.NetDialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil && readBuffer > 0 {
			_ = c.(*net.TCPConn).SetReadBuffer(readBuffer)
		}
		if err == nil && count != nil {
			return &countingConn{Conn: c, n: count, pace: pace}, nil
		}
		return c, err
	}
	conn, _, err := d.Dial("ws"+strings.TrimPrefix(base, "http")+path, http.Header{"Origin": {base}})
	return conn, err
}

// read takes every frame until the connection closes, checking the numbering (every
// follower); a timed follower hands each events frame's step to stepped, with the wall
// clock (UnixNano) at which it was read.
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
			f.err = err
			return
		}
		raw := buf.Bytes()
		b, ok := f.protocol1(raw)
		if !ok {
			continue
		}
		stamp, ok := protocol.StampOf(b)
		if !ok {
			continue
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
			continue // its frames carry no step to time (protocol1): spare the tool a decode
		}
		var h head
		if json.Unmarshal(b, &h) == nil && h.Type == "events" {
			stepped(h.Step, now)
		}
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
