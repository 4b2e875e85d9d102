package web

import (
	"io"
	"net/http"
	"testing"
)

// A ShiViz log streams while its run replays: a run that fails once bytes have gone
// out (here the event limit, as heartbeats never stop) breaks the response off, so no
// client takes the cut log for a whole one.
func TestShiVizOfARunThatCannotReplayIsNeverWhole(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	code := deflatedCode(1, "bully", `{"scenario":{"version":1,"algorithm":"bully","seed":1,"params":{"heartbeat":{"period":6,"timeout":3}}},"step":1000000}`)
	resp, err := http.Get(ts.URL + "/r/" + code + "/shiviz")
	if err != nil {
		return // broken off before the headers
	}
	defer resp.Body.Close()
	if _, err := io.ReadAll(resp.Body); err == nil && resp.StatusCode == http.StatusOK {
		t.Fatal("a run that reached the event limit was served whole, 200")
	}
}
