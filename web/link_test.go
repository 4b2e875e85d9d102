package web

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/shiviz"
	"github.com/teach-dist/playground/scenarios"
)

// snapshotBody drops what may legitimately differ between two views of one run at one
// step: whether it plays, how far its timeline went, and the session's own ids.
func snapshotBody(t *testing.T, raw string) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "playing")
	delete(m, "horizon")
	out, _ := json.Marshal(m)
	return string(out)
}

// playSome makes a run with interventions of several kinds at several steps, then
// seeks back so that some of them lie ahead of the step shown.
func playSome(t *testing.T, ts *httptest.Server, path string) (string, *wsClient) {
	t.Helper()
	id := openSession(t, ts, path)
	c := dial(t, ts, id)
	c.next("hello")
	c.next("snapshot")
	c.send(`{"type":"act","do":"request","node":1}`)
	c.next("events")
	for k := range 12 {
		c.send(`{"type":"step"}`)
		c.next("events", "state")
		switch k {
		case 3:
			c.send(`{"type":"act","do":"request","node":3}`)
			c.next("events")
		case 6:
			c.send(`{"type":"act","do":"crash","node":0}`)
			c.next("events")
		case 8:
			c.send(`{"type":"act","do":"recover","node":0}`)
			c.next("events")
		}
	}
	c.send(`{"type":"seek","step":9}`)
	c.next("snapshot")
	return id, c
}

type linkAnswer struct {
	Path, Embed string
	Length      int
	Step        int
}

func linkOf(t *testing.T, ts *httptest.Server, id string) linkAnswer {
	t.Helper()
	p := get(t, browser(t), ts.URL+"/api/sessions/"+id+"/link")
	if p.status != http.StatusOK || p.header.Get("Content-Type") != "application/json" {
		t.Fatalf("link: %d %s", p.status, p.body)
	}
	var l linkAnswer
	if err := json.Unmarshal([]byte(p.body), &l); err != nil {
		t.Fatal(err)
	}
	return l
}

// A link opens the same run at the same step in a browser that never saw it: same
// snapshot, byte for byte (horizon and play state aside), in a new session.
func TestLinkOpensTheSameRunAtTheSameStep(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	id, _ := playSome(t, ts, "/play/ricart-agrawala?n=5&seed=3&delay=1-4&fifo=false")
	l := linkOf(t, ts, id)
	t.Logf("link of a 5-process run with 4 interventions: %d characters", l.Length)
	if l.Step != 9 || !strings.HasPrefix(l.Path, "/r/v2.ricart-agrawala.") || l.Length != len(l.Path) || l.Embed != "/embed"+l.Path {
		t.Fatalf("link answer %+v", l)
	}
	if l.Length > 2000 {
		t.Fatalf("link of %d characters", l.Length)
	}
	// The original, seen by a new viewer.
	orig := dial(t, ts, id)
	orig.next("hello")
	want := orig.next("snapshot")

	page := get(t, browser(t), ts.URL+l.Path)
	if page.status != http.StatusOK {
		t.Fatalf("%s: %d %s", l.Path, page.status, page.body)
	}
	nid := sessionOf(t, page)
	if nid == id {
		t.Fatal("the link reopened the same session, not a fresh run")
	}
	c := dial(t, ts, nid)
	c.next("hello")
	got := c.next("snapshot")
	if got.Step != 9 || got.Playing {
		t.Fatalf("the link opened at step %d (playing %v); want step 9, paused", got.Step, got.Playing)
	}
	if snapshotBody(t, got.raw) != snapshotBody(t, want.raw) {
		t.Fatalf("the link's run differs:\n got %s\nwant %s", got.raw, want.raw)
	}
	// And it goes on the same way: the recover recorded at step 9 comes back too.
	for range 4 {
		orig.send(`{"type":"step"}`)
		c.send(`{"type":"step"}`)
		a, b := orig.next("events", "state"), c.next("events", "state")
		if snapshotBody(t, a.raw) != snapshotBody(t, b.raw) {
			t.Fatalf("after the link's step:\n original %s\n link     %s", a.raw, b.raw)
		}
	}
}

