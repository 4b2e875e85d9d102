package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"maps"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/shiviz"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/scenarios"
)

// The session's trace is exactly the events its viewers were streamed, interventions
// included, up to the horizon; ?step= cuts it short; a bad step or an unknown session
// gets an error naming it.
func TestSessionTraceIsWhatWasStreamed(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	id := openSession(t, ts, "/play/ricart-agrawala?n=3&seed=4")
	c := dial(t, ts, id)
	c.next("hello")
	c.next("snapshot")
	var streamed bytes.Buffer
	c.send(`{"type":"act","do":"request","node":1}`)
	for f := c.next("events"); f.Type == "events"; f = c.next("events", "state") {
		for _, b := range f.Batches {
			for _, ev := range b.Events {
				streamed.Write(ev)
				streamed.WriteByte('\n')
			}
		}
		c.send(`{"type":"step"}`)
	}
	c.send(`{"type":"seek","step":3}`)
	c.next("snapshot")

	p := get(t, browser(t), ts.URL+"/api/sessions/"+id+"/trace")
	if p.status != http.StatusOK || !strings.HasPrefix(p.header.Get("Content-Type"), "application/x-ndjson") {
		t.Fatalf("status %d, type %q: %s", p.status, p.header.Get("Content-Type"), p.body)
	}
	// The page starts at step 0, whose events came in the snapshot: the stream is the tail.
	if !strings.HasSuffix(p.body, streamed.String()) || len(p.body) == streamed.Len() {
		t.Fatalf("the trace is not the init events followed by the stream:\ntrace:\n%s\nstreamed:\n%s", p.body, streamed.String())
	}

	short := get(t, browser(t), ts.URL+"/api/sessions/"+id+"/trace?step=2")
	if !strings.HasPrefix(p.body, short.body) || len(short.body) >= len(p.body) {
		t.Fatalf("?step=2 is not a prefix of the whole trace:\n%s", short.body)
	}
	last := strings.Split(strings.TrimSpace(short.body), "\n")
	var ev struct{ Type string }
	if err := json.Unmarshal([]byte(last[len(last)-1]), &ev); err != nil || ev.Type == "" {
		t.Fatalf("last line is not an event: %q", last[len(last)-1])
	}

	if p := get(t, browser(t), ts.URL+"/api/sessions/"+id+"/trace?step=x"); p.status != http.StatusBadRequest || !strings.Contains(p.body, "step") {
		t.Fatalf("bad step: %d %s", p.status, p.body)
	}
	if p := get(t, browser(t), ts.URL+"/api/sessions/nope/trace"); p.status != http.StatusNotFound {
		t.Fatalf("unknown session: %d", p.status)
	}
	if d := get(t, browser(t), ts.URL+"/api/sessions/"+id+"/trace?download=1"); !strings.Contains(d.header.Get("Content-Disposition"), "ricart-agrawala-trace.jsonl") {
		t.Fatalf("download: %q", d.header.Get("Content-Disposition"))
	}
}

// Every curated scenario's trace and ShiViz exports, at step 0 and at the run's last
// step, are byte for byte the files the format tests decode: scenarios'
// TestTraceExportFollowsItsDocs reads these traces against docs/trace.md, and
// runtime/shiviz's TestCuratedExportsReadInShiViz these logs with ShiViz's own rules.
// The exports come from a share link of the scenario at its last step; the log at the
// end is compared with the whole run's, which the ShiViz test reads.
func TestCuratedTraceAndShiVizExportsAreWhatTheFormatTestsRead(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	for _, e := range scenarios.Curated() {
		t.Run(e.Name, func(t *testing.T) {
			cfg, err := e.Scenario.Config()
			if err != nil {
				t.Fatal(err)
			}
			steps := 0
			whole, err := sim.New(cfg, func(ev *sim.Event) {
				if ev.Type == sim.EvEnd {
					steps = ev.Totals.Steps
				}
			})
			if err == nil {
				err = whole.Run()
			}
			if err != nil || steps == 0 {
				t.Fatalf("the whole run: %v, %d steps", err, steps)
			}
			link, err := scenarios.Link{Scenario: e.Scenario, Step: steps}.Path()
			if err != nil {
				t.Fatal(err)
			}
			for _, step := range []int{0, steps} {
				// As the format tests make them: the trace of the run up to step, and the
				// log of the run up to step (0) or of the whole run (the log leaves out the
				// end and the violations found after the last step).
				var trace []byte
				var log bytes.Buffer
				enc := sim.NewEncoder(cfg.Spec, cfg.IDs)
				if _, err := sim.Replay(cfg, nil, step, enc.Lines(&trace)); err != nil {
					t.Fatal(err)
				}
				w := shiviz.New(&log, sim.NewEncoder(cfg.Spec, cfg.IDs), cfg.IDs)
				if step == 0 {
					_, err = sim.Replay(cfg, nil, 0, w.Sink())
				} else if s, err2 := sim.New(cfg, w.Sink()); err2 != nil {
					err = err2
				} else {
					err = s.Run()
				}
				if err != nil {
					t.Fatal(err)
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				q := fmt.Sprintf("?step=%d", step)
				for _, x := range []struct{ path, want string }{
					{"/trace.jsonl" + q, string(trace)},
					{"/shiviz" + q, log.String()},
				} {
					p := get(t, browser(t), ts.URL+link+x.path)
					if p.status != http.StatusOK || p.body != x.want {
						t.Fatalf("%s: %d, %d bytes; want the %d bytes the format test reads\n%s", x.path, p.status, len(p.body), len(x.want), firstLineApart(p.body, x.want))
					}
				}
			}
		})
	}
}

// firstLineApart shows where two files part.
func firstLineApart(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d: %q; want %q", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("%d lines; want %d", len(g), len(w))
}

// docs/links.md's table of exports has a row for every item of the Export menu, by the
// label the menu shows (the SVG items are added by static/spacetime.js), each saying
// what to open it with.
func TestDocsSayHowToOpenEveryExport(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	page := get(t, browser(t), ts.URL+"/s/lamport-non-fifo")
	var labels []string
	for _, id := range []string{"export-trace", "export-shiviz", "export-embed"} {
		m := regexp.MustCompile(`id="` + id + `"[^>]*>([^<]+)<`).FindStringSubmatch(page.body)
		if m == nil {
			t.Fatalf("the Export menu has no %s", id)
		}
		labels = append(labels, html.UnescapeString(m[1]))
	}
	js, err := os.ReadFile("../static/spacetime.js")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"export-view-svg", "export-spacetime-svg"} {
		m := regexp.MustCompile(`\["` + id + `", "([^"]+)"`).FindSubmatch(js)
		if m == nil {
			t.Fatalf("static/spacetime.js adds no %s", id)
		}
		labels = append(labels, string(m[1]))
	}
	doc, err := os.ReadFile("../docs/links.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "\n## Exports\n")
	section, _, _ = strings.Cut(section, "\n### ")
	rows := map[string]string{} // first cell -> last cell
	for line := range strings.SplitSeq(section, "\n") {
		if cells := strings.Split(line, " | "); strings.HasPrefix(line, "| ") && len(cells) == 3 {
			rows[strings.TrimPrefix(cells[0], "| ")] = strings.TrimSuffix(cells[2], " |")
		}
	}
	for _, label := range labels {
		found := false
		for first, open := range rows {
			if slices.Contains(strings.Split(first, ", "), label) && len(open) > 20 {
				found = true
			}
		}
		if !found {
			t.Errorf("docs/links.md, Exports: no row for %q saying how to open it (rows: %q)", label, slices.Collect(maps.Keys(rows)))
		}
	}
}
