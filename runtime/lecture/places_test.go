package lecture

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/teach-dist/playground/runtime/session"
	"github.com/teach-dist/playground/runtime/sim"
)

// openQuestion starts a lecture with a share of share places and answers per client
// and asks a question; it returns the lecture and the question's id.
func openQuestion(t *testing.T, share int) (*Lecture, int) {
	t.Helper()
	_, sess, l, drv := startLecture(t, Options{FollowersPerClient: share}, `{"version":1,"algorithm":"ricart-agrawala","nodes":4,"seed":1}`)
	drive(t, sess, drv,
		session.Command{Kind: session.Act, Act: sim.ActionJSON{Do: "request", Node: new(0)}},
		session.Command{Kind: session.Act, Act: sim.ActionJSON{Do: "request", Node: new(2)}},
		session.Command{Kind: session.Step})
	waitStep(t, l, 1)
	qs, _, err := l.Questions(context.Background())
	if err != nil || len(qs) == 0 {
		t.Fatalf("questions: %v, %v", qs, err)
	}
	if _, err := l.Ask(0); err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l, l.qid
}

// The answers one client gives to one question are at most its share, whatever it
// sends in between: answers to other question ids (which once started every count
// again), choices out of range, a follower answering twice. Refused answers cost
// nothing, and another client's answers are counted as before.
func TestAnswersPerClientCannotBeGamed(t *testing.T) {
	const share = 3
	type try struct {
		fid      string
		question int // relative to the open question's id
		choice   int
	}
	tests := []struct {
		name    string
		before  func(i int) []try // sent before the i-th real answer
		refused int               // how many bad answers in all
	}{
		{"the reset trick: an answer to another question between each", func(i int) []try {
			return []try{{"x", 1 + i, 0}, {"y", -1, 0}}
		}, 0},
		{"2000 bad choices from one socket", func(i int) []try {
			if i > 0 {
				return nil
			}
			out := make([]try, 2000)
			for k := range out {
				out[k] = try{"bad", 0, 99 + k}
			}
			return out
		}, 2000},
		{"answering twice", func(i int) []try {
			if i == 0 {
				return nil
			}
			return []try{{"f0", 0, 1}}
		}, 4*share - 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, q := openQuestion(t, share)
			counted, refused := 0, 0
			for i := range 4 * share {
				for _, b := range tt.before(i) {
					err := l.Answer("10.0.0.1", b.fid, q+b.question, b.choice)
					switch {
					case err == nil:
						counted++
					case errors.Is(err, ErrBadChoice), errors.Is(err, ErrNoQuestion), errors.Is(err, ErrAnswered):
						refused++
					default:
						t.Fatalf("a bad answer: %v", err)
					}
				}
				fid := "f" + string(rune('a'+i))
				if i == 0 {
					fid = "f0"
				}
				switch err := l.Answer("10.0.0.1", fid, q, 0); {
				case err == nil:
					counted++
				case errors.Is(err, ErrAnswerShare):
				default:
					t.Fatalf("answer %d: %v", i, err)
				}
			}
			if counted != share {
				t.Errorf("one client had %d answers counted, its share is %d", counted, share)
			}
			if tt.refused > 0 && refused != tt.refused {
				t.Errorf("%d bad answers refused, want %d", refused, tt.refused)
			}
			if err := l.Answer("10.0.0.2", "other", q, 0); err != nil {
				t.Errorf("another client's answer: %v", err)
			}
			l.mu.Lock()
			n := 0
			for _, c := range l.tally {
				n += c
			}
			l.mu.Unlock()
			if n != share+1 {
				t.Errorf("the tally holds %d answers, want %d", n, share+1)
			}
		})
	}
}

// Places are counted on the lecture's server for every server: its own followers'
// and those other servers take (TakeRemotePlace) or report (ReportPlaces). A report
// replaces what its server said before and lapses after its time.
func TestPlacesPerClientCountEveryServer(t *testing.T) {
	const share = 4
	l, _ := openQuestion(t, share)
	const c = "10.0.0.1"
	var release []func()
	for range 2 {
		r, err := l.TakePlace(c)
		if err != nil {
			t.Fatal(err)
		}
		release = append(release, r)
	}
	for range 2 {
		if err := l.TakeRemotePlace("b", c, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.TakePlace(c); !errors.Is(err, ErrPlaceShare) {
		t.Fatalf("a place past the share on this server: %v", err)
	}
	if err := l.TakeRemotePlace("c", c, time.Hour); !errors.Is(err, ErrPlaceShare) {
		t.Fatalf("a place past the share on a third server: %v", err)
	}
	if _, err := l.TakePlace("10.0.0.2"); err != nil {
		t.Fatalf("another client: %v", err)
	}
	// Server b's followers left: its report says so, and the places are free again.
	l.ReportPlaces("b", nil, time.Hour)
	if got := l.Held(c); got != 2 {
		t.Fatalf("after b's report: %d held, want 2", got)
	}
	release[0]()
	release[0]() // twice is once
	if got := l.Held(c); got != 1 {
		t.Fatalf("after a release: %d held, want 1", got)
	}
	// A report that has lapsed (its server went away) counts no more.
	l.ReportPlaces("d", map[string]int{c: share}, -time.Second)
	if got := l.Held(c); got != 1 {
		t.Fatalf("a lapsed report counts: %d held, want 1", got)
	}
	l.ReportPlaces("d", map[string]int{c: share - 1}, time.Hour)
	if _, err := l.TakePlace(c); !errors.Is(err, ErrPlaceShare) {
		t.Fatalf("with d's places: %v", err)
	}
}