// A curated scenario's link carries its title and captions; the page names it.
func TestLinkOfACuratedScenarioKeepsItsTitle(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	id := openSession(t, ts, "/s/bully-best-case")
	l := linkOf(t, ts, id)
	p := get(t, browser(t), ts.URL+l.Path)
	sc, _ := scenarios.Lookup("bully-best-case")
	if p.status != http.StatusOK || !strings.Contains(p.body, htmlEscape(sc.Title)) {
		t.Fatalf("%d: the page does not show the title %q", p.status, sc.Title)
	}
	if !strings.Contains(p.body, `href="/s/bully-best-case?fresh=1" aria-current`) {
		t.Fatal("the scenario menu does not mark the curated scenario as current")
	}
	c := dial(t, ts, sessionOf(t, p))
	hello := c.next("hello")
	var h struct {
		Name     string
		Scenario struct{ Captions []scenarios.Caption }
	}
	if err := json.Unmarshal([]byte(hello.raw), &h); err != nil {
		t.Fatal(err)
	}
	if h.Name != "bully-best-case" || len(h.Scenario.Captions) != len(sc.Captions) {
		t.Fatalf("hello: name %q, %d captions; want bully-best-case, %d", h.Name, len(h.Scenario.Captions), len(sc.Captions))
	}
}

func deflatedCode(format int, slug, data string) string {
	var buf bytes.Buffer
	zw, _ := flate.NewWriter(&buf, flate.BestCompression)
	zw.Write([]byte(data))
	zw.Close()
	return fmt.Sprintf("v%d.%s.%s", format, slug, base64.RawURLEncoding.EncodeToString(buf.Bytes()))
}

// A link that cannot open gets 400 and a page saying why, with the closest runs:
// never a 500, never a blank page.
func TestBadLinksSayWhyAndOfferTheClosestRun(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	id, _ := playSome(t, ts, "/play/ricart-agrawala?n=4")
	good := linkOf(t, ts, id).Path
	code := strings.TrimPrefix(good, "/r/")
	tests := []struct {
		name, path string
		want       []string
		offers     string // the /play link offered, if any
	}{
		{"newer format", "/r/v4.bully." + code[len("v2.ricart-agrawala."):], []string{"comes from a newer playground", "newer version of the playground (format 4); this server reads format 3"}, "/play/bully"},
		{"newer format, unknown algorithm", "/r/v4.paxos.abcd", []string{"newer version of the playground (format 4)"}, ""},
		{"truncated", good[:len(good)-15], []string{"This link is cut short", "copy it again whole"}, "/play/ricart-agrawala"},
		{"truncated in the slug", "/r/v1.ricart", []string{"cut short"}, ""},
		{"tampered character", good[:40] + "*" + good[41:], []string{"This link was altered", "characters a link never has"}, "/play/ricart-agrawala"},
		{"tampered data", "/r/" + deflatedCode(1, "bully", `{"scenario":{"version":1,"algorithm":"bully","seed":1},"interventions":[{"step":2,"do":"crash","node":42}],"step":3}`),
			[]string{"This link was altered", "interventions[0].node: 42 is not a node id"}, "/play/bully"},
		{"not a link", "/r/hello", []string{"not a playground link"}, ""},
		// Heartbeats never stop: the replay reaches the event limit long before the step.
		{"cannot replay", "/r/" + deflatedCode(1, "bully", `{"scenario":{"version":1,"algorithm":"bully","seed":1,"params":{"heartbeat":{"period":6,"timeout":3}}},"step":1000000}`),
			[]string{"cannot be replayed here", "event limit"}, "/play/bully"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := get(t, browser(t), ts.URL+tt.path)
			if p.status != http.StatusBadRequest {
				t.Fatalf("status %d; want 400\n%s", p.status, p.body)
			}
			for _, w := range tt.want {
				if !strings.Contains(p.body, htmlEscape(w)) {
					t.Errorf("the page does not say %q", w)
				}
			}
			if tt.offers != "" && !strings.Contains(p.body, `class="open" href="`+tt.offers+`?fresh=1"`) {
				t.Errorf("the page does not offer %s", tt.offers)
			}
			if tt.offers == "" && strings.Contains(p.body, "The closest run") {
				t.Error("the page offers a run it should not")
			}
			if !strings.Contains(p.body, `href="/s/bully-best-case?fresh=1"`) {
				t.Error("the page does not offer the catalogue")
			}
		})
	}
}

