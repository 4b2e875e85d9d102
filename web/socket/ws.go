// Package socket is the WebSocket endpoint of a live session (/ws/{id},
// docs/protocol.md): the connection's writer (client.go), its read loop and limits, and the
// decoding of the commands a page sends. Lecture sockets (web/lecturehttp) are built
// from the same pieces.
package socket

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/runtime/protocol"
	"github.com/teach-dist/playground/runtime/session"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/scenarios"
	"github.com/teach-dist/playground/web/ratelimit"
	"github.com/teach-dist/playground/web/runs"
)

// sameOrigin accepts a WebSocket handshake only from a page of this very server: the
// Origin header must be present and name this host. Browsers always send it, so a
// missing one is not a browser following our page.
func sameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false
	}
	return strings.EqualFold(u.Host, r.Host)
}

// ServeSession serves /ws/{id}: the socket of a page on its live session.
func (h *Hub) ServeSession(w http.ResponseWriter, r *http.Request) {
	done := h.Track()
	conn, ok := h.Upgrade(w, r)
	if !ok {
		done()
		return // the upgrader has answered (403 for a foreign origin, 400 for a bad handshake)
	}
	sess, ok := h.sessions.Get(chi.URLParam(r, "id"))
	if !ok {
		defer done()
		wait := h.opts.WriteWait
		_ = conn.SetWriteDeadline(time.Now().Add(wait))
		closing := websocket.FormatCloseMessage(websocket.ClosePolicyViolation, protocol.CloseNoSession)
		if h.opts.Ready() {
			// Tell the page why, so it can start a new session.
			_ = conn.WriteMessage(websocket.TextMessage, protocol.ErrorFrame(0, protocol.CodeGone, "this session has ended; reload the page for a new one"))
		} else {
			// Shutting down ended the session: say so, as to every other socket.
			closing = websocket.FormatCloseMessage(websocket.CloseGoingAway, protocol.CloseShuttingDown)
		}
		_ = conn.WriteControl(websocket.CloseMessage, closing, time.Now().Add(wait))
		conn.Close()
		return
	}
	c := h.NewClient(r, conn, h.opts.SendQueue)
	h.Go(c, done, func() { h.serveWS(conn, c, sess) })
}

// Go serves the connection of c on a goroutine of its own, and the handler that calls
// it returns: net/http's per-request state (its buffers, the request, the handler's
// grown stack) is freed instead of being held for hours by a tab left open or a
// follower of a long lecture. done is the handler's Track; a panic in serve closes c.
func (h *Hub) Go(c *Client, done func(), serve func()) {
	go func() {
		defer done()
		defer h.containWS(c)
		serve()
	}()
}

