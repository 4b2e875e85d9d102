package main

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/cmd/internal/browser"
	"github.com/teach-dist/playground/runtime/protocol"
)

// presenter is the lecture's presenter: its socket, read on a goroutine of its own from
// the start, the latest step it was shown and the latest number of followers the
// lecture reported.
type presenter struct {
	conn      *websocket.Conn
	code      string // the join code
	step      atomic.Int64
	followers atomic.Int64
	reported  chan struct{} // a report of the followers came: read followers
}

// present starts a lecture of a new run of path on base and follows its presenter.
func present(base, path string) (*presenter, error) {
	conn, code, err := browser.At(base, "127.0.0.1").Lecture(path)
	if err != nil {
		return nil, err
	}
	p := &presenter{conn: conn, code: code, reported: make(chan struct{}, 1)}
	go p.read()
	return p, nil
}

func (p *presenter) read() {
	for {
		_, b, err := p.conn.ReadMessage()
		if err != nil {
			return
		}
		f, err := protocol.Decode(b)
		if err != nil {
			continue // a frame of a newer protocol: not this tool's concern
		}
		switch f := f.(type) {
		case *protocol.PresenterLecture:
			p.followers.Store(int64(f.Followers))
			select {
			case p.reported <- struct{}{}:
			default: // one is waiting to be read: it reads the latest
			}
		case *protocol.Events:
			p.step.Store(int64(f.Step))
		}
	}
}

// send writes one command on the presenter's socket.
func (p *presenter) send(frame string) error {
	_ = p.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return p.conn.WriteMessage(websocket.TextMessage, []byte(frame))
}

// awaitFollowers waits until the lecture reports n followers; past the deadline it
// says how many it last reported.
func (p *presenter) awaitFollowers(n int, deadline <-chan time.Time) error {
	for p.followers.Load() != int64(n) {
		select {
		case <-p.reported:
		case <-deadline:
			return fmt.Errorf("the lecture counts %d of %d followers", p.followers.Load(), n)
		}
	}
	return nil
}
