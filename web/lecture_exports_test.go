package web

import (
	"io"
	"net/http"
	"sync"
	"testing"
)

// A hall of followers asking for the lecture's exports at once costs one replay per
// export and presenter step, not one per follower: they all get the same bytes.
func TestLectureExportsAreComputedOncePerStep(t *testing.T) {
	rig := startLecture(t, Options{}, "/play/ricart-agrawala?n=5")
	rig.drive(t, `{"type":"act","do":"request","node":1}`)
	rig.drive(t, steps(6)...)
	api := rig.ts.URL + "/api/lectures/" + rig.code
	exports := []string{"/trace", "/shiviz", "/timeline", "/metrics"}
	const followers = 30
	hall := func() {
		t.Helper()
		var wg sync.WaitGroup
		bodies := make([][]string, followers)
		for f := range followers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := browser(t)
				for _, e := range exports {
					resp, err := c.Get(api + e)
					if err != nil {
						t.Error(err)
						return
					}
					b, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					if err != nil {
						t.Error(err)
						return
					}
					if resp.StatusCode != http.StatusOK {
						t.Errorf("%s: %d %s", e, resp.StatusCode, b)
					}
					bodies[f] = append(bodies[f], string(b))
				}
			}()
		}
		wg.Wait()
		for f := range bodies {
			for k := range bodies[f] {
				if bodies[f][k] != bodies[0][k] {
					t.Fatalf("follower %d got another %s than follower 0", f, exports[k])
				}
			}
		}
	}
	hall()
	if n := rig.srv.exports.Replays(); n != int64(len(exports)) {
		t.Fatalf("%d followers asking for %d exports: %d replays, want %d", followers, len(exports), n, len(exports))
	}
	// The presenter moves on: the next hall's exports are the new step's, once each.
	rig.drive(t, steps(2)...)
	hall()
	if n := rig.srv.exports.Replays(); n != 2*int64(len(exports)) {
		t.Fatalf("after the presenter stepped: %d replays, want %d", n, 2*len(exports))
	}
}
