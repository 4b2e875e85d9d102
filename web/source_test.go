package web

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/teach-dist/playground/algorithms/starlarkalg"
	"github.com/teach-dist/playground/scenarios"
	"github.com/teach-dist/playground/web/ratelimit"
)

// resetWithSource is a reset frame whose scenario runs source on three processes, two
// of which ask for the CS at once.
func resetWithSource(t *testing.T, source string) string {
	t.Helper()
	sc := map[string]any{"version": 2, "algorithm": "ricart-agrawala", "nodes": 3, "seed": 1, "source": source,
		"events": []map[string]any{{"at": 1, "do": "request", "node": 0}, {"at": 1, "do": "request", "node": 1}}}
	b, err := json.Marshal(map[string]any{"type": "reset", "ref": 7, "scenario": sc})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func lineIn(src, needle string) int {
	return strings.Count(src[:strings.Index(src, needle)], "\n") + 1
}

// Edited rules reach the session through the reset frame: a source that does not load
// gets an error at its line and the run goes on with the rules it had; one that loads
// runs (the hello carries it, for links); one that fails during the run stops it with
// the line, which the state frame carries for the editor.
func TestWSEditedRulesRunOrSayTheirLine(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	c := dial(t, ts, openSession(t, ts, "/play/ricart-agrawala"))
	c.next("snapshot")
	template, ok := starlarkalg.Template("ricart-agrawala")
	if !ok {
		t.Fatal("no template")
	}

	bad := strings.Replace(template, `ctx.rule("RR1")`, `ctx.rule("RR1"))`, 1)
	c.send(resetWithSource(t, bad))
	f := c.next("error")
	var e struct {
		Code string
		Line int
		Ref  int64
	}
	_ = json.Unmarshal([]byte(f.raw), &e)
	if e.Code != "bad-scenario" || e.Ref != 7 || e.Line != lineIn(bad, `ctx.rule("RR1"))`) || !strings.Contains(f.Error, "source: line") {
		t.Fatalf("a syntax error: %s, want bad-scenario at line %d", f.raw, lineIn(bad, `ctx.rule("RR1"))`))
	}
	c.send(`{"type":"step"}`) // the session carries on with the Go algorithm
	if f := c.next("events", "state", "error"); f.Type == "error" {
		t.Fatalf("after a refused source, step: %s", f.raw)
	}

	failing := strings.Replace(template, "    s.ts = s.clock\n", "    s.ts = s.clock // (ctx.n - ctx.n)\n", 1)
	c.send(resetWithSource(t, failing))
	if h := c.next("hello"); !strings.Contains(h.raw, `s.ts = s.clock // (ctx.n - ctx.n)`) {
		t.Fatalf("the hello does not carry the source: %.300s", h.raw)
	}
	c.next("snapshot")
	c.send(`{"type":"play"}`)
	for {
		f := c.next("state", "events", "snapshot", "error")
		var st struct {
			Stopped     string
			StoppedLine int
		}
		_ = json.Unmarshal([]byte(f.raw), &st)
		if st.Stopped == "" {
			continue
		}
		if want := lineIn(failing, "s.ts = s.clock //"); st.StoppedLine != want || !strings.Contains(st.Stopped, "division by zero") {
			t.Fatalf("stopped: %s, want division by zero at line %d", f.raw, want)
		}
		break
	}
}

// A challenge on the page: Check (the explore endpoint) on the starting rules finds the
// broken property and says the goal is not met, its counterexample link carries the
// rules; after Run with the fix (the template), Check says the goal is met.
func TestExploreJudgesTheChallenge(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	id := openSession(t, ts, "/s/challenge-ra-tie-break")
	_, lines, msg := postExplore(t, ts, id)
	if len(lines) == 0 {
		t.Fatal(msg)
	}
	last := lines[len(lines)-1]
	if last.Type != "result" || last.Result.Property != "mutual-exclusion" || last.Challenge == nil || last.Challenge.Met {
		t.Fatalf("starting rules: %+v, challenge %+v", last, last.Challenge)
	}
	cx := last.Result.Counterexample
	if cx == nil || !strings.HasPrefix(cx.Link, "/r/v3.ricart-agrawala.") {
		t.Fatalf("the counterexample's link does not carry the rules: %+v", cx)
	}

	c := dial(t, ts, id)
	h := c.next("hello")
	var hello struct{ Scenario map[string]any }
	if err := json.Unmarshal([]byte(h.raw), &hello); err != nil || hello.Scenario["challenge"] == nil {
		t.Fatalf("the hello has no challenge: %.300s", h.raw)
	}
	fixed, _ := starlarkalg.Template("ricart-agrawala")
	hello.Scenario["source"] = fixed
	frame, _ := json.Marshal(map[string]any{"type": "reset", "scenario": hello.Scenario})
	c.send(string(frame))
	c.next("hello")
	// Copy link: the run's link carries the rules it runs now, and opens them.
	var link struct{ Path string }
	if p := get(t, browser(t), ts.URL+"/api/sessions/"+id+"/link"); json.Unmarshal([]byte(p.body), &link) != nil || !strings.HasPrefix(link.Path, "/r/v3.ricart-agrawala.") {
		t.Fatalf("the run's link: %s", p.body)
	}
	if l, err := scenarios.DecodeLink(strings.TrimPrefix(link.Path, "/r/")); err != nil || l.Scenario.Source != fixed || l.Scenario.Challenge == nil {
		t.Fatalf("the link does not carry the rules and the challenge: %v", err)
	}
	_, lines, msg = postExplore(t, ts, id)
	if len(lines) == 0 {
		t.Fatal(msg)
	}
	last = lines[len(lines)-1]
	if last.Type != "result" || last.Result.Result != "ok" || last.Challenge == nil || !last.Challenge.Met {
		t.Fatalf("fixed rules: %+v, challenge %+v", last, last.Challenge)
	}
}

// Exports of a link run its source: the trace of a link whose rules forget the
// tie-break shows the mutual-exclusion violation the Go algorithm never has.
func TestLinkExportRunsTheSource(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	template, _ := starlarkalg.Template("ricart-agrawala")
	broken := strings.Replace(template, "return s.ts < m.ts or (s.ts == m.ts and ctx.self_id < ctx.id(m.sender))", "return s.ts < m.ts", 1)
	for _, c := range []struct {
		source    string
		violation bool
	}{{"", false}, {template, false}, {broken, true}} {
		zero, one := 0, 1
		sc := &scenarios.Scenario{Version: 1, Algorithm: "ricart-agrawala", Nodes: 3, Seed: 1, Source: c.source,
			Network: &scenarios.Network{Delay: scenarios.Delay{1}}, Until: 40,
			Events: []scenarios.Event{{At: 1, Do: "request", Node: &zero}, {At: 1, Do: "request", Node: &one}}}
		p, err := (scenarios.Link{Scenario: sc}).Path()
		if err != nil {
			t.Fatal(err)
		}
		tr := get(t, browser(t), ts.URL+p+"/trace.jsonl?step=30")
		if got := strings.Contains(tr.body, `"property":"mutual-exclusion"`); tr.status != 200 || got != c.violation {
			t.Errorf("source of %d bytes: status %d, violation %v, want %v", len(c.source), tr.status, got, c.violation)
		}
	}
}

// Edit rules is offered where the run can take rules: on the four algorithms with a
// template, to whoever drives the run, not to a lecture's followers.
func TestEditRulesIsOfferedWhereItCanRun(t *testing.T) {
	rig := startLecture(t, Options{}, "/play/ricart-agrawala?n=4")
	for _, c := range []struct {
		path string
		want bool
	}{
		{"/play/ricart-agrawala", true}, {"/play/bully", true}, {"/s/challenge-central-no-queue", true},
		{"/play/maekawa", true}, {"/play/raymond", true}, {"/play/ring-list", true}, {"/l/" + rig.code, false},
	} {
		p := get(t, browser(t), rig.ts.URL+c.path)
		has := strings.Contains(p.body, `id="rules-edit"`) && strings.Contains(p.body, `id="rules-template"`)
		if p.status != 200 || has != c.want {
			t.Errorf("%s: status %d, Edit rules %v, want %v", c.path, p.status, has, c.want)
		}
	}
}

// Starlark loads are bounded per client (ratelimit.Limits.Loads): a reset frame or a
// share link whose source is not cached costs one load; past the client's bound the
// frame gets a rate-limited error and the link a 429 page, while sources already
// loaded (by anyone) cost nothing and keep opening.
func TestStarlarkLoadsAreBoundedPerClient(t *testing.T) {
	_, ts := newTestServer(t, Options{Limits: ratelimit.Limits{Loads: ratelimit.Rate{Per: 1, Every: time.Hour, Burst: 2}}})
	template, _ := starlarkalg.Template("ricart-agrawala")
	variant := func(k int) string { // a source no other test loads: a cache miss
		return template + fmt.Sprintf("\n# %s variant %d\n", t.Name(), k)
	}
	c := dial(t, ts, openSession(t, ts, "/play/ricart-agrawala"))
	c.next("snapshot")
	for k, want := range []string{"hello", "hello", "error", "hello"} {
		src := variant(k)
		if k == 3 {
			src = variant(0) // loaded already: not charged
		}
		c.send(resetWithSource(t, src))
		f := c.next("hello", "error")
		if f.Type != want {
			t.Fatalf("reset %d: %s, want %s", k, f.raw, want)
		}
		if f.Type == "error" {
			var e struct {
				Code string
				Ref  int64
			}
			_ = json.Unmarshal([]byte(f.raw), &e)
			if e.Code != "rate-limited" || e.Ref != 7 || !strings.Contains(f.Error, "many different rule sources") {
				t.Fatalf("the refused load: %s", f.raw)
			}
		}
	}

	path := func(src string) string {
		sc := &scenarios.Scenario{Version: 1, Algorithm: "ricart-agrawala", Nodes: 3, Seed: 1, Source: src}
		p, err := (scenarios.Link{Scenario: sc}).Path()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// Encoding a link validates, so loads, its source in this process; a link with
	// rules nobody loaded is made by rewriting a loaded link's payload.
	unloaded := relabel(t, path(variant(1)), "variant 1", "variant 4")
	for _, c := range []struct {
		name, url string
		status    int
		says      string
	}{
		{"a link with new rules", unloaded, http.StatusTooManyRequests, "Too many different rules"},
		{"its export", unloaded + "/trace.jsonl", http.StatusTooManyRequests, "many different rule sources"},
		{"a link with loaded rules", path(variant(1)), http.StatusOK, `id="rules-edit"`},
	} {
		p := get(t, browser(t), ts.URL+c.url)
		if p.status != c.status || !strings.Contains(p.body, c.says) {
			t.Errorf("%s: status %d, want %d saying %q: %.300s", c.name, p.status, c.status, c.says, p.body)
		}
	}
}

// relabel returns the link path p with from replaced by to in its payload (the JSON
// under deflate and base64url, scenarios.EncodeLink), without loading anything.
func relabel(t *testing.T, p, from, to string) string {
	t.Helper()
	dot := strings.LastIndex(p, ".")
	raw, err := base64.RawURLEncoding.DecodeString(p[dot+1:])
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(flate.NewReader(bytes.NewReader(raw)))
	if err != nil || !bytes.Contains(data, []byte(from)) {
		t.Fatalf("payload %q: %v", data, err)
	}
	var buf bytes.Buffer
	zw, _ := flate.NewWriter(&buf, flate.BestCompression)
	_, _ = zw.Write(bytes.Replace(data, []byte(from), []byte(to), 1))
	_ = zw.Close()
	return p[:dot+1] + base64.RawURLEncoding.EncodeToString(buf.Bytes())
}

// A lecture started on a run with edited rules shows those rules' pseudocode to its
// presenter and its followers, not the Go algorithm's.
func TestLecturePagesShowTheRunsOwnRules(t *testing.T) {
	template, _ := starlarkalg.Template("ricart-agrawala")
	const goLine, edited = `"send REPLY to every queued request"`, "send REPLY to every queued request, as edited for the hall"
	source := strings.Replace(template, goLine, `"`+edited+`"`, 1)
	if source == template {
		t.Fatal("the template's RR1 line moved: update the test")
	}
	sc := &scenarios.Scenario{Version: 1, Algorithm: "ricart-agrawala", Nodes: 3, Seed: 1, Source: source}
	link, err := (scenarios.Link{Scenario: sc}).Path()
	if err != nil {
		t.Fatal(err)
	}
	rig := startLecture(t, Options{}, link)
	for _, c := range []struct {
		page   string
		edited bool
	}{
		{"/lecture/present/" + rig.token, true},
		{"/l/" + rig.code, true},
		{"/play/ricart-agrawala", false}, // the Go algorithm's page keeps its own
	} {
		p := get(t, browser(t), rig.ts.URL+c.page)
		if got := strings.Contains(p.body, edited); p.status != 200 || got != c.edited {
			t.Errorf("%s: status %d, shows the edited RR1 %v, want %v", c.page, p.status, got, c.edited)
		}
		if !strings.Contains(p.body, `data-rule="RR1"`) {
			t.Errorf("%s: no RR1 in the pseudocode", c.page)
		}
	}
}
