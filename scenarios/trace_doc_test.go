package scenarios

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
)

// traceDoc is what docs/trace.md says of each event type, read from its tables.
type traceDoc struct {
	required, optional map[string][]string // type -> fields besides seq, t and type
	reasons            []string            // drop reasons
	properties         []string            // violation properties
}

var backticked = regexp.MustCompile("`([^`]*)`( when)?")

// readTraceDoc reads the table of event types (a field written "`x` when ..." is
// optional), the drop reasons in the drop row and the properties of the violations table.
func readTraceDoc(t *testing.T) traceDoc {
	t.Helper()
	data, err := os.ReadFile("../docs/trace.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := traceDoc{required: map[string][]string{}, optional: map[string][]string{}}
	table := ""
	for line := range strings.SplitSeq(string(data), "\n") {
		cells := strings.Split(line, "|")
		switch {
		case !strings.HasPrefix(line, "|") || len(cells) < 4:
			table = ""
			continue
		case strings.TrimSpace(cells[1]) == "type" || strings.TrimSpace(cells[1]) == "property":
			table = strings.TrimSpace(cells[1])
			continue
		}
		names := backticked.FindAllStringSubmatch(cells[1], -1)
		switch table {
		case "type":
			for _, typ := range names {
				doc.required[typ[1]] = []string{} // heal has no field of its own
				for _, f := range backticked.FindAllStringSubmatch(cells[2], -1) {
					if f[2] != "" {
						doc.optional[typ[1]] = append(doc.optional[typ[1]], f[1])
					} else {
						doc.required[typ[1]] = append(doc.required[typ[1]], f[1])
					}
				}
				if typ[1] == "drop" {
					for _, r := range backticked.FindAllStringSubmatch(cells[3], -1) {
						doc.reasons = append(doc.reasons, r[1])
					}
				}
			}
		case "property":
			for _, p := range names {
				doc.properties = append(doc.properties, p[1])
			}
		}
	}
	if len(doc.required) < 16 || len(doc.reasons) == 0 || len(doc.properties) == 0 {
		t.Fatalf("docs/trace.md: read %d event types, %d drop reasons, %d properties", len(doc.required), len(doc.reasons), len(doc.properties))
	}
	return doc
}

// checkEvent checks one trace line against the docs and the run's ids and messages.
func (doc traceDoc) checkEvent(ev map[string]json.RawMessage, spec *sim.Spec, isID func(int) bool, nextMsg *int64) error {
	var typ string
	if err := json.Unmarshal(ev["type"], &typ); err != nil {
		return fmt.Errorf("type: %v", err)
	}
	req, known := doc.required[typ]
	if !known {
		return fmt.Errorf("type %q is not documented", typ)
	}
	allowed := append([]string{"seq", "t", "type"}, req...)
	allowed = append(allowed, doc.optional[typ]...)
	for k := range ev {
		if !slices.Contains(allowed, k) {
			return fmt.Errorf("%s: field %q is not documented for it", typ, k)
		}
	}
	for _, k := range append([]string{"seq", "t", "type"}, req...) {
		if _, ok := ev[k]; !ok {
			return fmt.Errorf("%s: no %q", typ, k)
		}
	}
	var n int
	for k, raw := range ev {
		var err error
		switch k {
		case "t", "seq", "messages", "entries", "delivered", "dropped", "elections", "violations", "steps", "app":
			err = json.Unmarshal(raw, &n)
		case "node", "leader":
			if err = json.Unmarshal(raw, &n); err == nil && !isID(n) {
				err = fmt.Errorf("%d is not a node id", n)
			}
		case "type", "rule", "why", "name", "detail":
			var s string
			err = json.Unmarshal(raw, &s)
		case "reason", "property":
			var s string
			if err = json.Unmarshal(raw, &s); err == nil && !slices.Contains(append(doc.reasons, doc.properties...), s) {
				err = fmt.Errorf("%q is not documented", s)
			}
		case "nodes", "cycle":
			var list []int
			if err = json.Unmarshal(raw, &list); err == nil && (len(list) == 0 || slices.ContainsFunc(list, func(id int) bool { return !isID(id) })) {
				err = fmt.Errorf("%v is empty or has no node's id", list)
			}
		case "groups":
			var groups [][]int
			if err = json.Unmarshal(raw, &groups); err == nil && slices.ContainsFunc(slices.Concat(groups...), func(id int) bool { return !isID(id) }) {
				err = fmt.Errorf("%v has a group with no node's id", groups)
			}
		case "msg":
			err = checkMessage(raw, typ, spec, isID, nextMsg)
		}
		if err != nil {
			return fmt.Errorf("%s: %s: %v", typ, k, err)
		}
	}
	return nil
}

// checkMessage: id, type, from, to and the payload keys the algorithm declares for the
// type; ids count from 1 in send order.
func checkMessage(raw json.RawMessage, typ string, spec *sim.Spec, isID func(int) bool, nextMsg *int64) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return err
	}
	var head struct {
		ID       int64
		Type     string
		From, To int
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return err
	}
	keys := []string{"id", "type", "from", "to"}
	if mt := spec.MessageType(head.Type); mt != nil {
		for _, k := range []string{mt.TS, mt.Arg, mt.Vec, mt.Queue} {
			if k != "" {
				keys = append(keys, k)
			}
		}
	} else if head.Type != sim.AppMessage {
		return fmt.Errorf("message type %q is neither the algorithm's nor APP", head.Type)
	}
	for k := range m {
		if !slices.Contains(keys, k) {
			return fmt.Errorf("key %q is not one of %v", k, keys)
		}
	}
	if len(m) != len(keys) || !isID(head.From) || !isID(head.To) {
		return fmt.Errorf("%s: want the keys %v between node ids", raw, keys)
	}
	if typ == "send" {
		if head.ID != *nextMsg {
			return fmt.Errorf("message id %d; want %d (ids count from 1 in send order)", head.ID, *nextMsg)
		}
		*nextMsg++
	}
	return nil
}

