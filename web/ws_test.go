package web

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/internal/testwait"
)

// wsClient is a real WebSocket client over loopback, as a browser tab would be.
type wsClient struct {
	t    *testing.T
	conn *websocket.Conn
}

type wsFrame struct {
	Type          string
	Code, Error   string
	Ref           int64
	Step, T       int
	Horizon       int
	Playing       bool
	Speed         float64
	Interventions int
	IDs           []int
	Batches       []struct{ Events []json.RawMessage }
	Nodes         []struct {
		ID    int
		CS    bool
		Alive bool
		State map[string]any
	}
	raw string
}

// openSession loads the page (which creates the session) and returns its id.
func openSession(t *testing.T, ts *httptest.Server, path string) string {
	t.Helper()
	return sessionOf(t, get(t, browser(t), ts.URL+path))
}

func dial(t *testing.T, ts *httptest.Server, id string) *wsClient {
	t.Helper()
	h := http.Header{"Origin": {ts.URL}}
	conn, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.URL, "http")+"/ws/"+id, h)
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	c := &wsClient{t: t, conn: conn}
	t.Cleanup(func() { conn.Close() })
	return c
}

func (c *wsClient) send(frame string) {
	c.t.Helper()
	_ = c.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if err := c.conn.WriteMessage(websocket.TextMessage, []byte(frame)); err != nil {
		c.t.Fatal(err)
	}
}

// next returns the next frame of one of these types. The deadline only turns a hang
// into a failure.
func (c *wsClient) next(types ...string) wsFrame {
	c.t.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(testwait.Limit))
	for {
		_, b, err := c.conn.ReadMessage()
		if err != nil {
			c.t.Fatalf("waiting for %v: %v", types, err)
		}
		var f wsFrame
		if err := json.Unmarshal(b, &f); err != nil {
			c.t.Fatalf("frame is not JSON: %s", b)
		}
		f.raw = string(b)
		for _, ty := range types {
			if f.Type == ty {
				return f
			}
		}
	}
}

// ended waits until the server closes the connection and returns the close error.
func (c *wsClient) ended() error {
	c.t.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(testwait.Limit))
	for {
		if _, _, err := c.conn.ReadMessage(); err != nil {
			var ne interface{ Timeout() bool }
			if errors.As(err, &ne) && ne.Timeout() {
				c.t.Fatal("the server did not close the connection")
			}
			return err
		}
	}
}

func TestWSCommandsDriveTheRun(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	c := dial(t, ts, openSession(t, ts, "/play/ricart-agrawala?n=3"))
	if h := c.next("hello"); len(h.IDs) != 3 {
		t.Fatalf("hello: %s", h.raw)
	}
	c.next("snapshot")
	c.send(`{"type":"act","do":"request","node":0,"ref":1}`)
	f := c.next("events")
	if !strings.Contains(f.raw, `"type":"request"`) || !strings.Contains(f.raw, `"rule":"RA1"`) {
		t.Fatalf("request: %s", f.raw)
	}
	c.send(`{"type":"act","do":"request","node":1}`)
	c.next("events")
	entered := map[int]bool{}
	for i := 0; i < 200 && len(entered) < 2; i++ {
		c.send(`{"type":"step"}`)
		f := c.next("events", "state")
		for _, b := range f.Batches {
			for _, ev := range b.Events {
				var e struct {
					Type string
					Node int
				}
				json.Unmarshal(ev, &e)
				if e.Type == "enter" {
					entered[e.Node] = true
				}
			}
		}
	}
	if !entered[0] || !entered[1] {
		t.Fatalf("entered: %v", entered)
	}
	c.send(`{"type":"seek","step":2}`)
	if f := c.next("snapshot"); f.Step != 2 {
		t.Fatalf("seek: step %d", f.Step)
	}
	c.send(`{"type":"back"}`)
	if f := c.next("snapshot"); f.Step != 1 {
		t.Fatalf("back: step %d", f.Step)
	}
	c.send(`{"type":"speed","speed":4}`)
	if f := c.next("state"); f.Speed != 4 {
		t.Fatalf("speed: %s", f.raw)
	}
	c.send(`{"type":"play"}`)
	if f := c.next("state"); !f.Playing {
		t.Fatalf("play: %s", f.raw)
	}
	c.send(`{"type":"pause"}`)
	for {
		if f := c.next("state", "events"); f.Type == "state" {
			if f.Playing {
				t.Fatal("pause did not pause")
			}
			break
		}
	}
	c.send(`{"type":"reset","scenario":{"version":1,"algorithm":"ricart-agrawala","nodes":4,"seed":2}}`)
	if h := c.next("hello"); len(h.IDs) != 4 {
		t.Fatalf("reset: %s", h.raw)
	}
	if f := c.next("snapshot"); f.Step != 0 || len(f.Nodes) != 4 {
		t.Fatalf("reset snapshot: %s", f.raw)
	}
}

