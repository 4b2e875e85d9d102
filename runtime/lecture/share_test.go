package lecture

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/teach-dist/playground/runtime/session"
)

// A full registry ends a lecture of a client over its share (one whose presenter is
// away first) before it refuses a client under its share; a client at its share is
// refused, and so is everyone once no client is over its share. One client may fill
// the registry while nobody else asks.
func TestFullRegistryEndsALectureOfAClientOverItsShare(t *testing.T) {
	m := session.NewManager(16, session.Options{})
	defer m.Close()
	var mu sync.Mutex
	var evicted []string
	reg := NewRegistry(Options{Max: 4, Share: 2, OnEvict: func(code string) {
		mu.Lock()
		defer mu.Unlock()
		evicted = append(evicted, code)
	}}, NewMemory())
	defer reg.Close()
	start := func(client string) (*Lecture, error) {
		t.Helper()
		sess, err := m.Start(setup(t, fmt.Sprintf(`{"version":1,"algorithm":"bully","seed":%d}`, m.Len()+1)))
		if err != nil {
			t.Fatal(err)
		}
		l, _, err := reg.Start(sess, client)
		return l, err
	}

	var hogs []*Lecture // client "a" alone: it may take every place
	for range 4 {
		l, err := start("a")
		if err != nil {
			t.Fatalf("a's lecture %d on a registry nobody else uses: %v", len(hogs), err)
		}
		hogs = append(hogs, l)
	}
	// a presents two of them; the other two have no presenter connected.
	hogs[0].AddPresenter(&counter{})
	hogs[1].AddPresenter(&counter{})
	f := &sink{cap: 1000}
	if _, err := hogs[2].Follow(0, f); err != nil {
		t.Fatal(err)
	}
	if _, err := start("a"); !errors.Is(err, ErrFull) {
		t.Fatalf("a's fifth lecture on a full registry: %v, want ErrFull", err)
	}

	// b is under its share: each of its two lectures ends one of a's without a presenter.
	for k := range 2 {
		if _, err := start("b"); err != nil {
			t.Fatalf("b's lecture %d: %v", k, err)
		}
	}
	for k, l := range hogs {
		ended, why, _ := l.Ended()
		if want := k >= 2; ended != want || (ended && why != evictedWhy) {
			t.Errorf("a's lecture %d (presented: %v): ended %v (%q), want ended %v", k, k < 2, ended, why, want)
		}
	}
	f.mu.Lock()
	if f.closed != Ended {
		t.Errorf("the evicted lecture's follower was closed with %d, want Ended", f.closed)
	}
	f.mu.Unlock()
	mu.Lock()
	if len(evicted) != 2 {
		t.Errorf("OnEvict heard %v, want the two codes", evicted)
	}
	mu.Unlock()

	// a and b at their share: nobody is over it, so b, a and a newcomer c are refused.
	for _, client := range []string{"b", "a", "c"} {
		if _, err := start(client); !errors.Is(err, ErrFull) {
			t.Errorf("%s on a full registry of shares: %v, want ErrFull", client, err)
		}
	}
	if reg.Live() != 4 {
		t.Fatalf("%d live lectures, want 4", reg.Live())
	}
}