// containWS turns a panic while serving a socket into the close of that socket, as
// the router's recoverer does for a request: the server and the session carry on.
func (h *Hub) containWS(c *Client) {
	if v := recover(); v != nil {
		h.opts.Metrics.Panicked("http")
		h.opts.Logger.Error("a WebSocket handler panicked; that connection closed", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		c.CloseWith(websocket.CloseInternalServerErr, protocol.CloseInternal, false)
	}
}

// serveWS is the life of one session socket: attach, read commands, detach.
func (h *Hub) serveWS(conn *websocket.Conn, c *Client, sess *session.Session) {
	c.Start()
	defer func() {
		sess.Detach(c)
		c.Stop()
	}()
	if !h.Attach(c, sess) {
		return
	}
	h.ReadLoop(conn, c, func(data []byte) bool {
		_, ok := RunCommand(c, sess, data)
		return ok
	})
}

// ReadLoop reads text frames with the connection's limits and hands each to handle
// until the connection ends or handle returns false.
//
// A tab left open keeps this goroutine parked in a read for hours, with the stack it
// grew to. Parsing a frame (encoding/json) grows a stack to 8 KiB, and a stack parked
// this deep in the network poller never shrinks below that at a collection (the
// runtime halves only stacks using under a quarter of theirs). So each frame is
// handled on a goroutine of its own, waited for: frames stay in order, and the reader
// keeps the few KiB a read needs (docs/benchmarks.md, "Resident memory per idle session").
func (h *Hub) ReadLoop(conn *websocket.Conn, c *Client, handle func([]byte) bool) {
	conn.SetReadLimit(h.opts.ReadLimit)
	alive := func() { _ = conn.SetReadDeadline(time.Now().Add(h.opts.PongWait)) }
	alive()
	conn.SetPongHandler(func(string) error { alive(); return nil })
	conn.SetCloseHandler(c.peerClosing(conn.CloseHandler()))
	for {
		kind, data, err := conn.ReadMessage()
		if err != nil {
			return
		}
		alive()
		if c.limited() { // over its rate: dropped unread (a rate-limited error, or 1008 on abuse)
			continue
		}
		if kind != websocket.TextMessage {
			c.Send(protocol.ErrorFrame(0, protocol.CodeBadFrame, "frames are JSON text; binary frames are not part of the protocol"))
			continue
		}
		if !onOwnStack(handle, data) {
			return
		}
	}
}

// onOwnStack runs handle(data) on a new goroutine and waits for it. A panic there is
// raised again here, with the stack it came from, so the socket's own containment
// (containWS, net/http's) still applies.
func onOwnStack(handle func([]byte) bool, data []byte) bool {
	type result struct {
		ok       bool
		panicked any
		stack    []byte
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				done <- result{panicked: v, stack: debug.Stack()}
			}
		}()
		done <- result{ok: handle(data)}
	}()
	r := <-done
	if r.panicked != nil {
		panic(fmt.Sprintf("%v [in a frame handler: %s]", r.panicked, r.stack))
	}
	return r.ok
}

// Attach subscribes c to sess, or tells it why not and closes it (a viewer's or the
// presenter's socket). Kept out of serveWS, whose frame stays under the reader for
// the connection's whole life.
func (h *Hub) Attach(c *Client, sess *session.Session) bool {
	err := sess.Attach(c)
	if err == nil {
		return true
	}
	code := protocol.CodeGone
	if !errors.Is(err, session.ErrClosed) {
		code = protocol.CodeBusy
		h.opts.Metrics.Refused("viewers")
	}
	c.Send(protocol.ErrorFrame(0, code, err.Error()))
	c.CloseWith(websocket.CloseTryAgainLater, code, true)
	return false
}

// RunCommand parses one client frame and hands it to the session; errors go back to
// the client as error frames. It reports false once the session has ended.
func RunCommand(c *Client, sess *session.Session, data []byte) (session.Command, bool) {
	cmd, ferr := c.ParseFrame(data)
	if ferr != nil {
		c.Send(ferr.Frame())
		return cmd, true
	}
	if err := sess.Do(c, cmd); err != nil {
		c.Send(protocol.ErrorFrame(cmd.Ref, protocol.CodeGone, "this session has ended; reload the page for a new one"))
		return cmd, false
	}
	return cmd, true
}

// FrameError is a frame the server cannot act on.
type FrameError struct {
	ref       int64
	code, msg string
	line      int // of the scenario's source, when the error is in it
}

// Frame is the error frame that tells the client.
func (e *FrameError) Frame() []byte { return protocol.ErrorFrameAt(e.ref, e.code, e.msg, e.line) }

// simpleKind is the command of a frame that carries nothing but its type.
func simpleKind(typ string) (session.Kind, bool) {
	switch typ {
	case "play":
		return session.Play, true
	case "pause":
		return session.Pause, true
	case "step":
		return session.Step, true
	case "back":
		return session.Back, true
	}
	return 0, false
}

// ParseFrame decodes one client frame strictly into a session command. An act frame's
// action decodes through the same code as a scenario event (sim.ActionJSON).
func ParseFrame(data []byte) (session.Command, *FrameError) { return ParseFrameCharged(data, nil) }

// ParseFrame is ParseFrame (the function) with the Starlark loads a reset frame
// causes charged to the connection's client (ratelimit.Limits.Loads).
func (c *Client) ParseFrame(data []byte) (session.Command, *FrameError) {
	return ParseFrameCharged(data, c.limit.Load)
}