// beyondCurated are runs that do what no curated scenario does, so that the exports
// read below hold every event type, field, drop reason and property docs/trace.md
// names: a message lost by the network, a process that recovers, a partition that heals.
var beyondCurated = map[string]string{
	"loss, recovery and heal": `{"version":1,"algorithm":"ricart-agrawala","nodes":3,"seed":1,
		"network":{"delay":[1,3],"fifo":false,"loss":0.3},"cs":2,
		"events":[{"at":1,"do":"request","node":0},{"at":1,"do":"request","node":1},
			{"at":2,"do":"crash","node":2},{"at":6,"do":"recover","node":2},
			{"at":8,"do":"partition","groups":[[0],[1,2]]},{"at":12,"do":"heal"}],
		"until":80}`,
}

// traceAt is the trace of sc up to step as the server exports it (the kernel's events
// through sim.Encoder's lines; web's TestCuratedTraceAndShiVizExportsAreWhatTheFormatTestsRead
// checks the server sends these bytes), or with step -1 the whole run as `playground
// run` prints it, end event included.
func traceAt(t *testing.T, sc *Scenario, step int) []byte {
	t.Helper()
	if step < 0 {
		return trace(t, sc)
	}
	cfg, err := sc.Config()
	if err != nil {
		t.Fatal(err)
	}
	var b []byte
	if _, err := sim.Replay(cfg, nil, step, sim.NewEncoder(cfg.Spec, cfg.IDs).Lines(&b)); err != nil {
		t.Fatal(err)
	}
	return b
}

// stepsOf is how many steps the whole run of sc takes (its end event's steps).
func stepsOf(t *testing.T, sc *Scenario) int {
	t.Helper()
	whole := bytes.TrimSuffix(trace(t, sc), []byte("\n"))
	var end struct{ Steps int }
	if err := json.Unmarshal(whole[bytes.LastIndexByte(whole, '\n')+1:], &end); err != nil {
		t.Fatal(err)
	}
	return end.Steps
}

// Every line of every curated scenario's trace export decodes with the fields
// docs/trace.md gives its type: seq from 0 without gaps, ids that are the run's, and
// the end event last, only in a whole run. The exports read: the server's at step 0
// and at the run's last step (web's export test checks that the server sends these
// very bytes), and the whole run as `playground run` prints it. With the runs
// beyond the curated ones, the exports read hold every type the docs list with each of
// its fields (optional ones too), every drop reason and every violation property: the
// docs say nothing the test has not read.
func TestTraceExportFollowsItsDocs(t *testing.T) {
	doc := readTraceDoc(t)
	for typ := sim.EvSend; typ <= sim.EvEnd; typ++ {
		if _, ok := doc.required[typ.String()]; !ok {
			t.Errorf("docs/trace.md has no row for the kernel's event type %q", typ)
		}
	}
	type run struct {
		name string
		sc   *Scenario
	}
	var runs []run
	for _, e := range Curated() {
		runs = append(runs, run{e.Name, e.Scenario})
	}
	for name, js := range beyondCurated {
		sc, err := Parse([]byte(js))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		runs = append(runs, run{name, sc})
	}
	seen := map[string]bool{} // "type", "type.field", "reason:x", "property:x"
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			cfg, err := r.sc.Config()
			if err != nil {
				t.Fatal(err)
			}
			isID := func(id int) bool { return slices.Contains(cfg.IDs, id) }
			for _, step := range []int{0, stepsOf(t, r.sc), -1} {
				lines := bytes.Split(bytes.TrimSuffix(traceAt(t, r.sc, step), []byte("\n")), []byte("\n"))
				nextMsg := int64(1)
				for i, line := range lines {
					var ev map[string]json.RawMessage
					if err := json.Unmarshal(line, &ev); err != nil {
						t.Fatalf("step %d, line %d: %v", step, i+1, err)
					}
					if err := doc.checkEvent(ev, cfg.Spec, isID, &nextMsg); err != nil {
						t.Fatalf("step %d, line %d: %v\n%s", step, i+1, err, line)
					}
					if seq := string(ev["seq"]); seq != fmt.Sprint(i) {
						t.Fatalf("step %d, line %d: seq %s; want %d", step, i+1, seq, i)
					}
					if end := string(ev["type"]) == `"end"`; end != (step < 0 && i == len(lines)-1) {
						t.Fatalf("step %d, line %d of %d: %s", step, i+1, len(lines), line)
					}
					var typ, reason, property string
					_ = json.Unmarshal(ev["type"], &typ)
					seen[typ] = true
					for k := range ev {
						seen[typ+"."+k] = true
					}
					if json.Unmarshal(ev["reason"], &reason) == nil {
						seen["reason:"+reason] = true
					}
					if json.Unmarshal(ev["property"], &property) == nil {
						seen["property:"+property] = true
					}
				}
			}
		})
	}
	if t.Failed() {
		return
	}
	var missing []string
	for typ, fields := range doc.required {
		for _, k := range append(append([]string{""}, fields...), doc.optional[typ]...) {
			if key := strings.TrimSuffix(typ+"."+k, "."); !seen[key] {
				missing = append(missing, key)
			}
		}
	}
	for _, r := range doc.reasons {
		if !seen["reason:"+r] {
			missing = append(missing, "drop reason "+r)
		}
	}
	for _, p := range doc.properties {
		if !seen["property:"+p] {
			missing = append(missing, "property "+p)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		t.Errorf("no export read holds these, which docs/trace.md documents: %v", missing)
	}
}
