package export

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/teach-dist/playground/runtime/session"
	"github.com/teach-dist/playground/scenarios"
	"github.com/teach-dist/playground/web/runs"
)

// A long timeline is cut at a batch boundary and says so.
func TestTimelineIsCapped(t *testing.T) {
	sc, err := scenarios.Parse([]byte(`{"version":1,"algorithm":"ricart-agrawala","nodes":4,"seed":2,
		"events":[{"at":0,"do":"request","node":0},{"at":0,"do":"request","node":1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	setup, err := runs.SetupOf(sc, "")
	if err != nil {
		t.Fatal(err)
	}
	rec := session.Recipe{Setup: setup, Config: setup.Config, Step: 7, Horizon: 7}
	for _, tc := range []struct {
		limit     int
		truncated bool
	}{{5, true}, {50_000, false}} {
		var buf bytes.Buffer
		if err := timelineJSON(&buf, rec, tc.limit, unbounded()); err != nil {
			t.Fatal(err)
		}
		b := buf.Bytes()
		var tl struct {
			Truncated bool
			Batches   []struct{ Events []json.RawMessage }
		}
		if err := json.Unmarshal(b, &tl); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, x := range tl.Batches {
			n += len(x.Events)
		}
		if tl.Truncated != tc.truncated {
			t.Fatalf("limit %d: truncated %v with %d events in %d batches", tc.limit, tl.Truncated, n, len(tl.Batches))
		}
		if tc.truncated && (n < tc.limit || n-len(tl.Batches[len(tl.Batches)-1].Events) >= tc.limit) {
			t.Fatalf("limit %d: cut after %d events in %d batches, not at the batch that reached it", tc.limit, n, len(tl.Batches))
		}
	}
}