// A malformed or unknown frame gets an error back to that client only; the session,
// the connection and the server carry on.
func TestWSBadFramesGetAnErrorAndTheSessionCarriesOn(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	id := openSession(t, ts, "/play/ricart-agrawala?n=3")
	c := dial(t, ts, id)
	other := dial(t, ts, id)
	c.next("snapshot")
	other.next("snapshot")
	tests := []struct{ frame, code string }{
		{`not json`, "bad-frame"},
		{`[1,2]`, "bad-frame"},
		{`{"type":"step"} {"type":"step"}`, "bad-frame"},
		{`{"ref":3}`, "bad-frame"},
		{`{"type":"step","colour":"red"}`, "bad-frame"},
		{`{"type":"fly","ref":4}`, "unknown-type"},
		{`{"type":"seek","ref":5}`, "bad-field"},
		{`{"type":"seek","step":"x"}`, "bad-frame"},
		{`{"type":"speed","speed":100}`, "bad-field"},
		{`{"type":"act","do":"request"}`, "bad-field"},
		{`{"type":"act","do":"fly","node":1}`, "bad-field"},
		{`{"type":"act","do":"request","node":42}`, "bad-field"},
		{`{"type":"act","do":"release","node":1}`, "refused"},
		{`{"type":"act","do":"drop"}`, "bad-field"},
		{`{"type":"act","do":"partition","node":1}`, "bad-field"},
		{`{"type":"reset","scenario":{"version":1,"algorithm":"ricart-agrawala","nodes":900}}`, "bad-scenario"},
		{`{"type":"reset","scenario":{"version":1,"algorithm":"central"}}`, "bad-scenario"},
	}
	for _, tc := range tests {
		c.send(tc.frame)
		f := c.next("error")
		if f.Code != tc.code || f.Error == "" {
			t.Errorf("%s: got %s, want code %s", tc.frame, f.raw, tc.code)
		}
	}
	if err := c.conn.WriteMessage(websocket.BinaryMessage, []byte{1, 2}); err != nil {
		t.Fatal(err)
	}
	if f := c.next("error"); f.Code != "bad-frame" {
		t.Errorf("binary frame: %s", f.raw)
	}
	c.send(`{"type":"seek","ref":5}`)
	if f := c.next("error"); f.Ref != 5 {
		t.Errorf("the error does not carry the ref: %s", f.raw)
	}
	c.send(`{"type":"act","do":"request","node":2}`)
	c.next("events")
	// The other viewer saw the request, and no error.
	if f := other.next("events", "error"); f.Type != "events" {
		t.Fatalf("another client got %s", f.raw)
	}
}

func TestWSRejectsForeignOrigins(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	id := openSession(t, ts, "/play/ricart-agrawala")
	url := "ws" + strings.TrimPrefix(ts.URL, "http") + "/ws/" + id
	for _, origin := range []string{"", "http://evil.example", "null", "file://", "ws://" + strings.TrimPrefix(ts.URL, "http://")} {
		h := http.Header{}
		if origin != "" {
			h.Set("Origin", origin)
		}
		conn, resp, err := websocket.DefaultDialer.Dial(url, h)
		if err == nil {
			conn.Close()
			t.Errorf("origin %q was accepted", origin)
			continue
		}
		if resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("origin %q: %v", origin, err)
		}
	}
}

func TestWSUnknownSessionSaysGone(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	c := dial(t, ts, "no-such-session")
	if f := c.next("error"); f.Code != "gone" {
		t.Fatalf("%s", f.raw)
	}
	c.ended()
}