// The exports of a link are those of the session it was made from.
func TestLinkExportsMatchTheSession(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	id, _ := playSome(t, ts, "/play/ricart-agrawala?n=4&seed=2")
	l := linkOf(t, ts, id)
	for _, step := range []int{5, 9, 14} {
		q := fmt.Sprintf("?step=%d", step)
		a := get(t, browser(t), ts.URL+"/api/sessions/"+id+"/trace"+q)
		b := get(t, browser(t), ts.URL+l.Path+"/trace.jsonl"+q)
		if b.status != http.StatusOK || !strings.HasPrefix(b.header.Get("Content-Type"), "application/x-ndjson") {
			t.Fatalf("trace.jsonl%s: %d %q %s", q, b.status, b.header.Get("Content-Type"), b.body)
		}
		if a.body != b.body || a.body == "" {
			t.Fatalf("step %d: the link's trace differs from the session's:\n%s\n---\n%s", step, b.body, a.body)
		}
		sa := get(t, browser(t), ts.URL+"/api/sessions/"+id+"/shiviz"+q)
		sb := get(t, browser(t), ts.URL+l.Path+"/shiviz"+q)
		if sa.status != http.StatusOK || sa.body != sb.body {
			t.Fatalf("step %d: shiviz %d, differs from the link's: %v", step, sa.status, sa.body != sb.body)
		}
	}
	if d := get(t, browser(t), ts.URL+l.Path+"/shiviz?download=1"); !strings.Contains(d.header.Get("Content-Disposition"), "ricart-agrawala-shiviz.log") {
		t.Fatalf("download: %q", d.header.Get("Content-Disposition"))
	}
	if p := get(t, browser(t), ts.URL+"/r/v1.bully.AAAA/trace.jsonl"); p.status != http.StatusBadRequest || !strings.Contains(p.body, "link:") {
		t.Fatalf("bad link export: %d %s", p.status, p.body)
	}
	if p := get(t, browser(t), ts.URL+"/api/sessions/nope/link"); p.status != http.StatusNotFound {
		t.Fatalf("unknown session: %d", p.status)
	}
}

// The ShiViz endpoint streams runtime/shiviz's log of the session's run (that package's
// tests read it with ShiViz's rules): ShiViz's default expression first, then every
// process's start event and the run's events.
func TestShiVizLogHasVectorClocksOfTheRun(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	id, _ := playSome(t, ts, "/play/ricart-agrawala?n=4&seed=2")
	p := get(t, browser(t), ts.URL+"/api/sessions/"+id+"/shiviz")
	if p.status != http.StatusOK || !strings.HasPrefix(p.header.Get("Content-Type"), "text/plain") {
		t.Fatalf("%d %v %s", p.status, p.header, p.body)
	}
	head, log, ok := strings.Cut(p.body, "\n\n")
	if !ok || head != shiviz.Regexp {
		t.Fatalf("first lines: %q", head)
	}
	for _, want := range []string{
		"t=0 start [RI1]\nP0 {\"P0\":1}\n", "t=0 start [RI1]\nP3 {\"P3\":1}\n",
		"deliver REQUEST from P", "[RH1]\nP",
	} {
		if !strings.Contains(log, want) {
			t.Fatalf("the log lacks %q:\n%s", want, log)
		}
	}
}

// Embed pages are the playground, compact and framable; every other page keeps
// frame-ancestors 'none'.
func TestEmbedPagesAreFramableOthersNot(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	id, _ := playSome(t, ts, "/play/ricart-agrawala?n=4")
	l := linkOf(t, ts, id)
	for _, path := range []string{l.Embed, "/embed/s/bully-best-case", "/embed/play/ricart-agrawala?n=3"} {
		p := get(t, browser(t), ts.URL+path)
		csp := p.header.Get("Content-Security-Policy")
		if p.status != http.StatusOK || !strings.Contains(p.body, `<body class="page-play page-embed">`) {
			t.Fatalf("%s: %d, not an embed page", path, p.status)
		}
		if strings.Contains(csp, "frame-ancestors") || !strings.Contains(csp, "script-src 'self'") {
			t.Fatalf("%s: CSP %q", path, csp)
		}
		full := strings.TrimPrefix(path, "/embed")
		if !strings.Contains(p.body, `class="embed-open" href="`+htmlEscape(full)+`"`) {
			t.Fatalf("%s: no link to %s", path, full)
		}
		sessionOf(t, p)
	}
	for _, path := range []string{"/", l.Path, "/play/ricart-agrawala", "/s/bully-best-case", "/embed/r/v1.bully.AAAA", "/embed/s/nope"} {
		p := get(t, browser(t), ts.URL+path)
		if csp := p.header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Fatalf("%s (%d): CSP %q allows framing", path, p.status, csp)
		}
	}
}

