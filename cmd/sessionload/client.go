package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/runtime/protocol"
)

// A client is one student: a browser with its cookie jar that opened one playground
// page and follows its run over the page's WebSocket, as static/app.js does. It checks
// the stream as it goes: every trace event's seq is the one after the last, every
// batch's step is the last step or the next, across reconnections (a reconnection
// resumes from the snapshot, whose recent events cover what the drop cut off).

type client struct {
	base string // http://host:port
	path string // the page
	http *http.Client

	session string
	wsPath  string
	conn    *websocket.Conn
	writeMu sync.Mutex

	check   continuity
	stats   *stats
	started atomic.Bool // the run plays

	clock clock // the latest virtual time seen, and when (the pace of the run)
	ended error // why follow returned
}

// clock is a virtual time and the wall-clock time it was seen at.
type clock struct {
	mu   sync.Mutex
	t    int
	seen time.Time
}

func (k *clock) set(t int) {
	k.mu.Lock()
	k.t, k.seen = t, time.Now()
	k.mu.Unlock()
}

func (k *clock) get() (int, time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.t, k.seen
}

// stats are shared by every client.
type stats struct {
	frames, events, refused, errors atomic.Int64
	lost, dup, badStep              atomic.Int64
	resumed, failed                 atomic.Int64
	// Reconnections whose snapshot was ahead of the last event seen: the events the
	// drop cut off came from the snapshot's recent events (how many, at most).
	caughtUp, caughtUpMax atomic.Int64
}

var (
	sessionAttr = regexp.MustCompile(`data-session="([^"]+)"`)
	wsAttr      = regexp.MustCompile(`data-ws="([^"]+)"`)
)

func newClient(base, path string, st *stats, tr http.RoundTripper) *client {
	jar, _ := cookiejar.New(nil)
	return &client{base: base, path: path, stats: st, http: &http.Client{Jar: jar, Transport: tr, Timeout: 30 * time.Second}}
}

// open loads the page, which starts the session (or resumes this browser's).
func (c *client) open(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+c.path, nil)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", c.path, resp.Status)
	}
	m := sessionAttr.FindSubmatch(body)
	if m == nil {
		return fmt.Errorf("GET %s: no session in the page", c.path)
	}
	c.session = string(m[1])
	c.wsPath = "/ws/" + c.session
	if w := wsAttr.FindSubmatch(body); w != nil {
		c.wsPath = string(w[1])
	}
	return nil
}

// connect opens the socket and takes hello and snapshot; the snapshot is checked
// against what this client had before (a reconnection) and becomes the new base.
func (c *client) connect(ctx context.Context) error {
	d := websocket.Dialer{HandshakeTimeout: 30 * time.Second, ReadBufferSize: 4096, WriteBufferSize: 1024}
	conn, _, err := d.DialContext(ctx, "ws"+strings.TrimPrefix(c.base, "http")+c.wsPath, http.Header{"Origin": {c.base}})
	if err != nil {
		return err
	}
	c.conn = conn
	for {
		f, err := c.read()
		if err != nil {
			return err
		}
		if f.Type == "snapshot" {
			c.check.snapshot(f, c.stats)
			c.clock.set(f.T)
			return nil
		}
	}
}

// frame is what the client reads of a server frame.
type frame struct {
	Type    string `json:"type"`
	Code    string `json:"code"`
	Error   string `json:"error"`
	Step    int    `json:"step"`
	T       int    `json:"t"`
	Seq     int64  `json:"seq"`
	Playing bool   `json:"playing"`
	Batches []struct {
		Step   int `json:"step"`
		Events []struct {
			Seq int64 `json:"seq"`
		} `json:"events"`
	} `json:"batches"`
	Recent []struct {
		Seq int64 `json:"seq"`
	} `json:"recent"`
}

func (c *client) read() (frame, error) {
	_, b, err := c.conn.ReadMessage()
	if err != nil {
		return frame{}, err
	}
	var f frame
	if err := json.Unmarshal(b, &f); err != nil {
		return frame{}, fmt.Errorf("frame is not JSON: %.80s", b)
	}
	c.stats.frames.Add(1)
	return f, nil
}

