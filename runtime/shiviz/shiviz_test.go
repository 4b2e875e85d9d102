package shiviz_test

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/causal"
	"github.com/teach-dist/playground/runtime/shiviz"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/scenarios"
)

// export runs cfg up to step (math.MaxInt: to its end) and returns the ShiViz log
// and the trace events it was written from.
func export(t *testing.T, cfg sim.Config, step int) (string, []sim.Event) {
	t.Helper()
	var b bytes.Buffer
	var rec sim.Recorder
	log := shiviz.New(&b, sim.NewEncoder(cfg.Spec, cfg.IDs), cfg.IDs)
	sink, keep := log.Sink(), rec.Sink()
	both := func(ev *sim.Event) { keep(ev); sink(ev) }
	if step == math.MaxInt {
		s, err := sim.New(cfg, both)
		if err == nil {
			err = s.Run()
		}
		if err != nil {
			t.Fatal(err)
		}
	} else if _, err := sim.Replay(cfg, nil, step, both); err != nil {
		t.Fatal(err)
	}
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String(), rec.Events
}

// read parses a log the two ways a user opens it in ShiViz, which must agree: the file
// uploaded, and the whole file pasted into the log box under the default expression.
func read(file string) ([]logEvent, *graph, error) {
	parser, delimiter, log, err := upload(file)
	if err != nil {
		return nil, nil, err
	}
	if delimiter != "" {
		return nil, nil, fmt.Errorf("the second line is the delimiter %q: ShiViz would split the log into executions", delimiter)
	}
	uploaded, err := parse(log, parser)
	if err != nil {
		return nil, nil, fmt.Errorf("uploaded: %w", err)
	}
	pasted, err := parse(file, defaultParser)
	if err != nil {
		return nil, nil, fmt.Errorf("pasted: %w", err)
	}
	if len(pasted) != len(uploaded) {
		return nil, nil, fmt.Errorf("pasted, %d events; uploaded, %d", len(pasted), len(uploaded))
	}
	for i := range pasted {
		p, u := pasted[i], uploaded[i]
		if p.text != u.text || p.host != u.host || !maps.Equal(p.clock, u.clock) {
			return nil, nil, fmt.Errorf("event %d: pasted %+v, uploaded %+v", i, p, u)
		}
	}
	g, err := model(uploaded)
	return uploaded, g, err
}

// expected is what ShiViz should show of a trace, worked out from the trace alone.
type expected struct {
	hosts  []string
	events []logEvent // host and text (the clocks are ShiViz's business: model checks them)
	rules  map[string][]string
	arrows map[[2]int]bool // (send, deliver) as indexes into events
	late   []string        // delivers with no arrow: "TYPE Pfrom->Pto"
}

var phrase = map[sim.EventType]string{
	sim.EvRequest: "request the CS", sim.EvEnter: "enter the CS", sim.EvExit: "exit the CS",
	sim.EvElect: "start an election", sim.EvCrash: "crash", sim.EvRecover: "recover",
}

// expect lists one start event per process, then one event per event of a process in
// the trace. A deliver has an arrow from its send unless its receiver already knew of
// the send: that is ShiViz's rule (an arrow comes from a host whose clock entry grows
// at the deliver, and the entry of a send the receiver knew of cannot grow), worked out
// here without clocks: what each process knows is the set of events it did or heard of
// through a chain of messages, kept as sets.
func expect(cfg sim.Config, trace []sim.Event) expected {
	host := func(i int) string { return "P" + strconv.Itoa(cfg.IDs[i]) }
	enc := sim.NewEncoder(cfg.Spec, cfg.IDs)
	x := expected{rules: map[string][]string{}, arrows: map[[2]int]bool{}}
	knows := make([]map[int]bool, len(cfg.IDs))
	for i := range cfg.IDs {
		x.hosts = append(x.hosts, host(i))
		x.events = append(x.events, logEvent{host: host(i), text: "t=0 start"})
		knows[i] = map[int]bool{i: true}
	}
	sent := map[int64]map[int]bool{} // message id -> what its send knew
	sendAt := map[int64]int{}
	for k := range trace {
		ev := &trace[k]
		if ev.Type == sim.EvRule {
			x.rules[host(ev.Node)] = append(x.rules[host(ev.Node)], ev.Rule)
			continue
		}
		if ev.Type == sim.EvDrop {
			delete(sent, ev.Msg.ID)
		}
		if !causal.IsProcessEvent(ev.Type.String()) || ev.Node < 0 {
			continue
		}
		p, me := ev.Node, len(x.events)
		text := phrase[ev.Type]
		switch ev.Type {
		case sim.EvSend:
			text = "send " + ev.Msg.Type + " to " + host(ev.Msg.To) + " " + string(enc.AppendMessage(nil, &ev.Msg))
		case sim.EvDeliver:
			text = "deliver " + ev.Msg.Type + " from " + host(ev.Msg.From) + " " + string(enc.AppendMessage(nil, &ev.Msg))
			if what, ok := sent[ev.Msg.ID]; ok {
				if s := sendAt[ev.Msg.ID]; knows[p][s] {
					x.late = append(x.late, ev.Msg.Type+" "+host(ev.Msg.From)+"->"+host(ev.Msg.To))
				} else {
					x.arrows[[2]int{s, me}] = true
				}
				maps.Copy(knows[p], what)
				delete(sent, ev.Msg.ID)
			}
		case sim.EvLeader:
			text = "take P" + strconv.Itoa(ev.Leader) + " as leader"
		case sim.EvTimer:
			text = "timer " + ev.Name + " fires"
		}
		knows[p][me] = true
		if ev.Type == sim.EvSend {
			sent[ev.Msg.ID], sendAt[ev.Msg.ID] = maps.Clone(knows[p]), me
		}
		x.events = append(x.events, logEvent{host: host(p), text: "t=" + strconv.Itoa(ev.T) + " " + text})
	}
	return x
}

