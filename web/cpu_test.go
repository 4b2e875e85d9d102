package web

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/internal/testwait"
	"github.com/teach-dist/playground/runtime/session"
)

// playAs loads path as client addr, opens its socket to the snapshot, and plays the
// run at 16x with every process asking for the CS.
func playAs(t *testing.T, ts string, addr, path string, nodes int) *wsClient {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, ts+path, nil)
	req.Header.Set("X-Forwarded-For", addr)
	id := sessionOf(t, do(t, browser(t), req))
	h := http.Header{"Origin": {ts}, "X-Forwarded-For": {addr}}
	conn, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts, "http")+"/ws/"+id, h)
	if err != nil {
		t.Fatalf("dial as %s: %v (%v)", addr, err, resp)
	}
	t.Cleanup(func() { conn.Close() })
	c := &wsClient{t: t, conn: conn}
	c.next("snapshot")
	c.send(`{"type":"speed","speed":16}`)
	askAll(c, nodes)
	c.send(`{"type":"play"}`)
	return c
}

func askAll(c *wsClient, nodes int) {
	for n := range nodes {
		c.send(fmt.Sprintf(`{"type":"act","do":"request","node":%d}`, n))
	}
}

// Twenty heavy runs of one address are its work, charged to it; when the server's
// share of the processors is passed and another client has used it too, that
// address's runs are slowed (their frames say so) while a fresh visitor of another
// address plays at its own speed. The shared CPU
// is made small (its use decays over an hour) so that the heavy runs pass it after a
// few tens of milliseconds of work, however fast the machine, while the visitor's page,
// snapshot and run stay far under it.
func TestAHeavyClientIsSlowedAndAFreshVisitorIsNot(t *testing.T) {
	const halfLife = time.Hour
	tau := halfLife.Seconds() / 0.6931471805599453
	srv, ts := newTestServer(t, Options{ClientIP: viaProxy(t), MaxSessions: 40,
		CPU: session.CPUOptions{Cores: 0.03 / tau, HalfLife: halfLife}})
	const heavyNodes = 16
	// Another student has a page open: a client alone is never slowed.
	bystander, _ := http.NewRequest(http.MethodGet, ts.URL+"/play/bully?n=3", nil)
	bystander.Header.Set("X-Forwarded-For", "10.0.0.3")
	sessionOf(t, do(t, browser(t), bystander))
	var slowed atomic.Bool
	var wg sync.WaitGroup
	var heavy []*wsClient
	t.Cleanup(func() {
		for _, c := range heavy {
			c.conn.Close()
		}
		wg.Wait()
	})
	for range 20 {
		c := playAs(t, ts.URL, "10.0.0.1", fmt.Sprintf("/play/ricart-agrawala?n=%d", heavyNodes), heavyNodes)
		heavy = append(heavy, c)
		// Each heavy run is read as a page reads it, and asks again whenever it goes
		// quiet. Its writes come from this goroutine only, after the setup's.
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				_, b, err := c.conn.ReadMessage()
				if err != nil {
					return
				}
				f := string(b)
				if strings.Contains(f, `"slowed":`) {
					slowed.Store(true)
				}
				if strings.Contains(f, `"quiet":true`) {
					for n := range heavyNodes {
						_ = c.conn.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `{"type":"act","do":"request","node":%d}`, n))
					}
				}
			}
		}()
	}
	testwait.For(t, "the heavy address's runs to be slowed", func() bool {
		return slowed.Load() && srv.CPU().Factor("10.0.0.1/32") < 1
	})

	// A fresh visitor: page, socket, snapshot, and its own run played to the end.
	v := playAs(t, ts.URL, "10.0.0.2", "/play/ricart-agrawala?n=3", 3)
	events := 0
	for {
		f := v.next("events", "state")
		if strings.Contains(f.raw, `"slowed":`) {
			t.Fatalf("the fresh visitor's run was slowed: %s", f.raw)
		}
		if f.Type == "events" {
			events++
		}
		if strings.Contains(f.raw, `"quiet":true`) && events > 0 {
			break
		}
	}
	if f := srv.CPU().Factor("10.0.0.2/32"); f != 1 {
		t.Fatalf("the visitor's factor: %v", f)
	}
	if f := srv.CPU().Factor("10.0.0.1/32"); f >= 1 {
		t.Fatalf("the heavy address's factor after the visit: %v", f)
	}
}
