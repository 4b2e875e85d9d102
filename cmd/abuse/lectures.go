package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/runtime/protocol"
	"github.com/teach-dist/playground/scenarios"
)

func init() {
	attacks["followers"] = followersAttack
	attacks["seeks"] = seeksAttack
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

// firstFrame reads conn's first frame: hello for a place, error for a refusal.
func firstFrame(conn *websocket.Conn) (typ, msg string) {
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, b, err := conn.ReadMessage()
	if err != nil {
		return "closed", err.Error()
	}
	var f struct{ Type, Code, Error string }
	_ = json.Unmarshal(b, &f)
	return f.Type, f.Code
}

// followersAttack: one address opens N follower sockets of one lecture, then a
// second address joins.
func followersAttack(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("followers", flag.ContinueOnError)
	n := fs.Int("n", 5000, "follower sockets from the attacking address (past the default share, 2,000 of 5,000)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	t, err := startTarget()
	if err != nil {
		return err
	}
	defer t.close()
	presenter, code, err := t.lecture("192.0.2.10", "/play/ricart-agrawala?n=5")
	if err != nil {
		return err
	}
	defer presenter.Close()
	drain(presenter)
	counts := map[string]int{}
	var conns []*websocket.Conn
	start := time.Now()
	for k := 0; k < *n && ctx.Err() == nil; k++ {
		conn, err := t.dial("198.51.100.7", "/ws/lecture/"+code)
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
	second, err := t.dial("203.0.113.5", "/ws/lecture/"+code)
	joined := "no: " + fmt.Sprint(err)
	if err == nil {
		typ, why := firstFrame(second)
		joined = fmt.Sprintf("%s %s in %v", typ, why, time.Since(t0).Round(time.Millisecond))
		second.Close()
	}
	for _, c := range conns {
		c.Close()
	}
	fmt.Printf("followers: %d sockets from one address in %v: %v\n", *n, took.Round(time.Millisecond), counts)
	fmt.Printf("followers: a second address: %s\n", strings.TrimSpace(joined))
	return nil
}

// seeksAttack: S sessions 95 000 steps into a 128-process token ring seek R times a
// second each, while another user steps a small run; it prints that user's step
// latency (command to events frame).
func seeksAttack(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("seeks", flag.ContinueOnError)
	sessions := fs.Int("sessions", 8, "seeking sessions")
	perSec := fs.Float64("rate", 38, "seeks per second, all sessions together")
	far := fs.Int("step", 95_000, "the step the seeking sessions start at")
	dur := fs.Duration("d", 10*time.Second, "how long to measure")
	if err := fs.Parse(args); err != nil {
		return err
	}
	t, err := startTarget()
	if err != nil {
		return err
	}
	defer t.close()
	doc := []byte(`{"version":2,"algorithm":"token-ring","nodes":128,"seed":1}`)
	sc, err := scenarios.Parse(doc)
	if err != nil {
		return err
	}
	cfg, err := sc.Config()
	if err != nil {
		return err
	}
	link, err := scenarios.LinkFromRun(doc, cfg, nil, *far)
	if err != nil {
		return err
	}
	path, err := link.Path()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *dur+time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	var seeks sync.Map
	begin := make(chan struct{})
	for k := range *sessions {
		addr := fmt.Sprintf("198.51.100.%d", 10+k) // one network each, as 8 people would be
		id, _, err := t.session(addr, path)
		if err != nil {
			return err
		}
		conn, err := t.dial(addr, "/ws/"+id)
		if err != nil {
			return err
		}
		defer conn.Close()
		drain(conn)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-begin
			tick := time.NewTicker(time.Duration(float64(*sessions) / *perSec * float64(time.Second)))
			defer tick.Stop()
			n := 0
			for {
				select {
				case <-ctx.Done():
					seeks.Store(k, n)
					return
				case <-tick.C:
				}
				step := *far - rand.IntN(*far/2)
				if conn.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `{"type":"seek","step":%d}`, step)) != nil {
					seeks.Store(k, n)
					return
				}
				n++
			}
		}()
	}
	id, _, err := t.session("203.0.113.5", "/play/ricart-agrawala?n=5")
	if err != nil {
		return err
	}
	victim, err := t.dial("203.0.113.5", "/ws/"+id)
	if err != nil {
		return err
	}
	defer victim.Close()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	close(begin)
	var lat []time.Duration
	refused := 0
	// reply waits for the answer to one command: an events, state or error frame.
	reply := func() (string, error) {
		for {
			_ = victim.SetReadDeadline(time.Now().Add(30 * time.Second))
			_, b, err := victim.ReadMessage()
			if err != nil {
				return "", err
			}
			fr, err := protocol.Decode(b)
			if err != nil {
				return "", err
			}
			switch typ := fr.Type(); typ {
			case "events", "state", "error":
				return typ, nil
			}
		}
	}
	end := time.Now().Add(*dur)
	for k := 0; time.Now().Before(end) && ctx.Err() == nil; k++ {
		if k%50 == 0 { // keep the small run busy: requests to step through
			_ = victim.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `{"type":"act","do":"request","node":%d}`, k/50%5))
			if _, err := reply(); err != nil {
				return err
			}
		}
		sent := time.Now()
		if err := victim.WriteMessage(websocket.TextMessage, []byte(`{"type":"step"}`)); err != nil {
			return err
		}
		typ, err := reply()
		if err != nil {
			return err
		}
		if typ == "error" {
			refused++
			continue
		}
		lat = append(lat, time.Since(sent))
		time.Sleep(30 * time.Millisecond) // a person clicking fast, within the command rate
	}
	cancel()
	wg.Wait()
	total := 0
	seeks.Range(func(_, v any) bool { total += v.(int); return true })
	slices.Sort(lat)
	q := func(p float64) time.Duration { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	fmt.Printf("seeks: %d sessions at step %d sent %d seeks in %v (%.1f/s)\n", *sessions, *far, total, *dur, float64(total)/dur.Seconds())
	if len(lat) == 0 {
		return fmt.Errorf("no step was answered (%d refused)", refused)
	}
	fmt.Printf("seeks: another user's step, %d steps (%d refused): mean %v, p50 %v, p99 %v, max %v\n", len(lat), refused,
		(sum / time.Duration(len(lat))).Round(10*time.Microsecond), q(0.5).Round(10*time.Microsecond),
		q(0.99).Round(10*time.Microsecond), lat[len(lat)-1].Round(10*time.Microsecond))
	return nil
}

// openedQuestion is what a presenter's socket says of the question it just opened.
type openedQuestion struct {
	Type, State, Error string
	ID, Step           int
}

// openQuestion reads the presenter's socket until the question it asked is open, or
// the lecture says it has none to ask.
func openQuestion(presenter *websocket.Conn) (openedQuestion, error) {
	for {
		_ = presenter.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, b, err := presenter.ReadMessage()
		if err != nil {
			return openedQuestion{}, fmt.Errorf("waiting for the question: %w", err)
		}
		var f openedQuestion
		_ = json.Unmarshal(b, &f)
		switch {
		case f.Type == "question" && f.State == "open":
			return f, nil
		case f.Type == "questions" && f.Error != "":
			return openedQuestion{}, fmt.Errorf("no questions: %s", f.Error)
		}
	}
}
