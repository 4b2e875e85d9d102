package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/cmd/internal/natsserver"
	"github.com/teach-dist/playground/runtime/lecture"
	"github.com/teach-dist/playground/runtime/lecture/natsbroker"
	"github.com/teach-dist/playground/web"
)

func init() {
	attacks["answer-tricks"] = answerTricksAttack
	attacks["cluster-places"] = clusterPlacesAttack
	attacks["bodies"] = bodiesAttack
	attacks["rebind"] = rebindAttack
}

// askQuestion makes the lecture's presenter ask its first question and returns its id.
func askQuestion(presenter *websocket.Conn) (int, error) {
	for _, f := range []string{`{"type":"act","do":"request","node":0}`, `{"type":"act","do":"request","node":2}`,
		`{"type":"lecture","op":"questions"}`, `{"type":"lecture","op":"ask","question":0}`} {
		if err := presenter.WriteMessage(websocket.TextMessage, []byte(f)); err != nil {
			return 0, err
		}
	}
	q, err := openQuestion(presenter)
	return q.ID, err
}

// reply reads conn until an answered or error frame and says which ("closed" if it
// closed first).
func reply(conn *websocket.Conn) string {
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

// answerTricksAttack: with a lecture of -max-followers (its share per client 40 % of
// it), one address answers the open question again and again, each time from a new
// follower after an answer naming another question (the reset trick), then sends
// -bad answers with a choice out of range from one socket, within the command rate;
// then it answers for real again, and a second address answers.
func answerTricksAttack(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("answer-tricks", flag.ContinueOnError)
	maxFollowers := fs.Int("max-followers", 50, "the lecture's --max-followers (the share is 40 % of it)")
	tries := fs.Int("tries", 200, "answers from the attacking address with the reset trick")
	bad := fs.Int("bad", 2000, "answers with a bad choice from one socket")
	if err := fs.Parse(args); err != nil {
		return err
	}
	t, err := startTargetWith(web.Options{Lecture: lecture.Options{MaxFollowers: *maxFollowers}})
	if err != nil {
		return err
	}
	defer t.close()
	presenter, code, err := t.lecture("192.0.2.10", "/play/ricart-agrawala?n=4")
	if err != nil {
		return err
	}
	defer presenter.Close()
	id, err := askQuestion(presenter)
	if err != nil {
		return err
	}
	drain(presenter)
	share := lecture.Options{MaxFollowers: *maxFollowers}.ClientShare()
	const attacker = "198.51.100.7"
	tricks, err := t.dial(attacker, "/ws/lecture/"+code)
	if err != nil {
		return err
	}
	defer tricks.Close()
	if typ, why := firstFrame(tricks); typ != "hello" {
		return fmt.Errorf("the trick socket: %s %s", typ, why)
	}
	send := func(conn *websocket.Conn, question, choice int) string {
		if err := conn.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `{"type":"lecture","op":"answer","question":%d,"choice":%d}`, question, choice)); err != nil {
			return "closed"
		}
		return reply(conn)
	}
	answer := func(addr string) string {
		conn, err := t.dial(addr, "/ws/lecture/"+code)
		if err != nil {
			return "handshake refused"
		}
		defer conn.Close()
		if typ, why := firstFrame(conn); typ != "hello" {
			return typ + " " + why
		}
		return send(conn, id, 0)
	}
	counts, trick := map[string]int{}, map[string]int{}
	start := time.Now()
	for k := 0; k < *tries && ctx.Err() == nil; k++ {
		trick[send(tricks, id+1+k, 0)]++
		counts[answer(attacker)]++
		time.Sleep(30 * time.Millisecond) // within the socket rate
	}
	fmt.Printf("answer-tricks: share %d; %d answers from one address, each after an answer to another question, in %v: %v (the tricks: %v)\n",
		share, *tries, time.Since(start).Round(time.Millisecond), counts, trick)

	// Bad choices from one socket, within its command rate, on a fresh lecture's
	// question so that the address's share is whole.
	presenter2, code2, err := t.lecture("192.0.2.11", "/play/ricart-agrawala?n=4")
	if err != nil {
		return err
	}
	defer presenter2.Close()
	id2, err := askQuestion(presenter2)
	if err != nil {
		return err
	}
	drain(presenter2)
	code, id = code2, id2
	badConn, err := t.dial(attacker, "/ws/lecture/"+code)
	if err != nil {
		return err
	}
	defer badConn.Close()
	if typ, why := firstFrame(badConn); typ != "hello" {
		return fmt.Errorf("the bad socket: %s %s", typ, why)
	}
	bads := map[string]int{}
	start = time.Now()
	for k := 0; k < *bad && ctx.Err() == nil; k++ {
		bads[send(badConn, id, 50+k)]++
		time.Sleep(25 * time.Millisecond) // 40 a second: the connection's command rate
	}
	fmt.Printf("answer-tricks: %d bad choices from one socket in %v: %v\n", *bad, time.Since(start).Round(time.Millisecond), bads)
	counts = map[string]int{}
	for k := 0; k < share+5 && ctx.Err() == nil; k++ {
		counts[answer(attacker)]++
		time.Sleep(30 * time.Millisecond)
	}
	fmt.Printf("answer-tricks: then %d real answers from that address: %v\n", share+5, counts)
	fmt.Printf("answer-tricks: a second address: %s\n", answer("203.0.113.5"))
	return nil
}