// Reloading the page resumes the session at its step, interventions included.
func TestWSReconnectResumesAtTheSameStep(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	br := browser(t)
	id := sessionOf(t, get(t, br, ts.URL+"/play/ricart-agrawala"))
	c := dial(t, ts, id)
	c.next("snapshot")
	c.send(`{"type":"act","do":"request","node":3}`)
	c.next("events")
	for range 4 {
		c.send(`{"type":"step"}`)
		c.next("events")
	}
	c.conn.Close()
	if again := sessionOf(t, get(t, br, ts.URL+"/play/ricart-agrawala")); again != id {
		t.Fatal("the reload got another session")
	}
	d := dial(t, ts, id)
	f := d.next("snapshot")
	if f.Step != 4 || f.Interventions != 1 {
		t.Fatalf("resumed at step %d with %d interventions", f.Step, f.Interventions)
	}
	if f.Nodes[3].State["state"] != "REQUESTED" && f.Nodes[3].State["state"] != "HELD" {
		t.Fatalf("P3 forgot its request: %v", f.Nodes[3].State)
	}
}

// A client that stops reading is dropped when its queue fills; the others carry on.
func TestWSSlowClientIsDroppedOthersCarryOn(t *testing.T) {
	// The write deadline is what drops the client that never reads (a new snapshot
	// replaces an unsent one, so its queue never fills); it is long enough that the
	// client that reads is not dropped when a loaded machine starves the writer
	// between setting the deadline and writing.
	_, ts := newTestServer(t, Options{SendQueue: 4, WriteWait: 2 * time.Second})
	id := openSession(t, ts, "/play/ricart-agrawala?n=128")
	slow := dial(t, ts, id)
	fast := dial(t, ts, id)
	fast.next("snapshot")
	// Each seek sends every viewer a snapshot of 128 processes (about 17 KB); the fast
	// client takes each before asking again, as the page does, while the other never
	// reads: a thousand of them overflow any socket buffer.
	for range 1000 {
		fast.send(`{"type":"seek","step":0}`)
		fast.next("snapshot")
	}
	// Its writer gives up after the write deadline (counted as a slow client), while
	// nothing reads it; then what the socket held drains, and the connection ends.
	testwait.For(t, "the server to drop the client that never reads", func() bool {
		return strings.Contains(get(t, browser(t), ts.URL+"/metrics").body, "\nplayground_slow_clients_dropped_total 1\n")
	})
	slow.ended()
	fast.send(`{"type":"act","do":"request","node":0}`)
	fast.next("events")
}

// The server pings; a client that answers stays, one that does not is dropped after
// the pong wait.
func TestWSPingPongDropsASilentClient(t *testing.T) {
	_, ts := newTestServer(t, Options{PongWait: 1500 * time.Millisecond}) // generous: a loaded CI machine must not starve the answering reader
	id := openSession(t, ts, "/play/ricart-agrawala")
	silent := dial(t, ts, id)
	silent.conn.SetPingHandler(func(string) error { return nil }) // never answers
	alive := dial(t, ts, id)
	alive.next("snapshot")
	readerDone := make(chan error, 1)
	go func() {
		// Reading is what answers pings (gorilla's default handler).
		for {
			if _, _, err := alive.conn.ReadMessage(); err != nil {
				readerDone <- err
				return
			}
		}
	}()
	silent.ended()
	select {
	case err := <-readerDone:
		t.Fatalf("the answering client was dropped too: %v", err)
	default:
	}
	alive.send(`{"type":"step"}`)
	alive.conn.Close()
	<-readerDone
}

func TestWSReadLimitClosesTheConnection(t *testing.T) {
	_, ts := newTestServer(t, Options{ReadLimit: 1024})
	c := dial(t, ts, openSession(t, ts, "/play/ricart-agrawala"))
	c.next("snapshot")
	c.send(`{"type":"reset","scenario":{"version":1,"algorithm":"ricart-agrawala","title":"` + strings.Repeat("x", 2000) + `"}}`)
	if err := c.ended(); !websocket.IsCloseError(err, websocket.CloseMessageTooBig) {
		t.Fatalf("an over-long frame ended the connection with %v, want 1009", err)
	}
}

func TestWSAllHandlersEndWhenTheServerCloses(t *testing.T) {
	srv := New(Options{})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	c := dial(t, ts, openSession(t, ts, "/play/ricart-agrawala"))
	c.next("snapshot")
	srv.Close()
	if err := c.ended(); !websocket.IsCloseError(err, websocket.CloseGoingAway) {
		t.Fatalf("closing the server ended the connection with %v, want going away", err)
	}
}
