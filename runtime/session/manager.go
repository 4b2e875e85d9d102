package session

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"runtime"
	"sync"
)

// Manager holds the live sessions by id, under a cap. A session ends on its own after
// its idle time without subscribers, or when the manager closes; either way its
// goroutine is gone before Close returns.
type Manager struct {
	max    int
	opts   Options
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	byID    map[string]*Session
	evicted evictedRecipes // share.go: what Revive rebuilds
	closed  bool
}

// NewManager returns a manager allowing at most limit live sessions (at least 1),
// shared between clients as share.go says.
func NewManager(limit int, opts Options) *Manager {
	ctx, cancel := context.WithCancel(context.Background())
	return &Manager{max: max(limit, 1), opts: opts, ctx: ctx, cancel: cancel, byID: make(map[string]*Session)}
}

// Start creates a session running setup for no client in particular. It returns
// ErrFull at the cap when nobody may be evicted (share.go), ErrClosed after Close, or
// the kernel's error for a configuration that cannot run.
func (m *Manager) Start(setup Setup) (*Session, error) { return m.start("", newID(), setup, nil) }

// StartFor is Start on behalf of owner, a client key: the session counts against its
// share of the cap (share.go).
func (m *Manager) StartFor(owner string, setup Setup) (*Session, error) {
	return m.start(owner, newID(), setup, nil)
}

// start creates a session; prepare, if any, runs before its goroutine starts. The
// run is built outside the lock (a link's replay can take a moment); the cap is
// checked before, and again after, when a session may be evicted to make room.
func (m *Manager) start(owner, id string, setup Setup, prepare func(*Session) error) (*Session, error) {
	if err := m.room(owner); err != nil {
		return nil, err
	}
	setup.Config.Owner = owner // a source's steps share the sandbox's workers by it
	if m.opts.CPU != nil {
		runtime.LockOSThread() // the build is measured on its thread's CPU clock (cpu.go)
	}
	work := m.opts.CPU.Start()
	s, err := newSession(id, setup, m.opts)
	if err == nil && prepare != nil {
		err = prepare(s) // a revived run replays to its step
	}
	m.opts.CPU.Done(owner, work) // building the run is the client's work too (cpu.go)
	if m.opts.CPU != nil {
		runtime.UnlockOSThread()
	}
	if err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(m.ctx)
	s.shares.owner, s.shares.stop = owner, stop
	s.shares.used.Store(s.clock.Now().UnixNano())
	m.mu.Lock()
	victim, err := m.victimLocked(owner)
	if err != nil {
		m.mu.Unlock()
		stop()
		return nil, err
	}
	if victim != nil {
		delete(m.byID, victim.id) // the place is free now; its goroutine ends on its own
	}
	m.byID[s.id] = s
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer stop()
		s.run(ctx, func() { m.remove(s) })
	}()
	m.mu.Unlock()
	if victim != nil {
		m.keepRecipe(victim)
		victim.shares.stop()
		if m.opts.OnEvict != nil {
			m.opts.OnEvict(victim, victim.shares.viewers.Load() > 0)
		}
	}
	if m.opts.OnStart != nil {
		m.opts.OnStart(s)
	}
	return s, nil
}

// room reports, without evicting anything, whether owner could start a session.
func (m *Manager) room(owner string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, err := m.victimLocked(owner)
	return err
}

// remove forgets s, unless it was evicted and its id is no longer s.
func (m *Manager) remove(s *Session) {
	m.mu.Lock()
	if m.byID[s.id] == s {
		delete(m.byID, s.id)
	}
	m.mu.Unlock()
}

// Get returns the live session with this id.
func (m *Manager) Get(id string) (*Session, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.byID[id]
	return s, ok
}

// Len is the number of live sessions.
func (m *Manager) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.byID)
}

// Max is the cap on live sessions.
func (m *Manager) Max() int { return m.max }

// Close ends every session and waits until their goroutines have returned.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	m.cancel()
	m.wg.Wait()
}

// newID returns 128 random bits: the id is the capability to drive a session.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (it panics on a broken system)
	return base64.RawURLEncoding.EncodeToString(b[:])
}
