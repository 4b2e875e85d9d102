package web

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/teach-dist/playground/internal/testwait"
	"github.com/teach-dist/playground/runtime/explore"
	"github.com/teach-dist/playground/runtime/sandbox"
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

// lineOf returns the last line of the given type, nil when there is none.
func lineOf(lines []exploreLine, typ string) *exploreLine {
	var found *exploreLine
	for k := range lines {
		if lines[k].Type == typ {
			found = &lines[k]
		}
	}
	return found
}

// Bakery at its page's default size (four processes) is past any browser budget: the
// server predicts so from two and three processes, says so, and gives the verdict it
// has for three, where every property holds.
func TestExploreBakeryAtThePageDefaultsGivesTheVerdictAtThree(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	id := openSession(t, ts, "/play/bakery")
	_, lines, msg := postExplore(t, ts, id)
	if msg != "" {
		t.Fatal(msg)
	}
	resized, start, result := lineOf(lines, "resized"), lineOf(lines, "start"), lineOf(lines, "result")
	if resized == nil || resized.Nodes != 3 || resized.Asked != 4 || !strings.Contains(resized.Why, "4 processes would need about") {
		t.Fatalf("resized line %+v; want 3 processes instead of 4, and why", resized)
	}
	if start == nil || start.Nodes != 3 {
		t.Fatalf("start line %+v; want 3 processes", start)
	}
	if result == nil || result.Result.Result != explore.ResultOK || result.Result.Nodes != 3 || result.Result.States != 221935 {
		t.Fatalf("result %+v; want every property proved with 3 processes (221 935 states)", result)
	}
}

// Bully's growth speeds up (36, 837, 75 672 states for two, three and four
// processes; past 32 million at five): the server measures four, since three's growth
// says it is small, predicts five from three and four, and gives the verdict at four.
func TestExploreMeasuresAGrowthThatSpeedsUp(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	id := openSession(t, ts, "/play/bully?n=5")
	_, lines, msg := postExplore(t, ts, id)
	if msg != "" {
		t.Fatal(msg)
	}
	resized, result := lineOf(lines, "resized"), lineOf(lines, "result")
	if resized == nil || resized.Nodes != 4 || resized.Asked != 5 || !strings.Contains(resized.Why, "5 processes would need about 6,800,000 states") {
		t.Fatalf("resized line %+v; want 4 processes instead of 5, five predicted from three and four", resized)
	}
	if result == nil || result.Result.Result != explore.ResultOK || result.Result.Nodes != 4 || result.Result.States != 75672 {
		t.Fatalf("result %+v; want every property proved with 4 processes (75 672 states)", result)
	}
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
	// 35 states: the search uses the reductions Ricart-Agrawala declares (3 074 in
	// full, docs/explorer.md "Reductions").
	if last.Type != "result" || last.Result.Result != "ok" || last.Result.States != 35 || last.Result.Counterexample != nil {
		t.Fatalf("last line %+v", last)
	} // One worker per search, whatever the machine: the server's searches take at
	// most AtOnce cores together (web/explore.go).
	if last.Result.Workers != 1 {
		t.Errorf("the search ran %d workers, want 1", last.Result.Workers)
	}
}

func TestExploreRefusesWhatItCannotDo(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	big := openSession(t, ts, fmt.Sprintf("/play/ricart-agrawala?n=%d", ExploreNodes+1))
	if status, _, msg := postExplore(t, ts, big); status != http.StatusUnprocessableEntity || !strings.HasPrefix(msg, "nodes:") {
		t.Errorf("%d processes: %d %q", ExploreNodes+1, status, msg)
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
	e := newExplorations(ExploreLimits{}.withDefaults(), sandbox.Default())
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
	srv, ts := newTestServer(t, Options{Explore: ExploreLimits{Progress: time.Millisecond, MaxStates: 1 << 40, Timeout: time.Minute, AsAsked: true}})
	// Bakery with four processes, searched as asked: millions of states, far more than
	// a test waits for.
	id := openSession(t, ts, "/play/bakery?n=4")

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

// The page takes its Explore bound and budgets from the server's limits: the button
// carries the most processes (static/explore.js turns it off above) and the dialog
// states the budgets before a search starts.
func TestExplorePageSaysTheServersBounds(t *testing.T) {
	_, ts := newTestServer(t, Options{Explore: ExploreLimits{MaxStates: 1_234_567, MaxMemory: 64 << 20, Timeout: 7 * time.Second}})
	page := get(t, browser(t), ts.URL+"/play/ricart-agrawala?n=5")
	for _, want := range []string{
		fmt.Sprintf(`data-max-nodes="%d"`, ExploreNodes),
		"The server&#39;s budget for one search: 1,234,567 states, 64 MiB of memory (shared by the searches running at once), 7 s.",
	} {
		if !strings.Contains(page.body, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
}

// A search streams its progress (states, depth, rate) while it runs; cancelling it
// (the page's Cancel aborts the request) stops the search and frees its slot: with
// one slot on the server, a second session's search, queued behind it, starts.
func TestExploreProgressThenCancelFreesTheSlot(t *testing.T) {
	// No bound the first search reaches before the test cancels it (a GiB: some ten
	// seconds of search; it is cancelled at its first progress line).
	srv, ts := newTestServer(t, Options{Explore: ExploreLimits{AtOnce: 1, Share: 1, Progress: time.Millisecond, MaxStates: 1 << 40, MaxMemory: 1 << 30, Timeout: time.Hour, AsAsked: true}})
	// Bakery with the most processes the browser explores, searched as asked: far more
	// states than the test waits for.
	big := openSession(t, ts, fmt.Sprintf("/play/bakery?n=%d", ExploreNodes))
	small := openSession(t, ts, "/play/ricart-agrawala?n=2")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/api/sessions/"+big+"/explore", nil)
	req.Header.Set("X-Real-IP", "192.0.2.1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	var start, progress exploreLine
	for progress.Type != "progress" {
		var l exploreLine
		if err := dec.Decode(&l); err != nil {
			t.Fatalf("the stream ended before a progress line: %v", err)
		}
		switch l.Type {
		case "start":
			start = l
		case "progress":
			progress = l
		}
	}
	if start.Nodes != ExploreNodes || start.MaxStates != 1<<40 || start.MaxMemory != srv.opts.Explore.MaxMemory || start.Timeout != 3600 {
		t.Errorf("start line %+v does not carry the budgets", start)
	}
	if progress.States <= 0 || progress.Depth <= 0 || progress.StatesPerSecond <= 0 {
		t.Errorf("progress line %+v", progress)
	}

	// Another client's search waits for the one slot.
	second := streamExplore(t, ts, small, "198.51.100.1")
	if l := nextLine(t, second, "queued", "start"); l.Type != "queued" || l.Position != 1 {
		t.Fatalf("the second search did not wait for the slot: %+v", l)
	}
	cancel()
	// The slot is freed: the second search starts and finishes.
	nextLine(t, second, "start")
	if l := nextLine(t, second, "result", "error"); l.Type != "result" || l.Result.Result != "ok" {
		t.Fatalf("the second search after the cancel: %+v", l)
	}
	testwait.For(t, "the cancelled search counted", func() bool {
		return strings.Contains(get(t, browser(t), ts.URL+"/metrics").body, `playground_explorer_runs_total{outcome="cancelled"} 1`)
	})
}
