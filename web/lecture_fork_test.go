package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/teach-dist/playground/internal/testwait"
	"github.com/teach-dist/playground/runtime/lecture"

	"github.com/teach-dist/playground/runtime/protocol"
)

// forkRig is a lecture with a question to ask, and a fork of it made before the
// question opens, connected as its page would be.
type forkRig struct {
	*lectureRig
	fork   *wsClient
	id     string // the fork's session
	at     int    // the presenter's step
	reveal int    // the open question's reveal step
}

// startFork starts a lecture at step at (with requests made, so the questions have
// something to ask) and forks it at step from, in a browser of its own.
func startFork(t *testing.T, at, from int) *forkRig {
	t.Helper()
	rig := startLecture(t, Options{}, "/play/ricart-agrawala?n=4")
	rig.drive(t, `{"type":"act","do":"request","node":0}`, `{"type":"act","do":"request","node":2}`)
	if f := rig.drive(t, steps(at)...); f.Step != at && at > 0 {
		t.Fatalf("presenter at step %d, want %d", f.Step, at)
	}
	page := get(t, browser(t), fmt.Sprintf("%s/l/%s/fork?step=%d", rig.ts.URL, rig.code, from))
	if page.status != http.StatusOK {
		t.Fatalf("fork: %d %s", page.status, page.body)
	}
	id := sessionOf(t, page)
	fork := dial(t, rig.ts, id)
	if s := fork.next("snapshot"); s.Step != from {
		t.Fatalf("the fork opens at step %d, want %d", s.Step, from)
	}
	return &forkRig{lectureRig: rig, fork: fork, id: id, at: at}
}

// ask opens the presenter's first question revealed at step reveal or later, and
// keeps its reveal step.
func (fr *forkRig) ask(t *testing.T, reveal int) {
	t.Helper()
	for i := 0; ; i++ {
		// Asking uses up the list: each try asks for it again.
		fr.presenter.send(`{"type":"lecture","op":"questions"}`)
		if qs := fr.pnext(t, "questions"); i >= len(qs.Items) {
			t.Fatalf("no question at step %d is revealed at step %d or later: %s", fr.at, reveal, qs.raw)
		}
		fr.presenter.send(fmt.Sprintf(`{"type":"lecture","op":"ask","question":%d}`, i))
		q := fr.pnext(t, "question")
		if q.State != "open" || q.Reveal == nil || *q.Reveal <= fr.at {
			t.Fatalf("asked at step %d: %s", fr.at, q.raw)
		}
		if *q.Reveal >= reveal {
			fr.reveal = *q.Reveal
			return
		}
		fr.presenter.send(`{"type":"lecture","op":"withdraw"}`)
		fr.pnext(t, "question")
	}
}

// held sends cmd to the fork and expects it held at the presenter's step: the frame
// of the step it stops at (of one of types), then the error saying why.
func (fr *forkRig) held(t *testing.T, cmd string, types ...string) {
	t.Helper()
	fr.fork.send(cmd)
	if len(types) > 0 {
		f := fr.fork.next(types...)
		for f.Playing { // play says it plays before it stops
			f = fr.fork.next(types...)
		}
		if f.Step != fr.at {
			t.Fatalf("%s: the fork stops at step %d, want the presenter's %d: %s", cmd, f.Step, fr.at, f.raw)
		}
	}
	e := fr.fork.next("error")
	want := fmt.Sprintf("this fork waits at step %d until the answer is revealed", fr.at)
	if e.Code != protocol.CodeQuestionOpen || !strings.Contains(e.Error, want) {
		t.Fatalf("%s: %s, want %s: %q", cmd, e.raw, protocol.CodeQuestionOpen, want)
	}
}

// revealed reveals the open question and waits until the presenter sees it.
func (fr *forkRig) revealed(t *testing.T) {
	t.Helper()
	fr.presenter.send(`{"type":"lecture","op":"reveal"}`)
	for q := fr.pnext(t, "question"); q.State != "revealed"; q = fr.pnext(t, "question") {
	}
}