func (c *client) send(s string) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_ = c.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	return c.conn.WriteMessage(websocket.TextMessage, []byte(s))
}

// follow reads frames until the connection ends, checking each; c.ended says why it
// ended.
func (c *client) follow() error {
	for {
		f, err := c.read()
		if err != nil {
			c.ended = err
			return err
		}
		switch f.Type {
		case "events":
			for _, b := range f.Batches {
				c.stats.events.Add(int64(len(b.Events)))
			}
			c.check.events(f, c.stats)
			c.clock.set(f.T)
		case "state":
			c.clock.set(f.T)
		case "snapshot":
			c.check.snapshot(f, c.stats)
			c.clock.set(f.T)
		case "error":
			if f.Code == protocol.CodeRefused {
				c.stats.refused.Add(1) // the workload asked for something that does not apply now
			} else {
				c.stats.errors.Add(1)
			}
		}
	}
}

// workload plays the run and, every every, asks the next process to enter the CS:
// a student clicking along. It returns when ctx ends or the socket fails.
func (c *client) workload(ctx context.Context, every time.Duration, nodes int, offset time.Duration) {
	if c.send(`{"type":"play"}`) != nil {
		return
	}
	c.started.Store(true)
	if every <= 0 || nodes <= 0 {
		return
	}
	select {
	case <-time.After(offset): // spread the clients' clicks over the interval
	case <-ctx.Done():
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for k := 0; ; k++ {
		if c.send(`{"type":"act","do":"request","node":`+strconv.Itoa(k%nodes)+`}`) != nil {
			return
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
}

// drop cuts the connection without a close frame, as a lost network does.
func (c *client) drop() {
	if c.conn != nil {
		_ = c.conn.UnderlyingConn().Close()
	}
}

// continuity follows the seqs and steps of one client's stream.
type continuity struct {
	known    bool  // a snapshot has been taken
	lastSeq  int64 // the last trace event accounted for
	lastStep int
}

// snapshot takes a (re)connection's snapshot: the run as of its seq. On a
// reconnection the events between the last one seen and the snapshot's must all be in
// its recent events, without a hole; the stream goes on after the snapshot's seq.
func (k *continuity) snapshot(f frame, st *stats) {
	if k.known && f.Seq > k.lastSeq {
		next, lost := k.lastSeq+1, int64(0)
		for _, e := range f.Recent {
			if e.Seq < next {
				continue
			}
			lost += e.Seq - next // a hole: older than the snapshot keeps
			next = e.Seq + 1
		}
		if next <= f.Seq {
			lost += f.Seq + 1 - next
		}
		if lost > 0 {
			st.lost.Add(lost)
		} else {
			st.caughtUp.Add(1)
			gap := f.Seq - k.lastSeq
			for {
				m := st.caughtUpMax.Load()
				if gap <= m || st.caughtUpMax.CompareAndSwap(m, gap) {
					break
				}
			}
		}
	}
	if k.known && f.Seq < k.lastSeq {
		st.dup.Add(k.lastSeq - f.Seq) // the run went back: it would replay events already seen
	}
	k.known, k.lastSeq, k.lastStep = true, f.Seq, f.Step
}

// events checks one events frame: each event is the next seq, each batch the same
// step or the next.
func (k *continuity) events(f frame, st *stats) {
	for _, b := range f.Batches {
		if b.Step != k.lastStep && b.Step != k.lastStep+1 {
			st.badStep.Add(1)
		}
		k.lastStep = b.Step
		for _, e := range b.Events {
			switch {
			case e.Seq <= k.lastSeq:
				st.dup.Add(1)
			case e.Seq > k.lastSeq+1:
				st.lost.Add(e.Seq - k.lastSeq - 1)
				k.lastSeq = e.Seq
			default:
				k.lastSeq = e.Seq
			}
		}
	}
}