// labels splits an event's text from the rule labels written after it.
func labels(text string) (string, []string) {
	if i := strings.LastIndex(text, " ["); i >= 0 && strings.HasSuffix(text, "]") {
		return text[:i], strings.Split(text[i+2:len(text)-1], ", ")
	}
	return text, nil
}

func check(got []logEvent, g *graph, x expected) error {
	if !slices.Equal(g.hosts, x.hosts) {
		return fmt.Errorf("hosts %v; want %v (one per process)", g.hosts, x.hosts)
	}
	if len(got) != len(x.events) {
		return fmt.Errorf("%d events; want %d", len(got), len(x.events))
	}
	rules := map[string][]string{}
	for i, e := range got {
		text, r := labels(e.text)
		rules[e.host] = append(rules[e.host], r...)
		if w := x.events[i]; e.host != w.host || text != w.text {
			return fmt.Errorf("event %d: %s %q; want %s %q", i, e.host, text, w.host, w.text)
		}
	}
	for _, h := range x.hosts {
		if !slices.Equal(rules[h], x.rules[h]) {
			return fmt.Errorf("%s: rules %v; want those it fired, %v", h, rules[h], x.rules[h])
		}
	}
	for a := range g.arrows {
		if !x.arrows[a] {
			return fmt.Errorf("an arrow %q -> %q that is no message's", got[a[0]].text, got[a[1]].text)
		}
	}
	for a := range x.arrows {
		if !g.arrows[a] {
			return fmt.Errorf("no arrow %q -> %q", got[a[0]].text, got[a[1]].text)
		}
	}
	return nil
}

// Every curated scenario's export, at step 0, halfway and at its end, opens in ShiViz
// uploaded or pasted, with one line per process, the trace's events in order, every
// rule on its process, and an arrow for each message its receiver learnt from; the
// messages ShiViz draws no arrow for are exactly those docs/links.md names.
func TestCuratedExportsReadInShiViz(t *testing.T) {
	// ShiViz draws no arrow for these messages: their receivers had heard of the send
	// through another path when they arrived (docs/links.md and the Export menu say so).
	// Every other curated scenario has none.
	overtaken := map[string][]string{
		"lamport-non-fifo": {"REQUEST P0->P1"},
		"central-ordering": {"REQUEST P0->P3"},
		// The old token, 60 time units on a slow link, reaches P3 after the new
		// generation's messages told P3 of its send.
		"token-ring-two-tokens": {"TOKEN P2->P3"},
	}
	for _, e := range scenarios.Curated() {
		t.Run(e.Name, func(t *testing.T) {
			cfg, err := e.Scenario.Config()
			if err != nil {
				t.Fatal(err)
			}
			_, all := export(t, cfg, math.MaxInt)
			steps := 0
			for _, ev := range all {
				if ev.Type == sim.EvEnd {
					steps = ev.Totals.Steps
				}
			}
			for _, step := range []int{0, steps / 2, math.MaxInt} {
				file, trace := export(t, cfg, step)
				got, g, err := read(file)
				if err == nil {
					err = check(got, g, expect(cfg, trace))
				}
				if err != nil {
					t.Fatalf("step %d: %v\n%s", step, err, file)
				}
			}
			if late := expect(cfg, all).late; !slices.Equal(late, overtaken[e.Name]) {
				t.Errorf("messages without an arrow: %q; want %q", late, overtaken[e.Name])
			}
		})
	}
}

