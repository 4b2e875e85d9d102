package web

import (
	"strings"
	"testing"
	"time"

	"github.com/teach-dist/playground/internal/testwait"
)

// openClients are the server's WebSocket clients.
func openClients(s *Server) []*client {
	s.sockets.Lock()
	defer s.sockets.Unlock()
	var out []*client
	for c := range s.sockets.open {
		out = append(out, c)
	}
	return out
}

func writing(c *client) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.writing
}

// A tab left open holds no writing goroutine: one runs while frames wait, and a
// command's answer starts it again.
func TestIdleSocketHasNoWriter(t *testing.T) {
	srv, ts := newTestServer(t, Options{})
	c := dial(t, ts, openSession(t, ts, "/play/ricart-agrawala?n=3"))
	c.next("snapshot")
	clients := openClients(srv)
	if len(clients) != 1 {
		t.Fatalf("%d clients open", len(clients))
	}
	testwait.For(t, "the writer of an idle socket ended", func() bool { return !writing(clients[0]) })
	c.send(`{"type":"act","do":"request","node":0}`)
	if f := c.next("events"); !strings.Contains(f.raw, `"rule":"RA1"`) {
		t.Fatalf("after the writer ended, a request answered %s", f.raw)
	}
	testwait.For(t, "the writer ended again", func() bool { return !writing(clients[0]) })
}

// A session put to rest is counted, and goes on from its step when its viewer acts.
func TestRestingSessionsAreCountedAndWake(t *testing.T) {
	srv, ts := newTestServer(t, Options{HibernateAfter: 20 * time.Millisecond})
	id := openSession(t, ts, "/play/ricart-agrawala?n=3")
	c := dial(t, ts, id)
	c.next("snapshot")
	c.send(`{"type":"act","do":"request","node":1}`)
	c.next("events")
	c.send(`{"type":"step"}`)
	before := c.next("events")
	testwait.For(t, "the session went to rest", func() bool { return metric(t, srv, "playground_sessions_resting") == 1 })
	c.send(`{"type":"step"}`)
	after := c.next("events")
	if after.Batches == nil || after.Step != before.Step+1 {
		t.Fatalf("woken at step %d after step %d: %s", after.Step, before.Step, after.raw)
	}
}

// A frame handler runs on a goroutine of its own: its answer comes back, and its
// panic is raised again on the reader, where the socket's containment catches it.
func TestOnOwnStackReturnsAndRaises(t *testing.T) {
	if !onOwnStack(func(b []byte) bool { return string(b) == "go on" }, []byte("go on")) {
		t.Fatal("true was lost")
	}
	if onOwnStack(func([]byte) bool { return false }, nil) {
		t.Fatal("false was lost")
	}
	defer func() {
		v := recover()
		msg, _ := v.(string)
		if !strings.Contains(msg, "boom") || !strings.Contains(msg, "in a frame handler") || !strings.Contains(msg, "idle_test.go") {
			t.Fatalf("raised %v", v)
		}
	}()
	onOwnStack(func([]byte) bool { panic("boom") }, nil)
	t.Fatal("the panic was swallowed")
}
