package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/cmd/internal/browser"
	"github.com/teach-dist/playground/cmd/internal/natsserver"
	"github.com/teach-dist/playground/runtime/lecture"
	"github.com/teach-dist/playground/runtime/lecture/natsbroker"
	"github.com/teach-dist/playground/web"
)

// The attacks on lectures: their slots, their follower places, their join codes, their
// questions and their forks.

// lectureSlotsAttack: one address opens N playground pages and starts a lecture from
// each (POST /lecture), keeping every presenter's socket open, on a server capped at
// -max lectures; then a second address starts a lecture and asks for its presenter's
// page, socket and snapshot (without the per-address share, 51 /play + POST /lecture
// took every lecture slot).
func lectureSlotsAttack(fs *flag.FlagSet, opts *web.Options) func(context.Context, *local) error {
	starts := fs.Int("starts", 51, "lectures the attacking address starts")
	fs.IntVar(&opts.Lecture.Max, "max", 50, "the server's --max-lectures")
	return func(ctx context.Context, t *local) error {
		attacker := t.client("127.0.0.1")
		codes := map[int]int{}
		var conns []*websocket.Conn
		defer closeAll(&conns)
		start := time.Now()
		for range *starts {
			code, token, err := startLecture(attacker)
			if err != nil {
				return err
			}
			codes[code]++
			if token != "" {
				if c, err := attacker.Socket("/ws/present/" + token); err == nil {
					conns = append(conns, c)
				}
			}
		}
		fmt.Printf("attacker 127.0.0.1: %d lectures asked in %v: status %v, %d presenter sockets open\n",
			*starts, time.Since(start).Round(time.Millisecond), codes, len(conns))
		victim := t.client("127.0.0.2")
		t0 := time.Now()
		code, token, err := startLecture(victim)
		if err != nil {
			return err
		}
		if token == "" {
			return fmt.Errorf("second address 127.0.0.2: POST /lecture %d (%v): no room for its lecture", code, time.Since(t0))
		}
		if code, _, err := victim.Page("/lecture/present/" + token); err != nil || code != http.StatusOK {
			return fmt.Errorf("second address 127.0.0.2: presenter's page %d %v", code, err)
		}
		c, err := victim.Socket("/ws/present/" + token)
		if err != nil {
			return fmt.Errorf("second address 127.0.0.2: presenter's socket: %w", err)
		}
		c.Close()
		fmt.Printf("second address 127.0.0.2: lecture started (303), presenter's page, socket and snapshot in %v\n", time.Since(t0).Round(time.Millisecond))
		ended := 0
		for _, c := range conns {
			_ = c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
			for {
				_, b, err := c.ReadMessage()
				if err != nil {
					break
				}
				if strings.Contains(string(b), "more than its share") {
					ended++
					break
				}
			}
		}
		fmt.Printf("attacker's lectures told they ended for another client: %d\n", ended)
		return nil
	}
}

// startLecture opens a playground page as c (a new run) and starts a lecture from it;
// it returns the status of the page or, once the page is there, of POST /lecture, and
// on its 303 the presenter's token.
func startLecture(c *browser.Client) (int, string, error) {
	c.Fresh()
	code, id, err := c.Page("/play/bully?n=3")
	if err != nil || code != http.StatusOK {
		return code, "", err
	}
	return c.PostLecture(id)
}

// followersAttack: one address opens N follower sockets of one lecture, then a second
// address joins.
func followersAttack(fs *flag.FlagSet, _ *web.Options) func(context.Context, *local) error {
	n := fs.Int("n", 5000, "follower sockets from the attacking address (past the default share, 2,000 of 5,000)")
	return func(ctx context.Context, t *local) error {
		code, err := t.lecture("/play/ricart-agrawala?n=5")
		if err != nil {
			return err
		}
		attacker := t.client("198.51.100.7")
		counts := map[string]int{}
		var conns []*websocket.Conn
		defer closeAll(&conns)
		start := time.Now()
		for k := 0; k < *n && ctx.Err() == nil; k++ {
			conn, err := attacker.Dial("/ws/lecture/" + code)
			if err != nil {
				counts["handshake refused"]++
				continue
			}
			conns = append(conns, conn)
			typ, why := firstFrame(conn)
			if typ == "error" {
				typ += " " + why
			}
			counts[typ]++
			drain(conn)
		}
		took := time.Since(start)
		t0 := time.Now()
		second, err := t.client("203.0.113.5").Dial("/ws/lecture/" + code)
		joined := "no: " + fmt.Sprint(err)
		if err == nil {
			typ, why := firstFrame(second)
			joined = fmt.Sprintf("%s %s in %v", typ, why, time.Since(t0).Round(time.Millisecond))
			second.Close()
		}
		fmt.Printf("followers: %d sockets from one address in %v: %v\n", *n, took.Round(time.Millisecond), counts)
		fmt.Printf("followers: a second address: %s\n", strings.TrimSpace(joined))
		return nil
	}
}

