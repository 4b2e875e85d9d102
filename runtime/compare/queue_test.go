package compare

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/teach-dist/playground/internal/testwait"
)

// A client looping heavy comparisons on every slot does not make a second client's
// wait: the second is told it is next and runs before the looper's next comparison
// (without the queue, 16 loops made a trivial compare take 26-29 s or fail with 503). The
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
	// place is the next place in the queue a client hears (0, "running", skipped).
	place := func(client string) int {
		for {
			if p := testwait.Recv(t, client+"'s place", positions[client]); p != 0 {
				return p
			}
		}
	}
	ask("looper", "5") // its next, queued first
	if p := place("looper"); p != 1 {
		t.Fatalf("the looper's next is at %d, want 1", p)
	}
	ask("student", "6")
	if p := place("student"); p != 1 {
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

// A comparison that must wait is a job: Submit answers with its place at once, a
// second Submit of the same query finds the same job, and the result comes from it.
func TestSubmitReportsThePlaceAndSharesTheJob(t *testing.T) {
	e := New(Options{Slots: 1})
	t.Cleanup(e.Close)
	gate := make(chan struct{})
	runs := make(chan string, 8)
	e.work = func(ctx context.Context, cq Query) (*Result, error) {
		runs <- cq.Canonical()
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return &Result{Query: cq}, nil
	}
	q := func(n string) Query {
		cq, err := ParseQuery(url.Values{"alg": {"central"}, "n": {n}}, e.Limits())
		if err != nil {
			t.Fatal(err)
		}
		return cq
	}
	ctx := context.Background()
	if st := e.Submit(ctx, "A", q("3"), 0); st.Result != nil || st.Err != nil {
		t.Fatalf("a gated comparison answered: %+v", st)
	}
	testwait.Recv(t, "A's comparison running", runs)
	if st := e.Submit(ctx, "A", q("3"), 0); st.Position != 0 || st.Result != nil {
		t.Fatalf("the running comparison: %+v, want running (place 0)", st)
	}
	e.Submit(ctx, "B", q("4"), 0)
	testwait.For(t, "B's comparison queued", func() bool { return e.queue.Waiting() == 1 })
	for _, client := range []string{"B", "C"} { // C opens the same link: the same job
		if st := e.Submit(ctx, client, q("4"), 0); st.Position != 1 {
			t.Fatalf("%s: %+v, want place 1", client, st)
		}
	}
	if e.queue.Waiting() != 1 {
		t.Fatalf("%d comparisons waiting, want the one job", e.queue.Waiting())
	}
	close(gate)
	for _, n := range []string{"3", "4"} {
		st := e.Submit(ctx, "C", q(n), time.Minute)
		if st.Err != nil || st.Result == nil || st.Result.Query.Canonical() != q(n).Canonical() {
			t.Fatalf("n=%s: %+v", n, st)
		}
	}
}