// A fork made before the question opened cannot step, play or seek past the
// presenter's step while it is open; after the reveal it goes on.
func TestLectureForkWaitsAtThePresentersStep(t *testing.T) {
	tests := []struct {
		name  string
		from  int    // the fork's step
		ahead int    // steps the fork goes ahead of the presenter, and back, before the question
		cmd   string // what the fork asks while the question is open
		stops string // the frame that shows where it stopped (none: it does not move)
	}{
		{"step", 3, 0, `{"type":"step","ref":1}`, "state"},
		{"step after going ahead", 3, 4, `{"type":"step","ref":1}`, "state"},
		{"play", 0, 0, `{"type":"play","ref":1}`, "state"},
		{"seek", 1, 6, `{"type":"seek","step":40,"ref":1}`, "snapshot"},
		{"act", 3, 0, `{"type":"act","do":"request","node":1,"ref":1}`, ""}, // refused, unchanged
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fr := startFork(t, 3, tt.from)
			if tt.ahead > 0 {
				for range fr.at + tt.ahead - tt.from {
					fr.fork.send(`{"type":"step"}`)
					fr.fork.next("events")
				}
				fr.fork.send(fmt.Sprintf(`{"type":"seek","step":%d}`, tt.from))
				fr.fork.next("snapshot")
			}
			fr.ask(t, 0)
			if tt.name == "play" { // fast, so that it reaches the bound at once
				fr.fork.send(`{"type":"speed","speed":16}`)
				fr.fork.next("state")
			}
			var stops []string
			if tt.stops != "" {
				stops = []string{tt.stops}
			}
			fr.held(t, tt.cmd, stops...)
			fr.revealed(t)
			fr.fork.send(`{"type":"step"}`)
			if f := fr.fork.next("events", "error"); f.Type != "events" || f.Step <= fr.at {
				t.Fatalf("after the reveal the fork does not go on: %s", f.raw)
			}
		})
	}
}

// The bound follows the presenter: as the presenter steps on towards the reveal, the
// fork may go as far, and no further; its exports stop there too while the question
// is open.
func TestLectureForkBoundFollowsThePresenter(t *testing.T) {
	fr := startFork(t, 2, 2)
	// Ahead of the presenter before the question: the fork's timeline reaches step 9.
	for range 7 {
		fr.fork.send(`{"type":"step"}`)
		fr.fork.next("events")
	}
	fr.fork.send(`{"type":"seek","step":2}`)
	fr.fork.next("snapshot")
	traces := fr.traces(t, 9)
	if traces[2] == traces[9] {
		t.Fatal("the traces do not tell steps apart")
	}
	fr.ask(t, 4)
	for fr.at+1 < fr.reveal {
		fr.exportsStopAt(t, fr.at, traces)
		fr.held(t, `{"type":"seek","step":9}`, "snapshot")
		fr.drive(t, `{"type":"step"}`)
		fr.at++
		// The lecture hears its presenter's step through its broker: wait for it.
		testwait.For(t, "the lecture to follow the presenter", func() bool { return fr.lecture(t).Step() == fr.at })
		fr.fork.send(`{"type":"seek","step":` + fmt.Sprint(fr.at) + `}`)
		if s := fr.fork.next("snapshot", "error"); s.Type != "snapshot" || s.Step != fr.at {
			t.Fatalf("the fork cannot follow the presenter to step %d: %s", fr.at, s.raw)
		}
		fr.held(t, `{"type":"step"}`, "state")
	}
	fr.revealed(t)
	fr.exportsStopAt(t, 9, traces)
	fr.fork.send(`{"type":"seek","step":9}`)
	if s := fr.fork.next("snapshot", "error"); s.Step != 9 {
		t.Fatalf("after the reveal the fork does not seek to its horizon: %s", s.raw)
	}
}

// traces are the fork's trace export at each step, taken before any bound.
func (fr *forkRig) traces(t *testing.T, upTo int) []string {
	t.Helper()
	out := make([]string, upTo+1)
	for k := range out {
		out[k] = fr.trace(t, k)
	}
	return out
}

func (fr *forkRig) trace(t *testing.T, step int) string {
	t.Helper()
	p := get(t, browser(t), fmt.Sprintf("%s/api/sessions/%s/trace?step=%d", fr.ts.URL, fr.id, step))
	if p.status != http.StatusOK {
		t.Fatalf("trace: %d %s", p.status, p.body)
	}
	return p.body
}

// exportsStopAt checks that the fork's trace and timeline end at step want, however
// far they are asked to go: the trace is the one taken at step want (traces).
func (fr *forkRig) exportsStopAt(t *testing.T, want int, traces []string) {
	t.Helper()
	if got := fr.trace(t, 40); got != traces[want] {
		t.Fatalf("the fork's trace asked at step 40 is not the one of step %d:\n%s", want, got)
	}
	var tl struct{ Horizon int }
	if p := get(t, browser(t), fr.ts.URL+"/api/sessions/"+fr.id+"/timeline"); json.Unmarshal([]byte(p.body), &tl) != nil || tl.Horizon != want {
		t.Fatalf("the fork's timeline: %d %.200s, want horizon %d", p.status, p.body, want)
	}
}

// lecture is the rig's lecture on its server.
func (fr *forkRig) lecture(t *testing.T) *lecture.Lecture {
	t.Helper()
	l, ok := fr.srv.lectures.ByCode(fr.code)
	if !ok {
		t.Fatal("the lecture is gone")
	}
	return l
}
