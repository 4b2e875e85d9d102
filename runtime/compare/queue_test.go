package compare

import (
	"context"
	"net/url"
	"testing"

	"github.com/teach-dist/playground/internal/testwait"
)

// A client looping heavy comparisons on every slot does not make a second client's
// wait: the second is told it is next and runs before the looper's next comparison
// (issue 15: 16 loops made a trivial compare take 26-29 s or fail with 503). The
// comparisons are held by a gate.
func TestCompareQueueServesASecondClientBeforeTheLooper(t *testing.T) {
	e := New(Options{Slots: 2})
	started := make(chan string, 8)
	gate := make(chan struct{})
	e.work = func(ctx context.Context, cq Query) (*Result, error) {
		started <- cq.Canonical()
		select {
		case <-gate:
		case <-ctx.Done():
		}
		return &Result{Query: cq}, nil
	}
	query := func(n string) Query {
		cq, err := ParseQuery(url.Values{"alg": {"central"}, "n": {n}}, e.Limits())
		if err != nil {
			t.Fatal(err)
		}
		return cq
	}
	type answer struct {
		client string
		err    error
	}
	done := make(chan answer, 8)
	positions := map[string]chan int{"looper": make(chan int, 16), "student": make(chan int, 16)}
	ask := func(client, n string) {
		go func() {
			_, err := e.CompareFor(context.Background(), client, query(n), func(p int) { positions[client] <- p })
			done <- answer{client, err}
		}()
	}
	ask("looper", "3")
	ask("looper", "4")
	testwait.Recv(t, "the looper's first", started)
	testwait.Recv(t, "the looper's second", started)
	ask("looper", "5") // its next, queued first
	if p := testwait.Recv(t, "the looper's place", positions["looper"]); p != 1 {
		t.Fatalf("the looper's next is at %d, want 1", p)
	}
	ask("student", "6")
	if p := testwait.Recv(t, "the student's place", positions["student"]); p != 1 {
		t.Fatalf("the student is at %d, want 1 (next)", p)
	}
	gate <- struct{}{}
	if got := testwait.Recv(t, "the next comparison", started); got != query("6").Canonical() {
		t.Fatalf("the freed slot ran %s, want the student's", got)
	}
	close(gate)
	for range 4 {
		if a := testwait.Recv(t, "an answer", done); a.err != nil {
			t.Fatalf("%s: %v", a.client, a.err)
		}
	}
}
