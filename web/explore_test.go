package web

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/teach-dist/playground/internal/testwait"
)

// postExplore starts the Explore action of a session and reads every line it streams.
func postExplore(t *testing.T, ts *httptest.Server, id string) (int, []exploreLine, string) {
	t.Helper()
	resp, err := http.Post(ts.URL+"/api/sessions/"+id+"/explore", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error string }
		_ = json.NewDecoder(resp.Body).Decode(&e)
		return resp.StatusCode, nil, e.Error
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/x-ndjson" {
		t.Fatalf("content type %q", ct)
	}
	var lines []exploreLine
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l exploreLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("not a JSON line: %s", sc.Text())
		}
		lines = append(lines, l)
	}
	return resp.StatusCode, lines, ""
}

func TestExploreFindsMaekawaDeadlockForThePage(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	id := openSession(t, ts, "/play/maekawa?n=3")
	status, lines, msg := postExplore(t, ts, id)
	if status != http.StatusOK || len(lines) < 2 {
		t.Fatalf("status %d (%s), %d lines", status, msg, len(lines))
	}
	if first := lines[0]; first.Type != "start" || first.Nodes != 3 || !strings.Contains(first.Workload, "every process asks") {
		t.Errorf("start line %+v", first)
	}
	last := lines[len(lines)-1]
	if last.Type != "result" || last.Result.Result != "violation" || last.Result.Property != "deadlock" {
		t.Fatalf("last line %+v", last)
	}
	cx := last.Result.Counterexample
	if cx == nil || !strings.HasPrefix(cx.Link, "/r/") {
		t.Fatalf("counterexample %+v", cx)
	}
	// The link opens the playground on the counterexample.
	if p := get(t, browser(t), ts.URL+cx.Link); p.status != http.StatusOK || !strings.Contains(p.body, "data-session=") {
		t.Fatalf("the counterexample link answers %d", p.status)
	}
	// The server counts the search by its outcome.
	if m := get(t, browser(t), ts.URL+"/metrics"); !strings.Contains(m.body, `playground_explorer_runs_total{outcome="violation"} 1`) {
		t.Fatal("/metrics does not count the explorer run")
	}
}

func TestExploreProvesRicartAgrawalaForThePage(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	id := openSession(t, ts, "/play/ricart-agrawala?n=3")
	_, lines, msg := postExplore(t, ts, id)
	if len(lines) == 0 {
		t.Fatal(msg)
	}
	last := lines[len(lines)-1]
	// 265 states: the search uses the reductions Ricart-Agrawala declares (3 074 in
	// full, docs/explorer.md "Reductions").
	if last.Type != "result" || last.Result.Result != "ok" || last.Result.States != 265 || last.Result.Counterexample != nil {
		t.Fatalf("last line %+v", last)
	}
}

func TestExploreRefusesWhatItCannotDo(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	big := openSession(t, ts, "/play/ricart-agrawala?n=5")
	if status, _, msg := postExplore(t, ts, big); status != http.StatusUnprocessableEntity || !strings.HasPrefix(msg, "nodes:") {
		t.Errorf("5 processes: %d %q", status, msg)
	}
	if status, _, _ := postExplore(t, ts, "nope"); status != http.StatusNotFound {
		t.Errorf("unknown session: %d", status)
	}
	resp, err := http.Get(ts.URL + "/api/sessions/" + big + "/explore")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d", resp.StatusCode)
	}
}

func TestExploreOneAtATimePerSession(t *testing.T) {
	e := newExplorations(ExploreLimits{}.withDefaults())
	if !e.start("a") {
		t.Fatal("first refused")
	}
	if e.start("a") {
		t.Fatal("a second search of the same session was let in")
	}
	if !e.start("b") {
		t.Fatal("another session refused")
	}
	e.done("a")
	if !e.start("a") {
		t.Fatal("refused after it finished")
	}
}

// A client that goes away cancels its search: the handler returns and the session may
// explore again.
func TestExploreStopsWhenTheClientGoesAway(t *testing.T) {
	srv, ts := newTestServer(t, Options{Explore: ExploreLimits{Progress: time.Millisecond, MaxStates: 1 << 40, Timeout: time.Minute}})
	// Four processes asking at any time: far more states than a test waits for.
	id := openSession(t, ts, "/play/ricart-agrawala?n=4")

	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/api/sessions/"+id+"/explore", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && !strings.Contains(sc.Text(), `"progress"`) {
	}
	cancel()
	resp.Body.Close()
	// The session is free again once the search has stopped.
	testwait.For(t, "the search stopping after the client left", func() bool {
		srv.exploring.mu.Lock()
		defer srv.exploring.mu.Unlock()
		return !srv.exploring.running[id]
	})
}
