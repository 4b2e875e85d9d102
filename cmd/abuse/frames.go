package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/cmd/internal/browser"
)

// What the attacks send on a socket and read of what comes back (docs/protocol.md).

// send writes frames on conn, in order.
func send(conn *websocket.Conn, frames ...string) error {
	for _, f := range frames {
		if err := conn.WriteMessage(websocket.TextMessage, []byte(f)); err != nil {
			return err
		}
	}
	return nil
}

// drain reads and drops what conn receives until it closes (a page that keeps up).
func drain(conn *websocket.Conn) {
	go func() {
		for {
			if _, _, err := conn.ReadMessage(); err != nil {
				return
			}
		}
	}()
}

// frame is what the attacks read of a server frame.
type frame struct {
	Type, Code, Error, Stopped, State string
	Ref                               int64
	ID                                int  // a question's
	Step                              *int // the step a frame shows
}

// readFrame reads conn until a frame of one of types (of any type if none), within d.
func readFrame(conn *websocket.Conn, d time.Duration, types ...string) (frame, error) {
	_ = conn.SetReadDeadline(time.Now().Add(d))
	defer conn.SetReadDeadline(time.Time{})
	for {
		_, b, err := conn.ReadMessage()
		if err != nil {
			return frame{}, err
		}
		var f frame
		_ = json.Unmarshal(b, &f) // a field of another shape is left out, the rest read
		if len(types) == 0 || slices.Contains(types, f.Type) {
			return f, nil
		}
	}
}

// firstFrame reads conn's first frame: hello for a place, error and its code for a
// refusal, closed and why.
func firstFrame(conn *websocket.Conn) (typ, code string) {
	f, err := readFrame(conn, 10*time.Second)
	if err != nil {
		return "closed", err.Error()
	}
	return f.Type, f.Code
}

// ask has the lecture's presenter ask its first question and reads its socket until
// the question is open (or the lecture says it has none to ask).
func ask(presenter *websocket.Conn) (frame, error) {
	if err := send(presenter, `{"type":"lecture","op":"questions"}`, `{"type":"lecture","op":"ask","question":0}`); err != nil {
		return frame{}, err
	}
	for {
		f, err := readFrame(presenter, 10*time.Second, "question", "questions")
		if err != nil {
			return frame{}, fmt.Errorf("waiting for the question: %w", err)
		}
		if f.Type == "question" && f.State == "open" {
			return f, nil
		}
		if f.Type == "questions" && f.Error != "" {
			return frame{}, fmt.Errorf("no questions: %s", f.Error)
		}
	}
}

// twoRequests are a presenter's first moves: two processes ask for the CS, so that the
// run has a question to ask.
var twoRequests = []string{`{"type":"act","do":"request","node":0}`, `{"type":"act","do":"request","node":2}`}

// lectureAsking starts a lecture as addr of a four-process Ricart-Agrawala run in which
// two processes asked for the CS, and asks its first question: the join code and the
// open question's id. The presenter keeps up from then on.
func lectureAsking(t *local, addr string) (string, int, error) {
	presenter, code, err := t.presenter(addr, "/play/ricart-agrawala?n=4")
	if err != nil {
		return "", 0, err
	}
	if err := send(presenter, twoRequests...); err != nil {
		return "", 0, err
	}
	q, err := ask(presenter)
	if err != nil {
		return "", 0, err
	}
	drain(presenter)
	return code, q.ID, nil
}

// answerOn answers question with choice on a follower's socket: what the lecture said
// (answered, error and its code, or closed).
func answerOn(conn *websocket.Conn, question, choice int) string {
	if err := send(conn, fmt.Sprintf(`{"type":"lecture","op":"answer","question":%d,"choice":%d}`, question, choice)); err != nil {
		return "closed"
	}
	f, err := readFrame(conn, 10*time.Second, "answered", "error")
	switch {
	case err != nil:
		return "closed"
	case f.Type == "error":
		return "error " + f.Code
	}
	return f.Type
}

// joined is a new follower socket of the lecture of code, opened as c, that has its
// place (its first frame is hello); or nil and why not: "handshake refused", or the
// first frame's type and code.
func joined(c *browser.Client, code string) (*websocket.Conn, string) {
	conn, err := c.Dial("/ws/lecture/" + code)
	if err != nil {
		return nil, "handshake refused"
	}
	if typ, why := firstFrame(conn); typ != "hello" {
		conn.Close()
		return nil, typ + " " + why
	}
	return conn, ""
}

// answerAs joins the lecture of code as a new follower of c and answers question with
// choice 0: what the lecture said, or why it did not take the follower.
func answerAs(c *browser.Client, code string, question int) string {
	conn, why := joined(c, code)
	if conn == nil {
		return why
	}
	defer conn.Close()
	return answerOn(conn, question, 0)
}

// closeAll closes the sockets an attack kept open (deferred while it appends to them).
func closeAll(conns *[]*websocket.Conn) {
	for _, c := range *conns {
		c.Close()
	}
}

// watch opens path as a new run as c, and the run's socket (unread).
func watch(c *browser.Client, path string) (*websocket.Conn, error) {
	id, err := c.Run(path)
	if err != nil {
		return nil, err
	}
	return c.Dial("/ws/" + id)
}
