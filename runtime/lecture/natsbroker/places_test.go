package natsbroker

import (
	"fmt"
	"strings"
	"testing"

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
