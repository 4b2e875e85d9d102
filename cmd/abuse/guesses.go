package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/runtime/lecture"
)

func init() {
	attacks["guesses"] = guessesAttack
	attacks["answers"] = answersAttack
}

// guessesAttack: one address guesses join codes (random codes of the code alphabet)
// until the server first refuses one, then asks for the real code; a second address
// asks for the real code too (unlimited, about 1500 guesses were answered before
// any 429).
func guessesAttack(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("guesses", flag.ContinueOnError)
	most := fs.Int("n", 5000, "guesses at most")
	if err := fs.Parse(args); err != nil {
		return err
	}
	t, err := startTarget()
	if err != nil {
		return err
	}
	defer t.close()
	presenter, code, err := t.lecture("192.0.2.10", "/play/ricart-agrawala?n=3")
	if err != nil {
		return err
	}
	defer presenter.Close()
	drain(presenter)
	get := func(addr, path string) (int, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, t.base+path, nil)
		req.Header.Set("X-Forwarded-For", addr)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	counts := map[int]int{}
	answered := 0
	start := time.Now()
	for k := 0; k < *most; k++ {
		guess := make([]byte, lecture.CodeLen)
		for i := range guess {
			guess[i] = lecture.CodeAlphabet[rand.IntN(len(lecture.CodeAlphabet))]
		}
		status, err := get("198.51.100.7", "/l/"+string(guess))
		if err != nil {
			return err
		}
		counts[status]++
		if status == http.StatusTooManyRequests {
			break
		}
		answered++
	}
	fmt.Printf("guesses: one address had %d guesses answered before the first refusal, in %v: %v\n", answered, time.Since(start).Round(time.Millisecond), counts)
	own, err := get("198.51.100.7", "/l/"+code)
	if err != nil {
		return err
	}
	other, err := get("203.0.113.5", "/l/"+code)
	if err != nil {
		return err
	}
	fmt.Printf("guesses: the right code from the guessing address: %d; from a second address: %d\n", own, other)
	return nil
}

// answersAttack: a presenter opens a question; one address opens N follower sockets,
// each without a cookie (a new follower id every time), and answers on each; then a
// second address answers (unbounded, 300 sockets cast 300 answers).
func answersAttack(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("answers", flag.ContinueOnError)
	n := fs.Int("n", 2500, "follower sockets (each a new follower) from the attacking address (past the default share, 2,000)")
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
	for _, f := range []string{`{"type":"act","do":"request","node":0}`, `{"type":"act","do":"request","node":2}`,
		`{"type":"lecture","op":"questions"}`, `{"type":"lecture","op":"ask","question":0}`} {
		if err := presenter.WriteMessage(websocket.TextMessage, []byte(f)); err != nil {
			return err
		}
	}
	q, err := openQuestion(presenter)
	if err != nil {
		return err
	}
	id := q.ID
	drain(presenter)
	answer := func(addr string) string {
		conn, err := t.dial(addr, "/ws/lecture/"+code)
		if err != nil {
			return "handshake refused"
		}
		defer conn.Close()
		if typ, why := firstFrame(conn); typ != "hello" {
			return typ + " " + why
		}
		msg := fmt.Sprintf(`{"type":"lecture","op":"answer","question":%d,"choice":0}`, id)
		if err := conn.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
			return "closed"
		}
		for {
			_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			_, b, err := conn.ReadMessage()
			if err != nil {
				return "closed"
			}
			var f struct{ Type, Code string }
			_ = json.Unmarshal(b, &f)
			switch f.Type {
			case "answered":
				return "answered"
			case "error":
				return "error " + f.Code
			}
		}
	}
	counts := map[string]int{}
	start := time.Now()
	for k := 0; k < *n && ctx.Err() == nil; k++ {
		counts[answer("198.51.100.7")]++
	}
	fmt.Printf("answers: %d sockets from one address, each a new follower, in %v: %v\n", *n, time.Since(start).Round(time.Millisecond), counts)
	fmt.Printf("answers: a second address: %s\n", answer("203.0.113.5"))
	return nil
}