// clusterPlacesAttack: two servers behind one NATS (a real nats-server), a lecture on
// the first; one address opens follower sockets as pages do (compact frames) on the
// second until refused, waits five heartbeats, then on the first until refused, and on
// the second again: the places it got in all.
func clusterPlacesAttack(fs *flag.FlagSet) func(context.Context) error {
	opts := web.Options{}
	fs.IntVar(&opts.Lecture.MaxFollowers, "max-followers", 500, "the lecture's --max-followers (the share is 40 % of it)")
	natsBin := fs.String("nats", "", "the nats-server binary (default: on PATH, /usr/sbin, /usr/bin)")
	return func(ctx context.Context) error {
		nats, err := natsserver.Start(*natsBin)
		if err != nil {
			return err
		}
		defer nats.Stop()
		var nodes []*local
		for range 2 {
			b, err := natsbroker.Connect(natsbroker.Options{URL: nats.URL})
			if err != nil {
				return err
			}
			defer b.Close()
			opts.Broker = b
			t, err := serveLocal(ctx, opts, true)
			if err != nil {
				return err
			}
			defer t.stop()
			nodes = append(nodes, t)
		}
		code, err := nodes[0].lecture("/play/ricart-agrawala?n=4")
		if err != nil {
			return err
		}
		var conns []*websocket.Conn
		defer closeAll(&conns)
		got := make([]int, len(nodes))
		for k, i := range []int{1, 0, 1} {
			if k == 1 {
				time.Sleep(5 * time.Second) // past three heartbeats: an unreported place would lapse
			}
			c := nodes[i].client("198.51.100.7")
			for ctx.Err() == nil {
				conn, err := c.Dial("/ws/lecture/" + code + "?proto=2")
				if err != nil {
					return fmt.Errorf("server %d: %w", i+1, err)
				}
				_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
				_, b, err := conn.ReadMessage()
				if err != nil || strings.Contains(string(b), `"type":"error"`) {
					conn.Close()
					fmt.Printf("cluster-places: server %d refused the next: %.120s %v\n", i+1, b, err)
					break
				}
				_ = conn.SetReadDeadline(time.Time{})
				drain(conn)
				conns = append(conns, conn)
				got[i]++
				time.Sleep(50 * time.Millisecond) // within --rate-sockets
			}
		}
		fmt.Printf("cluster-places: share %d per lecture; one address got %d places on server 2, then %d on server 1: %d in all\n",
			opts.Lecture.ClientShare(), got[1], got[0], got[0]+got[1])
		conn, err := nodes[1].client("203.0.113.5").Dial("/ws/lecture/" + code)
		if err != nil {
			return err
		}
		defer conn.Close()
		typ, why := firstFrame(conn)
		fmt.Printf("cluster-places: a second address on server 2: %s %s\n", typ, why)
		return nil
	}
}