// Runs beyond the catalogue read in ShiViz as well: messages lost by the network and
// in a partition (no deliver, so no arrow), a crash and a recovery (events on the
// process's line), a heal, and a Bully election on a non-FIFO network.
func TestOtherRunsReadInShiViz(t *testing.T) {
	for _, r := range []struct {
		name, scenario string
		has            []sim.EventType // what makes the run worth reading
	}{
		{"loss, recovery and heal", `{"version":1,"algorithm":"ricart-agrawala","nodes":3,"seed":1,
			"network":{"delay":[1,3],"fifo":false,"loss":0.3},"cs":2,
			"events":[{"at":1,"do":"request","node":0},{"at":1,"do":"request","node":1},
				{"at":2,"do":"crash","node":2},{"at":6,"do":"recover","node":2},
				{"at":8,"do":"partition","groups":[[0],[1,2]]},{"at":12,"do":"heal"}],
			"until":80}`, []sim.EventType{sim.EvDeliver, sim.EvDrop, sim.EvCrash, sim.EvRecover, sim.EvPartition, sim.EvHeal}},
		{"bully, non-FIFO", `{"version":1,"algorithm":"bully","nodes":5,"seed":7,
			"network":{"delay":[1,6],"fifo":false},
			"events":[{"at":0,"do":"crash","node":4},{"at":1,"do":"elect","node":0},{"at":1,"do":"elect","node":1}],
			"until":80}`, []sim.EventType{sim.EvDeliver, sim.EvCrash, sim.EvElect, sim.EvLeader}},
	} {
		t.Run(r.name, func(t *testing.T) {
			sc, err := scenarios.Parse([]byte(r.scenario))
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := sc.Config()
			if err != nil {
				t.Fatal(err)
			}
			file, trace := export(t, cfg, math.MaxInt)
			got, g, err := read(file)
			if err == nil {
				err = check(got, g, expect(cfg, trace))
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, file)
			}
			types := map[sim.EventType]bool{}
			for _, ev := range trace {
				types[ev.Type] = true
			}
			for _, want := range r.has {
				if !types[want] {
					t.Errorf("the run has no %s: it tests less than it says", want)
				}
			}
		})
	}
}

// The reader is a real check: logs that ShiViz refuses or draws otherwise fail it.
func TestReaderRefusesWhatShiVizRefuses(t *testing.T) {
	head := shiviz.Regexp + "\n\n"
	for _, c := range []struct{ name, file, err string }{
		{"empty", head, "does not capture any events"},
		{"host first", shiviz.Regexp + "\n\nP0 {\"P0\":1}\nt=0 start\nP0 {\"P0\":2}\nt=1 request the CS\n", "pasted"},
		{"clock from 2", head + "t=0 start\nP0 {\"P0\":2}\n", "must start at 1"},
		{"clock skips", head + "t=0 start\nP0 {\"P0\":1}\nt=1 x\nP0 {\"P0\":3}\n", "increase monotonically by 1"},
		{"unknown host", head + "t=0 start\nP0 {\"P0\":1,\"P9\":1}\n", "unrecognized host"},
		{"own entry missing", head + "t=0 start\nP0 {\"P1\":1}\n", "missing from timestamp"},
		{"a delimiter", shiviz.Regexp + "\n===\nt=0 start\nP0 {\"P0\":1}\n", "delimiter"},
		{"a carriage return, under the uploaded ^...$", head + "t=0 start\r\nP0 {\"P0\":1}\n", "line terminator"},
		{"clock not JSON", head + "t=0 start\nP0 {P0:1}\n", "JSON.parse fails"},
		{"one line", shiviz.Regexp, "one line"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, _, err := read(c.file); err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("error %v; want one saying %q", err, c.err)
			}
		})
	}
}