// The page has the share and export controls and the caption element.
func TestPlayPageHasShareExportAndCaption(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	p := get(t, browser(t), ts.URL+"/s/bully-best-case")
	id := sessionOf(t, p)
	for _, want := range []string{
		`id="copy-link"`, `id="export-menu"`, `id="export-list"`,
		`href="/api/sessions/` + id + `/trace?download=1"`, `href="/api/sessions/` + id + `/shiviz?download=1"`,
		`id="caption" class="caption" role="status" aria-live="polite" hidden`,
		// ShiViz draws no arrow for an overtaken message: the menu says so (docs/links.md).
		`id="export-shiviz-note">`, `ShiViz draws no arrow for a message whose receiver already knew of its send`,
	} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
}

// "Be the network" choices are part of the run: held deliveries picked by the user, a
// partition, a live network change all come back through the link.
func TestLinkCarriesTheNetworkChoices(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	id := openSession(t, ts, "/play/ricart-agrawala?n=4&seed=5&hold=true")
	c := dial(t, ts, id)
	c.next("hello")
	c.next("snapshot")
	c.send(`{"type":"act","do":"request","node":2}`)
	c.next("events")
	c.send(`{"type":"act","do":"partition","groups":[[0,1],[2,3]]}`)
	c.next("events")
	// Deliver the held messages newest first: not the order the network would pick.
	var held []int64
	c.send(`{"type":"seek","step":100}`)
	snap := c.next("snapshot")
	var s struct {
		Inflight []struct{ Msg struct{ ID int64 } }
	}
	if err := json.Unmarshal([]byte(snap.raw), &s); err != nil {
		t.Fatal(err)
	}
	for _, f := range s.Inflight {
		held = append(held, f.Msg.ID)
	}
	if len(held) < 2 {
		t.Fatalf("only %d messages held", len(held))
	}
	for k := len(held) - 1; k >= 0; k-- {
		c.send(fmt.Sprintf(`{"type":"act","do":"deliver","msg":%d}`, held[k]))
		c.next("events")
	}
	c.send(`{"type":"act","do":"heal"}`)
	c.next("events")
	c.send(`{"type":"act","do":"network","hold":false,"delay":[2,4],"fifo":true}`)
	c.next("events")
	for range 5 {
		c.send(`{"type":"step"}`)
		c.next("events", "state")
	}
	c.send(`{"type":"seek","step":4}`)
	c.next("snapshot")
	l := linkOf(t, ts, id)
	orig := dial(t, ts, id)
	orig.next("hello")
	want := orig.next("snapshot")

	p := get(t, browser(t), ts.URL+l.Path)
	nc := dial(t, ts, sessionOf(t, p))
	nc.next("hello")
	got := nc.next("snapshot")
	if snapshotBody(t, got.raw) != snapshotBody(t, want.raw) {
		t.Fatalf("the link's run differs:\n got %s\nwant %s", got.raw, want.raw)
	}
	// Play both to the end: the same trace, the user's delivery order and the network
	// change included.
	a := get(t, browser(t), ts.URL+"/api/sessions/"+id+"/trace?step=40")
	b := get(t, browser(t), ts.URL+l.Path+"/trace.jsonl?step=40")
	if a.body != b.body {
		t.Fatalf("traces differ:\n%s\n---\n%s", a.body, b.body)
	}
	code := strings.TrimPrefix(l.Path, "/r/")
	dl, err := scenarios.DecodeLink(code)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, iv := range dl.Interventions {
		kinds[iv.Event.Do]++
	}
	if kinds["deliver"] != len(held) || kinds["partition"] != 1 || kinds["network"] != 1 || kinds["heal"] != 1 {
		t.Fatalf("the link's interventions: %v", kinds)
	}
}
