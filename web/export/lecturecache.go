package export

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"

	"github.com/teach-dist/playground/scenarios"
)

// A lecture's followers all read the same run at the presenter's step, and a hall of
// them may ask for its export at once. The cache computes each export of each run once
// (the key is the run's share link: its recipe up to the presenter's step) and gives
// every follower the same bytes; those who ask while it is computed wait for it. Only
// the computation passes the gate, so a hall's requests cost one place.

// lectureCache is the lectures' exports, least recently used first out, bounded in
// bytes.
type lectureCache struct {
	max int64

	mu      sync.Mutex
	size    int64
	entries map[string]*cached
	order   []string // keys, least recently used first
	made    int64    // exports computed
}

// cached is one export: done is closed when the rest is set.
type cached struct {
	done   chan struct{}
	status int
	header http.Header
	body   []byte
}

func newLectureCache(max int64) *lectureCache {
	return &lectureCache{max: max, entries: map[string]*cached{}}
}

func (c *lectureCache) computed() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.made
}

// serve answers r with the kind of export of j, computing it with compute if no
// follower did yet. A run that cannot be named by a link is computed each time.
func (c *lectureCache) serve(w http.ResponseWriter, r *http.Request, kind string, j job, compute http.HandlerFunc) {
	l, err := scenarios.LinkFromRun(j.rec.Setup.Scenario, j.rec.Setup.Config, j.rec.Interventions, j.rec.Step)
	var path string
	if err == nil {
		path, err = l.Path()
	}
	if err != nil {
		c.count()
		compute(w, r)
		return
	}
	q := r.URL.Query()
	key := kind + " " + path + " step=" + q.Get("step") + " download=" + q.Get("download")
	c.mu.Lock()
	e, found := c.entries[key]
	if found {
		c.touch(key)
	} else {
		e = &cached{done: make(chan struct{})}
		c.entries[key] = e
		c.order = append(c.order, key)
		c.made++
	}
	c.mu.Unlock()
	if !found {
		c.fill(key, e, r, compute)
	}
	select {
	case <-e.done:
	case <-r.Context().Done():
		return
	}
	h := w.Header()
	for k, v := range e.header {
		h[k] = v
	}
	w.WriteHeader(e.status)
	_, _ = w.Write(e.body)
}

func (c *lectureCache) count() {
	c.mu.Lock()
	c.made++
	c.mu.Unlock()
}

// fill computes e. The computation is the lecture's, not this follower's: it goes on
// if the follower leaves (others may be waiting) within the gate's time limit. A
// refusal or a failure is given to those waiting and not kept.
func (c *lectureCache) fill(key string, e *cached, r *http.Request, compute http.HandlerFunc) {
	// The response is kept in memory, bounded by the export's budget.
	rec := httptest.NewRecorder()
	defer func() {
		e.status, e.header, e.body = rec.Code, rec.Header(), rec.Body.Bytes()
		if p := recover(); p != nil {
			e.status, e.body = http.StatusInternalServerError, []byte("the export failed\n")
		}
		c.mu.Lock()
		if e.status == http.StatusOK && int64(len(e.body)) <= c.max {
			c.size += int64(len(e.body))
			c.evict()
		} else {
			c.remove(key)
		}
		c.mu.Unlock()
		close(e.done)
	}()
	compute(rec, r.WithContext(context.WithoutCancel(r.Context())))
}

// touch makes key the most recently used.
func (c *lectureCache) touch(key string) {
	for i, k := range c.order {
		if k == key {
			c.order = append(append(c.order[:i:i], c.order[i+1:]...), key)
			return
		}
	}
}

func (c *lectureCache) remove(key string) {
	for i, k := range c.order {
		if k == key {
			c.order = append(c.order[:i:i], c.order[i+1:]...)
			break
		}
	}
	delete(c.entries, key)
}

// evict drops the least recently used finished exports until the cache fits.
func (c *lectureCache) evict() {
	for i := 0; c.size > c.max && i < len(c.order); {
		k := c.order[i]
		e := c.entries[k]
		select {
		case <-e.done:
			c.size -= int64(len(e.body))
			c.remove(k)
		default: // still being computed (the one just filled is not done yet either)
			i++
		}
	}
}
