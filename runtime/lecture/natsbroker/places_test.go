package natsbroker

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/teach-dist/playground/internal/testwait"
	"github.com/teach-dist/playground/runtime/lecture"
	"github.com/teach-dist/playground/web"
)

// One address (127.0.0.1, as both servers see it) holds its share of a lecture's
// places and answers once across two servers of a cluster, not once per server: the
// lecture's own server counts every server's.
func TestTwoServersGiveOneAddressItsShareOnce(t *testing.T) {
	const share = 2
	ns := startNATS(t)
	opts := web.Options{Lecture: lecture.Options{MaxFollowers: 50, FollowersPerClient: share}}
	a, b := newNode(t, ns, opts), newNode(t, ns, opts)
	p := startLecture(t, a, "/play/ricart-agrawala?n=4")

	// Places: the share taken on B, then refused on A and on B.
	var onB []*wsc
	for range share {
		f := join(t, b, p.code, 0)
		if h := f.next("hello", "error"); h.Type != "hello" {
			t.Fatalf("a follower on B within the share: %s", h.raw)
		}
		onB = append(onB, f.wsc)
	}
	for _, n := range []*node{a, b} {
		f := join(t, n, p.code, 0)
		if e := f.next("hello", "error"); e.Type != "error" || !strings.Contains(e.Error, "its share") {
			t.Fatalf("a follower past the share: %s", e.raw)
		}
	}
	// One of B's followers leaves: its place comes back, and A may give it.
	onB[0].conn.Close()
	testwait.For(t, "the place freed on B to be given on A", func() bool {
		f := join(t, a, p.code, 0)
		ok := f.next("hello", "error").Type == "hello"
		if !ok {
			f.conn.Close()
		}
		return ok
	})

	// Answers: the share given through one server, then refused through the other.
	p.send(`{"type":"act","do":"request","node":0}`)
	p.pnext("events")
	p.send(`{"type":"act","do":"request","node":2}`)
	p.pnext("events")
	p.send(`{"type":"step"}`)
	p.pnext("events")
	p.send(`{"type":"lecture","op":"questions"}`)
	if qs := p.pnext("questions"); len(qs.Items) == 0 {
		t.Fatalf("no questions: %s", qs.raw)
	}
	p.send(`{"type":"lecture","op":"ask","question":0}`)
	q := p.pnext("question")
	answer := func(f *wsc) wsFrame {
		f.send(fmt.Sprintf(`{"type":"lecture","op":"answer","question":%d,"choice":0}`, q.ID))
		return f.next("answered", "error")
	}
	// New followers each time (no cookie): one place held on B, one on A.
	onB[0] = nil
	for k, n := range []*node{b, b, a} {
		// Free a place for the next follower: the share counts places too.
		for _, f := range onB[1:] {
			f.conn.Close()
		}
		onB = onB[:1]
		var f *wsc
		testwait.For(t, "a place", func() bool {
			f = join(t, n, p.code, 0).wsc
			if f.next("hello", "error").Type != "hello" {
				f.conn.Close()
				return false
			}
			return true
		})
		onB = append(onB, f)
		got := answer(f)
		if want := k < share; (got.Type == "answered") != want {
			t.Fatalf("answer %d: %s", k, got.raw)
		}
		if k >= share && !strings.Contains(got.Error, "share of the tally") {
			t.Fatalf("answer %d past the share: %s", k, got.raw)
		}
	}
}

// A page follows a lecture's compact stream (protocol 2): the places its followers
// hold on another server are reported every heartbeat all the same, so they do not
// lapse while they are held; once they are let go, an empty report gives them back.
func TestPlacesOfCompactFollowersAreReported(t *testing.T) {
	ns := startNATS(t)
	opts := web.Options{Lecture: lecture.Options{MaxFollowers: 50, FollowersPerClient: 2}}
	a, b := newNode(t, ns, opts), newNode(t, ns, opts)
	p := startLecture(t, a, "/play/ricart-agrawala?n=4")
	nc, err := nats.Connect(ns.url())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	reports := make(chan *nats.Msg, 1024)
	sub, err := nc.ChanSubscribe("playground.lecture."+p.code+".rpc.places", reports)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	f := dial(t, b, "/ws/lecture/"+p.code+"?proto=2")
	_ = f.conn.SetReadDeadline(time.Now().Add(testwait.Limit))
	if _, first, err := f.conn.ReadMessage(); err != nil || strings.Contains(string(first), `"type":"error"`) {
		t.Fatalf("a compact follower on B: %s %v", first, err)
	}
	drainWS(f)
	held := func(want int) func() bool {
		return func() bool {
			m := testwait.Recv(t, "a report of B's places", reports)
			var r request
			if err := json.Unmarshal(m.Data, &r); err != nil {
				t.Fatalf("a report: %s", m.Data)
			}
			return r.Places["127.0.0.1/32"] == want
		}
	}
	testwait.For(t, "B to report its compact follower's place", held(1))
	f.conn.Close()
	testwait.For(t, "B to report the place given back", held(0))
}

// drainWS reads what c receives until it closes, as a page keeps up.
func drainWS(c *wsc) {
	go func() {
		for {
			if _, _, err := c.conn.ReadMessage(); err != nil {
				return
			}
		}
	}()
}
