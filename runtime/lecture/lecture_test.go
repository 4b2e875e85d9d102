package lecture

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/teach-dist/playground/internal/testwait"
	"github.com/teach-dist/playground/runtime/protocol"
	"github.com/teach-dist/playground/runtime/session"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/scenarios"
)

func setup(t testing.TB, doc string) session.Setup {
	t.Helper()
	sc, err := scenarios.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := sc.Config()
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(sc)
	return session.Setup{Config: cfg, Scenario: raw}
}

// waitFrame reads a follower's frames until one satisfies ok.
// decodeFrame reads a frame as its type.
func decodeFrame(t *testing.T, b []byte) protocol.Frame {
	t.Helper()
	f, err := protocol.Decode(b)
	if err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return f
}

func waitFrame(t *testing.T, s *sink, ok func(stamped, []byte) bool) []byte {
	t.Helper()
	var got []byte
	testwait.For(t, "the frame", func() bool {
		for _, f := range s.take() {
			if ok(decode(t, f), f) {
				got = f
				return true
			}
		}
		return false
	})
	return got
}

func startLecture(t *testing.T, opts Options, doc string) (*Registry, *session.Session, *Lecture, *collector) {
	t.Helper()
	m := session.NewManager(4, session.Options{})
	t.Cleanup(m.Close)
	sess, err := m.Start(setup(t, doc))
	if err != nil {
		t.Fatal(err)
	}
	drv := newCollector() // the presenter's tab
	if err := sess.Attach(drv); err != nil {
		t.Fatal(err)
	}
	reg := NewRegistry(opts, NewMemory())
	t.Cleanup(reg.Close)
	l, token, err := reg.Start(sess, "")
	if err != nil {
		t.Fatal(err)
	}
	if again, tok, _ := reg.Start(sess, ""); again != l || tok != token {
		t.Fatal("a second start made a second lecture for the same run")
	}
	if got, ok := reg.ByToken(token); !ok || got != l {
		t.Fatal("the token does not find the lecture")
	}
	if _, ok := reg.ByToken(token + "x"); ok {
		t.Fatal("a forged token finds the lecture")
	}
	return reg, sess, l, drv
}

func drive(t *testing.T, sess *session.Session, drv *collector, cmds ...session.Command) {
	t.Helper()
	for _, c := range cmds {
		if err := sess.Do(drv, c); err != nil {
			t.Fatal(err)
		}
	}
}

// The catch-up log stays short: the lecture refreshes its checkpoint as the run goes
// on, so a late joiner starts near the present, not at step 0.
func TestCheckpointRefreshKeepsTheCatchUpShort(t *testing.T) {
	_, sess, l, drv := startLecture(t, Options{Refresh: 8}, `{"version":1,"algorithm":"token-ring","nodes":4,"seed":1}`)
	early := &sink{cap: 10_000}
	if _, err := l.Follow(0, early); err != nil {
		t.Fatal(err)
	}
	for range 100 {
		drive(t, sess, drv, session.Command{Kind: session.Step})
	}
	last := waitFrame(t, early, func(_ stamped, b []byte) bool {
		ev, ok := decodeFrame(t, b).(*protocol.Events)
		return ok && ev.Step == 100
	})
	// The lecture's goroutine asks for the refresh and the session's answers it in
	// turn, behind the steps already queued: on a busy machine they catch up later.
	testwait.For(t, "the checkpoint catching up with the run", func() bool { return l.stream.LogLen() < 8 })
	late := &sink{cap: 10_000}
	if _, err := l.Follow(0, late); err != nil {
		t.Fatal(err)
	}
	fs := late.take()
	first, end := decode(t, fs[0]), decode(t, fs[len(fs)-1])
	if first.Type != "hello" || end.Seq != decode(t, last).Seq {
		t.Fatalf("catch-up from %d (%s) to %d, the stream is at %d", first.Seq, first.Type, end.Seq, decode(t, last).Seq)
	}
	if n := len(fs); n > 8+4+8 {
		t.Fatalf("a late joiner replays %d frames (checkpoint every 8)", n)
	}
}

