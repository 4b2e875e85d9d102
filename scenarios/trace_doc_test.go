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

// Every line of every curated scenario's trace export decodes, with the fields
// docs/trace.md gives its type: seq from 0 without gaps, ids that are the run's, and
// the end event last.
func TestTraceExportFollowsItsDocs(t *testing.T) {
	doc := readTraceDoc(t)
	for typ := sim.EvSend; typ <= sim.EvEnd; typ++ {
		if _, ok := doc.required[typ.String()]; !ok {
			t.Errorf("docs/trace.md has no row for the kernel's event type %q", typ)
		}
	}
	for _, e := range Curated() {
		t.Run(e.Name, func(t *testing.T) {
			cfg, err := e.Scenario.Config()
			if err != nil {
				t.Fatal(err)
			}
			isID := func(id int) bool { return slices.Contains(cfg.IDs, id) }
			lines := bytes.Split(bytes.TrimSuffix(trace(t, e.Scenario), []byte("\n")), []byte("\n"))
			nextMsg := int64(1)
			for i, line := range lines {
				var ev map[string]json.RawMessage
				if err := json.Unmarshal(line, &ev); err != nil {
					t.Fatalf("line %d: %v", i+1, err)
				}
				if err := doc.checkEvent(ev, cfg.Spec, isID, &nextMsg); err != nil {
					t.Fatalf("line %d: %v\n%s", i+1, err, line)
				}
				if seq := string(ev["seq"]); seq != fmt.Sprint(i) {
					t.Fatalf("line %d: seq %s; want %d", i+1, seq, i)
				}
				if end := string(ev["type"]) == `"end"`; end != (i == len(lines)-1) {
					t.Fatalf("line %d of %d: %s", i+1, len(lines), line)
				}
			}
		})
	}
}