// ShiViz's arrows, as the reader draws them, on a hand-made log: P1 hears of P0's
// second event from P0 (an arrow), P2 hears of it only through P1 (an arrow from P1
// alone), and P1 then receives P0's first message late (no arrow).
func TestReaderDrawsShiVizArrows(t *testing.T) {
	file := shiviz.Regexp + "\n\n" + strings.Join([]string{
		"a", `P0 {"P0":1}`, "b", `P1 {"P1":1}`, "c", `P2 {"P2":1}`,
		"send 1", `P0 {"P0":2}`,
		"send 2", `P0 {"P0":3}`,
		"deliver 2", `P1 {"P0":3,"P1":2}`,
		"send 3", `P1 {"P0":3,"P1":3}`,
		"deliver 3", `P2 {"P0":3,"P1":3,"P2":2}`,
		"deliver 1", `P1 {"P0":3,"P1":4}`,
	}, "\n") + "\n"
	_, g, err := read(file)
	if err != nil {
		t.Fatal(err)
	}
	want := map[[2]int]bool{{4, 5}: true, {6, 7}: true}
	if !maps.Equal(g.arrows, want) {
		t.Fatalf("arrows %v; want %v", g.arrows, want)
	}
	if !slices.Equal(g.hosts, []string{"P0", "P1", "P2"}) {
		t.Fatalf("hosts %v", g.hosts)
	}
}

// A failed write is Close's error.
func TestCloseReportsAFailedWrite(t *testing.T) {
	cfg, err := func() (sim.Config, error) {
		sc, _ := scenarios.Lookup("ricart-agrawala-concurrent")
		return sc.Config()
	}()
	if err != nil {
		t.Fatal(err)
	}
	broken := errors.New("disk full")
	log := shiviz.New(failing{broken}, sim.NewEncoder(cfg.Spec, cfg.IDs), cfg.IDs)
	if _, err := sim.Replay(cfg, nil, math.MaxInt, log.Sink()); err != nil {
		t.Fatal(err)
	}
	if err := log.Close(); !errors.Is(err, broken) {
		t.Fatalf("Close: %v", err)
	}
}

type failing struct{ err error }

func (f failing) Write([]byte) (int, error) { return 0, f.err }

// The example in docs/links.md is the start of the named curated scenario's log, cut
// where it says "…", and the expression the docs tell a user to put in is ShiViz's
// default: the docs show what the export is.
func TestDocsShowTheExport(t *testing.T) {
	data, err := os.ReadFile("../../docs/links.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(data), "### ShiViz log")
	m := regexp.MustCompile("curated scenario `([^`]+)`'s log:\n\n```\n((?s).*?)```").FindStringSubmatch(section)
	if m == nil {
		t.Fatal("docs/links.md: no example log under ### ShiViz log")
	}
	if !strings.Contains(section, "put ShiViz's default expression `"+defaultParser+"` in \"Log\n  parsing regular expression\"") {
		t.Errorf("docs/links.md does not tell to put in the default expression %s", defaultParser)
	}
	sc, ok := scenarios.Lookup(m[1])
	if !ok {
		t.Fatalf("docs/links.md: no curated scenario %q", m[1])
	}
	cfg, err := sc.Config()
	if err != nil {
		t.Fatal(err)
	}
	file, _ := export(t, cfg, math.MaxInt)
	rest := file
	for k, part := range strings.Split(m[2], "…\n") {
		i := strings.Index(rest, part)
		if i < 0 || (k == 0 && i != 0) {
			t.Fatalf("docs/links.md: this part of the example is not in the log of %s:\n%s\nlog:\n%s", m[1], part, file)
		}
		rest = rest[i+len(part):]
	}
}

// A note ends a log as one more event of the first process, which ShiViz reads like
// any other: at the start of a run, and after the first process's own events.
func TestNoteEndsTheLogAsAnEvent(t *testing.T) {
	e := scenarios.Curated()[0]
	cfg, err := e.Scenario.Config()
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []int{0, 1, 5, 40} {
		var b bytes.Buffer
		log := shiviz.New(&b, sim.NewEncoder(cfg.Spec, cfg.IDs), cfg.IDs)
		s, err := sim.Replay(cfg, nil, step, log.Sink())
		if err != nil {
			t.Fatal(err)
		}
		log.Note(s.Now(), "cut here")
		if err := log.Close(); err != nil {
			t.Fatal(err)
		}
		got, g, err := read(b.String())
		if err == nil && g == nil {
			err = fmt.Errorf("no graph")
		}
		if err != nil {
			t.Fatalf("step %d: %v\n%s", step, err, b.String())
		}
		last := got[len(got)-1]
		if !strings.HasSuffix(last.text, "cut here") || last.host != "P"+strconv.Itoa(cfg.IDs[0]) {
			t.Fatalf("step %d: the last event is %+v", step, last)
		}
	}
}
