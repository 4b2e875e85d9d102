package session

import (
	"context"
	"errors"
	"testing"

	"github.com/teach-dist/playground/internal/testwait"
)

// A full manager evicts before it refuses: unwatched sessions first, then the
// watched sessions of a client over its share while another client is under its own.
func TestFullManagerEvictsBeforeItRefuses(t *testing.T) {
	type start struct {
		owner   string
		watched bool
		err     error // want
	}
	a := func(watched bool) start { return start{"A", watched, nil} }
	for _, c := range []struct {
		name   string
		starts []start
		held   map[string]int
	}{
		{"unwatched places of one client go to another", []start{a(false), a(false), a(false), a(false), {"B", true, nil}},
			map[string]int{"A": 3, "B": 1}},
		{"watched places over a share go to a client under it", []start{a(true), a(true), a(true), a(true), {"B", true, nil}, {"B", true, nil}, {"B", true, ErrFull}},
			map[string]int{"A": 2, "B": 2}},
		{"a client at its share cannot take another's unwatched page", []start{a(true), a(true), a(true), {"B", false, nil}, {"A", true, ErrFull}},
			map[string]int{"A": 3, "B": 1}},
		{"one client alone may fill the server", []start{a(true), a(true), a(true), a(true), {"A", true, ErrFull}},
			map[string]int{"A": 4}},
		{"one client alone refreshes its own unwatched places", []start{a(true), a(false), a(true), a(true), a(true)},
			map[string]int{"A": 4}},
	} {
		t.Run(c.name, func(t *testing.T) {
			evicted := 0
			m := NewManager(4, Options{OnEvict: func(*Session, bool) { evicted++ }})
			t.Cleanup(m.Close)
			started := 0
			for i, st := range c.starts {
				s, err := m.StartFor(st.owner, setupOf(t, ra3))
				if !errors.Is(err, st.err) {
					t.Fatalf("start %d for %s: %v, want %v", i, st.owner, err, st.err)
				}
				if err != nil {
					continue
				}
				started++
				if st.watched {
					sub := newSub()
					if err := s.Attach(sub); err != nil {
						t.Fatal(err)
					}
					sub.next(t, "snapshot") // counted as watched before the snapshot is sent
				}
			}
			for o, n := range c.held {
				if got := m.Held(o); got != n {
					t.Errorf("%s holds %d, want %d", o, got, n)
				}
			}
			if m.Len() != 4 || evicted != started-4 {
				t.Errorf("%d live, %d evicted of %d started; want 4 live, the rest evicted", m.Len(), evicted, started)
			}
		})
	}
}

// An unwatched session evicted for another client is rebuilt from its recipe, at its
// step and under its id, when its own client comes back; nobody else can revive it.
func TestEvictedSessionIsRevivedFromItsRecipe(t *testing.T) {
	m := NewManager(1, Options{})
	t.Cleanup(m.Close)
	a, err := m.StartFor("A", setupOf(t, ra3))
	if err != nil {
		t.Fatal(err)
	}
	sub := newSub()
	if err := a.Attach(sub); err != nil {
		t.Fatal(err)
	}
	sub.next(t, "snapshot")
	requestAndStep(t, a, sub, 0, 5)
	want, err := a.Recipe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	a.Detach(sub)
	testwait.For(t, "the viewer gone", func() bool { return a.shares.viewers.Load() == 0 })
	if _, err := m.StartFor("B", setupOf(t, ra3)); err != nil {
		t.Fatalf("B on a server A's unwatched run fills: %v", err)
	}
	testwait.Recv(t, "A's run ended", a.Done())
	if _, ok := m.Revive("B", a.ID()); ok {
		t.Fatal("another client revived A's run")
	}
	// A comes back: B's run is unwatched now, so it makes room.
	back, ok := m.Revive("A", a.ID())
	if !ok || back.ID() != a.ID() {
		t.Fatalf("A's run was not revived under its id: %v", ok)
	}
	got, err := back.Recipe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got.Step != want.Step || len(got.Interventions) != len(want.Interventions) || got.Step == 0 {
		t.Fatalf("revived at step %d with %d interventions; want step %d with %d", got.Step, len(got.Interventions), want.Step, len(want.Interventions))
	}
}
