package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"time"

	"github.com/gorilla/websocket"
)

func init() { attacks["forks"] = forksAttack }

// forksAttack: a follower forks the lecture before a question, the presenter opens a
// question, and the follower drives its fork ahead (steps, then a seek far past the
// presenter) to see the answer; it then asks for a new fork while the question is
// open (a fork stepped ahead must not show the answer before the
// presenter reveals it).
func forksAttack(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("forks", flag.ContinueOnError)
	steps := fs.Int("steps", 200, "step commands the fork sends while the question is open")
	if err := fs.Parse(args); err != nil {
		return err
	}
	t, err := startTarget()
	if err != nil {
		return err
	}
	defer t.close()
	presenter, code, err := t.lecture("192.0.2.10", "/play/ricart-agrawala?n=4")
	if err != nil {
		return err
	}
	defer presenter.Close()
	send := func(c *websocket.Conn, f string) error { return c.WriteMessage(websocket.TextMessage, []byte(f)) }
	for _, f := range []string{`{"type":"act","do":"request","node":0}`, `{"type":"act","do":"request","node":2}`,
		`{"type":"step"}`, `{"type":"step"}`, `{"type":"step"}`} {
		if err := send(presenter, f); err != nil {
			return err
		}
	}

	// The follower's fork, made before the question: a session of its own.
	const student = "198.51.100.7"
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: time.Minute}
	get := func(path string) (int, []byte, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, t.base+path, nil)
		req.Header.Set("X-Forwarded-For", student)
		resp, err := browser.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, b, err
	}
	status, page, err := get("/l/" + code + "/fork")
	if err != nil {
		return err
	}
	m := sessionRE.FindSubmatch(page)
	if status != http.StatusOK || m == nil {
		return fmt.Errorf("fork before the question: %d, no session", status)
	}
	fork, err := t.dial(student, "/ws/"+string(m[1]))
	if err != nil {
		return err
	}
	defer fork.Close()

	// The presenter opens a question.
	for _, f := range []string{`{"type":"lecture","op":"questions"}`, `{"type":"lecture","op":"ask","question":0}`} {
		if err := send(presenter, f); err != nil {
			return err
		}
	}
	q, err := openQuestion(presenter)
	if err != nil {
		return err
	}
	at := q.Step
	drain(presenter)

	// The fork steps and seeks ahead while the question is open; then what it was
	// sent is tallied, until it has been quiet for a second.
	for k := 0; k < *steps && ctx.Err() == nil; k++ {
		if err := send(fork, `{"type":"step"}`); err != nil {
			return err
		}
		time.Sleep(30 * time.Millisecond) // within the command rate
	}
	if err := send(fork, `{"type":"seek","step":100000}`); err != nil {
		return err
	}
	counts := map[string]int{}
	furthest := 0
	for {
		_ = fork.SetReadDeadline(time.Now().Add(time.Second))
		_, b, err := fork.ReadMessage()
		if err != nil {
			break
		}
		var f struct {
			Type, Code string
			Step       *int
		}
		_ = json.Unmarshal(b, &f)
		if f.Type == "error" {
			counts["error "+f.Code]++
			continue
		}
		counts[f.Type]++
		if f.Step != nil && (f.Type == "events" || f.Type == "state" || f.Type == "snapshot") {
			furthest = max(furthest, *f.Step)
		}
	}
	fmt.Printf("forks: question open at the presenter's step %d; the fork made before it sent %d steps and a seek to 100000, and was sent %v; the furthest step it showed: %d\n",
		at, *steps, counts, furthest)
	status, _, err = get("/l/" + code + "/fork")
	if err != nil {
		return err
	}
	fmt.Printf("forks: a new fork while the question is open: %d\n", status)
	return nil
}