// guessesAttack: one address guesses join codes (random codes of the code alphabet)
// until the server first refuses one, then asks for the real code; a second address
// asks for the real code too (unlimited, about 1500 guesses were answered before any
// 429).
func guessesAttack(fs *flag.FlagSet, _ *web.Options) func(context.Context, *local) error {
	most := fs.Int("n", 5000, "guesses at most")
	return func(ctx context.Context, t *local) error {
		code, err := t.lecture("/play/ricart-agrawala?n=3")
		if err != nil {
			return err
		}
		guesser := t.client("198.51.100.7")
		counts := map[int]int{}
		answered := 0
		start := time.Now()
		for k := 0; k < *most; k++ {
			guess := make([]byte, lecture.CodeLen)
			for i := range guess {
				guess[i] = lecture.CodeAlphabet[rand.IntN(len(lecture.CodeAlphabet))]
			}
			status, _, err := guesser.Page("/l/" + string(guess))
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
		own, _, err := guesser.Page("/l/" + code)
		if err != nil {
			return err
		}
		other, _, err := t.client("203.0.113.5").Page("/l/" + code)
		if err != nil {
			return err
		}
		fmt.Printf("guesses: the right code from the guessing address: %d; from a second address: %d\n", own, other)
		return nil
	}
}

// answersAttack: a presenter opens a question; one address opens N follower sockets,
// each without a cookie (a new follower id every time), and answers on each; then a
// second address answers (unbounded, 300 sockets cast 300 answers).
func answersAttack(fs *flag.FlagSet, _ *web.Options) func(context.Context, *local) error {
	n := fs.Int("n", 2500, "follower sockets (each a new follower) from the attacking address (past the default share, 2,000)")
	return func(ctx context.Context, t *local) error {
		code, question, err := lectureAsking(t, "192.0.2.10")
		if err != nil {
			return err
		}
		attacker := t.client("198.51.100.7")
		counts := map[string]int{}
		start := time.Now()
		for k := 0; k < *n && ctx.Err() == nil; k++ {
			counts[answerAs(attacker, code, question)]++
		}
		fmt.Printf("answers: %d sockets from one address, each a new follower, in %v: %v\n", *n, time.Since(start).Round(time.Millisecond), counts)
		fmt.Printf("answers: a second address: %s\n", answerAs(t.client("203.0.113.5"), code, question))
		return nil
	}
}

// answerTricksAttack: with a lecture of -max-followers (its share per client 40 % of
// it), one address answers the open question again and again, each time from a new
// follower after an answer naming another question (the reset trick), then sends -bad
// answers with a choice out of range from one socket, within the command rate; then it
// answers for real again, and a second address answers.
func answerTricksAttack(fs *flag.FlagSet, opts *web.Options) func(context.Context, *local) error {
	fs.IntVar(&opts.Lecture.MaxFollowers, "max-followers", 50, "the lecture's --max-followers (the share is 40 % of it)")
	tries := fs.Int("tries", 200, "answers from the attacking address with the reset trick")
	bad := fs.Int("bad", 2000, "answers with a bad choice from one socket")
	return func(ctx context.Context, t *local) error {
		code, id, err := lectureAsking(t, "192.0.2.10")
		if err != nil {
			return err
		}
		share := opts.Lecture.ClientShare()
		attacker := t.client("198.51.100.7")
		tricks, why := joined(attacker, code)
		if tricks == nil {
			return fmt.Errorf("the trick socket: %s", why)
		}
		defer tricks.Close()
		counts, trick := map[string]int{}, map[string]int{}
		start := time.Now()
		for k := 0; k < *tries && ctx.Err() == nil; k++ {
			trick[answerOn(tricks, id+1+k, 0)]++
			counts[answerAs(attacker, code, id)]++
			time.Sleep(30 * time.Millisecond) // within the socket rate
		}
		fmt.Printf("answer-tricks: share %d; %d answers from one address, each after an answer to another question, in %v: %v (the tricks: %v)\n",
			share, *tries, time.Since(start).Round(time.Millisecond), counts, trick)

		// Bad choices from one socket, within its command rate, on a fresh lecture's
		// question so that the address's share is whole.
		code, id, err = lectureAsking(t, "192.0.2.11")
		if err != nil {
			return err
		}
		badConn, why := joined(attacker, code)
		if badConn == nil {
			return fmt.Errorf("the bad socket: %s", why)
		}
		defer badConn.Close()
		bads := map[string]int{}
		start = time.Now()
		for k := 0; k < *bad && ctx.Err() == nil; k++ {
			bads[answerOn(badConn, id, 50+k)]++
			time.Sleep(25 * time.Millisecond) // 40 a second: the connection's command rate
		}
		fmt.Printf("answer-tricks: %d bad choices from one socket in %v: %v\n", *bad, time.Since(start).Round(time.Millisecond), bads)
		counts = map[string]int{}
		for k := 0; k < share+5 && ctx.Err() == nil; k++ {
			counts[answerAs(attacker, code, id)]++
			time.Sleep(30 * time.Millisecond)
		}
		fmt.Printf("answer-tricks: then %d real answers from that address: %v\n", share+5, counts)
		fmt.Printf("answer-tricks: a second address: %s\n", answerAs(t.client("203.0.113.5"), code, id))
		return nil
	}
}

// forksAttack: a follower forks the lecture before a question, the presenter opens a
// question, and the follower drives its fork ahead (steps, then a seek far past the
// presenter) to see the answer; it then asks for a new fork while the question is
// open (a fork stepped ahead must not show the answer before the presenter reveals
// it).
func forksAttack(fs *flag.FlagSet, _ *web.Options) func(context.Context, *local) error {
	steps := fs.Int("steps", 200, "step commands the fork sends while the question is open")
	return func(ctx context.Context, t *local) error {
		presenter, code, err := t.presenter("192.0.2.10", "/play/ricart-agrawala?n=4")
		if err != nil {
			return err
		}
		if err := send(presenter, twoRequests...); err != nil {
			return err
		}
		if err := send(presenter, `{"type":"step"}`, `{"type":"step"}`, `{"type":"step"}`); err != nil {
			return err
		}

		// The follower's fork, made before the question: a session of its own.
		student := t.client("198.51.100.7")
		status, id, err := student.Page("/l/" + code + "/fork")
		if err != nil {
			return err
		}
		if status != http.StatusOK || id == "" {
			return fmt.Errorf("fork before the question: %d, no session", status)
		}
		fork, err := student.Dial("/ws/" + id)
		if err != nil {
			return err
		}
		defer fork.Close()

		q, err := ask(presenter)
		if err != nil {
			return err
		}
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
			f, err := readFrame(fork, time.Second)
			if err != nil {
				break
			}
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
			*q.Step, *steps, counts, furthest)
		status, _, err = student.Page("/l/" + code + "/fork")
		if err != nil {
			return err
		}
		fmt.Printf("forks: a new fork while the question is open: %d\n", status)
		return nil
	}
}