// ParseFrameCharged is ParseFrame that asks charge before loading a reset frame's
// source not yet cached (scenarios.LoadCharge): a refused load is a rate-limited
// error frame, and the run keeps its rules.
func ParseFrameCharged(data []byte, charge scenarios.LoadCharge) (session.Command, *FrameError) {
	var f protocol.Command
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		if fe := (*sim.FieldError)(nil); errors.As(err, &fe) { // a field's own decoder (delay)
			return session.Command{}, &FrameError{ref: f.Ref, code: protocol.CodeBadField, msg: fe.Error()}
		}
		return session.Command{}, &FrameError{code: protocol.CodeBadFrame, msg: "not a protocol frame: " + err.Error()}
	}
	if dec.More() {
		return session.Command{}, &FrameError{code: protocol.CodeBadFrame, msg: "one JSON object per frame"}
	}
	if k := scenarios.DuplicateKey(data); k != "" {
		return session.Command{}, &FrameError{ref: f.Ref, code: protocol.CodeBadField, msg: k + ": is given twice (each key once)"}
	}
	bad := func(format string, args ...any) (session.Command, *FrameError) {
		return session.Command{}, &FrameError{ref: f.Ref, code: protocol.CodeBadField, msg: fmt.Sprintf(format, args...)}
	}
	cmd := session.Command{Ref: f.Ref}
	if k, ok := simpleKind(f.Type); ok {
		cmd.Kind = k
		return cmd, nil
	}
	switch f.Type {
	case "":
		return session.Command{}, &FrameError{ref: f.Ref, code: protocol.CodeBadFrame, msg: "type: missing"}
	case "seek":
		if f.Step == nil {
			return bad("step: seek needs the step to show")
		}
		cmd.Kind, cmd.Step = session.Seek, *f.Step
	case "speed":
		if f.Speed == nil {
			return bad("speed: missing (%v to %v)", session.MinSpeed, session.MaxSpeed)
		}
		cmd.Kind, cmd.Speed = session.Speed, *f.Speed
	case "reset":
		cmd.Kind = session.Reset
		if f.Curated != "" {
			// A curated scenario by name: the run becomes it, name and captions included
			// (a presenter moving the lecture to another scenario).
			if len(f.Scenario) > 0 {
				return bad("curated: give a scenario or a curated name, not both")
			}
			sc, ok := scenarios.Lookup(f.Curated)
			if !ok {
				return session.Command{}, &FrameError{ref: f.Ref, code: protocol.CodeBadScenario, msg: fmt.Sprintf("curated: no scenario named %q", f.Curated)}
			}
			setup, err := runs.SetupOf(sc, f.Curated)
			if err != nil {
				return session.Command{}, &FrameError{ref: f.Ref, code: protocol.CodeBadScenario, msg: err.Error()}
			}
			cmd.Setup = &setup
		} else if len(f.Scenario) > 0 && string(f.Scenario) != "null" {
			sc, err := scenarios.ParseCharged(f.Scenario, charge)
			if le := (*ratelimit.LoadError)(nil); errors.As(err, &le) {
				return session.Command{}, &FrameError{ref: f.Ref, code: protocol.CodeRateLimited, msg: le.Error()}
			}
			if err != nil {
				return session.Command{}, &FrameError{ref: f.Ref, code: protocol.CodeBadScenario, msg: err.Error(), line: scenarios.SourceLine(err)}
			}
			setup, err := runs.SetupOf(sc, "")
			if err != nil {
				return session.Command{}, &FrameError{ref: f.Ref, code: protocol.CodeBadScenario, msg: err.Error(), line: scenarios.SourceLine(err)}
			}
			cmd.Setup = &setup
		}
	case "act":
		if f.At != nil {
			return bad("at: an act happens now (at belongs to scenario events)")
		}
		if _, err := f.ActionJSON.Kind(); err != nil {
			return bad("%v", err)
		}
		cmd.Kind, cmd.Act = session.Act, f.ActionJSON
	default:
		return session.Command{}, &FrameError{ref: f.Ref, code: protocol.CodeUnknownType,
			msg: fmt.Sprintf("type: %q is unknown (allowed: play, pause, step, back, seek, speed, reset, act)", f.Type)}
	}
	return cmd, nil
}