// clusterPlacesAttack: two servers behind one NATS (a real nats-server), a lecture on
// the first; one address opens follower sockets as pages do (compact frames) on the
// second until refused, waits five heartbeats, then on the first until refused, and
// on the second again: the places it got in all.
func clusterPlacesAttack(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("cluster-places", flag.ContinueOnError)
	maxFollowers := fs.Int("max-followers", 500, "the lecture's --max-followers (the share is 40 % of it)")
	natsBin := fs.String("nats", "", "the nats-server binary (default: on PATH, /usr/sbin, /usr/bin)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	nats, err := natsserver.Start(*natsBin)
	if err != nil {
		return err
	}
	defer nats.Stop()
	var nodes []*target
	for range 2 {
		b, err := natsbroker.Connect(natsbroker.Options{URL: nats.URL})
		if err != nil {
			return err
		}
		defer b.Close()
		t, err := startTargetWith(web.Options{Broker: b, Lecture: lecture.Options{MaxFollowers: *maxFollowers}})
		if err != nil {
			return err
		}
		defer t.close()
		nodes = append(nodes, t)
	}
	presenter, code, err := nodes[0].lecture("192.0.2.10", "/play/ricart-agrawala?n=4")
	if err != nil {
		return err
	}
	defer presenter.Close()
	drain(presenter)
	share := lecture.Options{MaxFollowers: *maxFollowers}.ClientShare()
	var conns []*websocket.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	got := make([]int, len(nodes))
	for k, i := range []int{1, 0, 1} {
		if k == 1 {
			time.Sleep(5 * time.Second) // past three heartbeats: an unreported place would lapse
		}
		t := nodes[i]
		for ctx.Err() == nil {
			conn, err := t.dial("198.51.100.7", "/ws/lecture/"+code+"?proto=2")
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
		share, got[1], got[0], got[0]+got[1])
	conn, err := nodes[1].dial("203.0.113.5", "/ws/lecture/"+code)
	if err != nil {
		return err
	}
	defer conn.Close()
	typ, why := firstFrame(conn)
	fmt.Printf("cluster-places: a second address on server 2: %s %s\n", typ, why)
	return nil
}

// bodiesAttack: one address opens -n connections, each a POST whose body never comes
// (headers and a few bytes); how long the server keeps them.
func bodiesAttack(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bodies", flag.ContinueOnError)
	n := fs.Int("n", 300, "trickled bodies at once")
	wait := fs.Duration("wait", 60*time.Second, "how long the attacker waits for the server to close them")
	timeout := fs.Duration("body-timeout", web.DefaultBodyTimeout, "the server's --body-timeout")
	if err := fs.Parse(args); err != nil {
		return err
	}
	t, err := startTargetWith(web.Options{BodyTimeout: *timeout})
	if err != nil {
		return err
	}
	defer t.close()
	host := strings.TrimPrefix(t.base, "http://")
	var mu sync.Mutex
	var closedAt []time.Duration
	var wg sync.WaitGroup
	start := time.Now()
	for k := range *n {
		conn, err := net.Dial("tcp", host)
		if err != nil {
			return err
		}
		path := "/lecture"
		if k%2 == 1 {
			path = "/api/sessions/x/explore"
		}
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nX-Forwarded-For: 198.51.100.7\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100000\r\n\r\nsession=", path, host)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer conn.Close()
			_ = conn.SetReadDeadline(start.Add(*wait))
			_, err := io.Copy(io.Discard, conn)
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return // still open when the attacker gave up
			}
			mu.Lock()
			closedAt = append(closedAt, time.Since(start))
			mu.Unlock()
		}()
	}
	wg.Wait()
	var last time.Duration
	for _, d := range closedAt {
		last = max(last, d)
	}
	fmt.Printf("bodies: %d POSTs whose bodies never came (--body-timeout %v): %d closed by the server, the last after %v; %d still open after %v\n",
		*n, *timeout, len(closedAt), last.Round(10*time.Millisecond), *n-len(closedAt), *wait)
	return ctx.Err()
}

// rebindAttack: a page of another site whose name resolves to the server (DNS
// rebinding) asks for a page and opens a socket with its own Host and Origin.
func rebindAttack(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("rebind", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return err
	}
	t, err := startTarget()
	if err != nil {
		return err
	}
	defer t.close()
	id, _, err := t.session("198.51.100.7", "/play/ricart-agrawala?n=3")
	if err != nil {
		return err
	}
	host := strings.TrimPrefix(t.base, "http://")
	_, port, _ := net.SplitHostPort(host)
	evil := "rebind.example:" + port
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, t.base+"/play/ricart-agrawala?n=3", nil)
	req.Host = evil
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	fmt.Printf("rebind: GET /play with Host %s: %d\n", evil, resp.StatusCode)
	d := websocket.Dialer{NetDial: func(string, string) (net.Conn, error) { return net.Dial("tcp", host) }}
	conn, wsResp, err := d.Dial("ws://"+evil+"/ws/"+id, http.Header{"Origin": {"http://" + evil}})
	switch {
	case err == nil:
		conn.Close()
		fmt.Printf("rebind: the socket with Host and Origin %s: opened (101)\n", evil)
	case wsResp != nil:
		fmt.Printf("rebind: the socket with Host and Origin %s: %d\n", evil, wsResp.StatusCode)
	default:
		return err
	}
	own, err := t.dial("198.51.100.7", "/ws/"+id)
	if err != nil {
		return fmt.Errorf("the server's own address: %w", err)
	}
	own.Close()
	fmt.Printf("rebind: the same socket by the server's address %s: opened (101)\n", host)
	return nil
}