// A question whose run was changed behind the lecture's back (from another tab of the
// presenter's session) is withdrawn when the run reaches its step, not revealed with an
// answer that no longer holds.
func TestRevealChecksTheRunIsStillTheOneAnswered(t *testing.T) {
	_, sess, l, drv := startLecture(t, Options{}, `{"version":1,"algorithm":"ricart-agrawala","nodes":4,"seed":1}`)
	drive(t, sess, drv,
		session.Command{Kind: session.Act, Act: sim.ActionJSON{Do: "request", Node: new(0)}},
		session.Command{Kind: session.Act, Act: sim.ActionJSON{Do: "request", Node: new(2)}},
		session.Command{Kind: session.Step})
	f := &sink{cap: 10_000}
	if _, err := l.Follow(0, f); err != nil {
		t.Fatal(err)
	}
	waitStep(t, l, 1)
	qs, step, err := l.Questions(context.Background())
	if err != nil || len(qs) == 0 || step != 1 {
		t.Fatalf("questions at step %d: %v, %v", step, qs, err)
	}
	k := -1
	for i, q := range qs {
		if q.Kind == NextCS {
			k = i
		}
	}
	q, err := l.Ask(k)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Ask(k); err != ErrOpen {
		t.Fatalf("a second ask: %v", err)
	}
	if err := l.Answer("c1", "a", 1, 0); err != nil {
		t.Fatal(err)
	}
	if err := l.Answer("c1", "a", 1, 1); err != ErrAnswered {
		t.Fatalf("second answer: %v", err)
	}
	if err := l.Answer("c1", "b", 1, 99); err != ErrBadChoice {
		t.Fatalf("bad choice: %v", err)
	}
	// Another tab crashes the process that was to enter first: the future changes.
	winner := q.Choices[q.Answer]
	var id int
	for i := range 4 {
		if "P"+string(rune('0'+i)) == winner {
			id = i
		}
	}
	drive(t, sess, drv, session.Command{Kind: session.Act, Act: sim.ActionJSON{Do: "crash", Node: new(id)}})
	for range q.Reveal + 5 {
		drive(t, sess, drv, session.Command{Kind: session.Step})
	}
	got := waitFrame(t, f, func(_ stamped, b []byte) bool {
		q, ok := decodeFrame(t, b).(*protocol.Question)
		return ok && q.State != "open"
	})
	if q := decodeFrame(t, got).(*protocol.Question); q.State != "withdrawn" || !strings.Contains(q.Reason, "changed the run") || q.Answer != nil {
		t.Fatalf("after the run changed: %s", got)
	}
}

func waitStep(t *testing.T, l *Lecture, step int) {
	t.Helper()
	testwait.For(t, fmt.Sprintf("the lecture at step %d", step), func() bool { return l.Step() == step })
}

// Asking refuses a list made at another step: its answers are about another moment.
func TestAskRefusesStaleQuestions(t *testing.T) {
	_, sess, l, drv := startLecture(t, Options{}, `{"version":1,"algorithm":"token-ring","nodes":4,"seed":1}`)
	if _, _, err := l.Questions(context.Background()); err != nil {
		t.Fatal(err)
	}
	drive(t, sess, drv, session.Command{Kind: session.Step})
	waitStep(t, l, 1)
	if _, err := l.Ask(0); err != ErrStale {
		t.Fatalf("ask after a step: %v", err)
	}
	if _, err := l.Ask(7); err == nil {
		t.Fatal("asked a question not on the list")
	}
}

// The registry caps live lectures; an ended one frees its place and keeps its code.
func TestRegistryCapAndEnd(t *testing.T) {
	m := session.NewManager(4, session.Options{})
	defer m.Close()
	reg := NewRegistry(Options{Max: 1}, NewMemory())
	defer reg.Close()
	a, _ := m.Start(setup(t, `{"version":1,"algorithm":"bully","seed":1}`))
	b, _ := m.Start(setup(t, `{"version":1,"algorithm":"bully","seed":2}`))
	la, _, err := reg.Start(a, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := reg.Start(b, ""); err != ErrFull {
		t.Fatalf("over the cap: %v", err)
	}
	f := &sink{cap: 100}
	if _, err := la.Follow(0, f); err != nil {
		t.Fatal(err)
	}
	la.End("the presenter ended it")
	if ended, why, _ := la.Ended(); !ended || why != "the presenter ended it" {
		t.Fatalf("ended %v %q", ended, why)
	}
	if f.closed != Ended {
		t.Fatalf("the follower was closed with %d", f.closed)
	}
	if _, err := la.Follow(0, &sink{cap: 100}); err != ErrEnded {
		t.Fatalf("following an ended lecture: %v", err)
	}
	if got, ok := reg.ByCode(la.Code()); !ok || got != la {
		t.Fatal("an ended lecture's code no longer answers")
	}
	if _, _, err := reg.Start(b, ""); err != nil {
		t.Fatalf("the ended lecture still holds its place: %v", err)
	}
}
