package protocol

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite "+fieldsGolden)

// fieldsGolden holds compact frames that between them use every field of the tables
// (compactfields.go), each with the protocol-1 frame it stands for: the browser's
// expander reads them too (static/test/compact.test.js).
const fieldsGolden = "../../static/test/testdata/compact-fields.json"

type goldenFrame struct {
	Compact string `json:"compact"`
	V1      string `json:"v1"`
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

// everyFieldStream is a short Ricart-Agrawala run whose events frames between them
// change every field of the tables: the clock's against its prediction, each
// process's, and a batch with every part of its tail.
func everyFieldStream() []Frame {
	released := func(clock string) json.RawMessage {
		return raw(`{"state":"RELEASED","clock":` + clock + `,"replied":[]}`)
	}
	return []Frame{
		&Hello{Proto: 1, Algorithm: "ricart-agrawala", Scenario: raw(`{"version":1,"algorithm":"ricart-agrawala","seed":1}`),
			IDs: []int{0, 1, 2}, Network: Network{Delay: [2]int{1, 3}}, Seed: 1, CS: 2, Rate: 2, MinSpeed: 0.25, MaxSpeed: 16,
			RecentMax: 100, MaxEvents: 250000},
		&Snapshot{Clock: Clock{Step: 4, T: 1, Seq: 37, Horizon: 4, Speed: 1}, Network: Network{Delay: [2]int{1, 3}},
			Nodes: []Node{{ID: 0, Alive: true, Leader: -1, State: raw(`{"state":"REQUESTED","clock":1,"replied":[]}`)},
				{ID: 1, Alive: true, Leader: -1, State: released("0")}, {ID: 2, Alive: true, Leader: -1, State: released("0")}},
			InFlight: []InFlight{{Msg: raw(`{"id":1,"type":"REQUEST","from":0,"to":1,"ts":1}`), Sent: 0, At: 2},
				{Msg: raw(`{"id":2,"type":"REQUEST","from":0,"to":2,"ts":1}`), Sent: 0, At: 1}},
			Lit: []Lit{}, Recent: []json.RawMessage{}},
		// A step as predicted: no clock, a delivery, a rule and why, a reply.
		&Events{Clock: Clock{Step: 5, T: 1, Seq: 40, Horizon: 5, Speed: 1}, Batches: []Batch{{Step: 5, T: 1,
			Events: raw(`[{"seq":38,"t":1,"type":"deliver","node":2,"msg":{"id":2,"type":"REQUEST","from":0,"to":2,"ts":1}},` +
				`{"seq":39,"t":1,"type":"rule","node":2,"rule":"RH1","why":"idle"},` +
				`{"seq":40,"t":1,"type":"send","node":2,"msg":{"id":3,"type":"REPLY","from":2,"to":0,"ts":3}}]`),
			Nodes: []Node{{ID: 2, Alive: true, Leader: -1, State: released("3")}}, Arrive: Arrivals{{Msg: 3, At: 3}}}}},
		// Every clock field against the prediction; a process's token, leader and group.
		&Events{Clock: Clock{Step: 7, T: 3, Seq: 45, Horizon: 30, Playing: true, Speed: 2, Quiet: true, Interventions: 1,
			Stopped: "the run reached 250000 events"}, Batches: []Batch{{Step: 6, T: 2,
			Events: raw(`[{"seq":41,"t":2,"type":"deliver","node":1,"msg":{"id":1,"type":"REQUEST","from":0,"to":1,"ts":1}},` +
				`{"seq":42,"t":2,"type":"send","node":1,"msg":{"id":4,"type":"REPLY","from":1,"to":0,"ts":2}},` +
				`{"seq":43,"t":2,"type":"send","node":1,"msg":{"id":5,"type":"REPLY","from":1,"to":2,"ts":2}}]`),
			Nodes:  []Node{{ID: 1, Alive: true, Token: true, Leader: 1, Group: 1, State: released("2")}},
			Arrive: Arrivals{{Msg: 4, At: 4}, {Msg: 5, At: 3}}}}},
		&State{Clock: Clock{Step: 7, T: 3, Seq: 45, Horizon: 30, Speed: 2, Quiet: true, Interventions: 1,
			Stopped: "the run reached 250000 events"}},
		// An intervention: a batch later than the next step, with a new network and the
		// times of the messages in flight, whole arrivals; a crash, an entry; the
		// clock's stopped cleared (protocol 1 leaves it out).
		&Events{Clock: Clock{Step: 10, T: 5, Seq: 47, Horizon: 30, Speed: 2, Quiet: true, Interventions: 2}, Batches: []Batch{{Step: 10, T: 5,
			Events: raw(`[{"seq":46,"t":5,"type":"crash","node":0},{"seq":47,"t":5,"type":"enter","node":1}]`),
			Nodes: []Node{{ID: 0, Leader: -1, State: raw(`{"state":"REQUESTED","clock":1,"replied":[]}`)},
				{ID: 1, Alive: true, CS: true, Token: true, Leader: 1, Group: 1, State: raw(`{"state":"HELD","clock":2,"replied":[]}`)}},
			Arrive:  Arrivals{{Msg: 5, At: -1}},
			Network: &Network{Delay: [2]int{1, 5}, FIFO: true, Hold: true},
			Retime:  Arrivals{{Msg: 3, At: -1}, {Msg: 4, At: -1}, {Msg: 5, At: -1}}}}},
	}
}

// The golden frames: what the Compactor writes for everyFieldStream, each events
// frame compact (none goes whole), and what the Expander reads back, byte for byte the
// protocol-1 frame. `go test ./runtime/protocol -run CompactFieldsGolden -update`
// rewrites them; a change of the wire format shows here as a diff.
func TestCompactFieldsGolden(t *testing.T) {
	c, x := NewCompactor(), NewExpander()
	var got []goldenFrame
	for i, f := range everyFieldStream() {
		n := uint64(i + 1)
		v1 := f.AppendJSON(nil)
		stamped := Stamp(n, c.Encode(f, v1))
		if _, ok := f.(*Events); ok && bytes.HasPrefix(stamped[bytes.IndexByte(stamped, ',')+1:], []byte(`{"type"`)) {
			t.Errorf("events frame %d went whole: %s", n, stamped)
		}
		m, back, err := x.Expand(stamped)
		if want := Stamp(n, v1); err != nil || m != n || !bytes.Equal(back, want) {
			t.Fatalf("frame %d %s came back as %s (%v), want %s", n, stamped, back, err, want)
		}
		got = append(got, goldenFrame{Compact: string(stamped), V1: string(Stamp(n, v1))})
	}
	out, err := json.MarshalIndent(got, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, '\n')
	if *update {
		if err := os.WriteFile(fieldsGolden, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(fieldsGolden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, want) {
		t.Fatalf("%s is not what the compactor writes now:\n%s", fieldsGolden, out)
	}
}

// The golden frames use every field of the tables and every part of a batch, so both
// expanders read each of them at least once.
func TestCompactFieldsGoldenUsesEveryField(t *testing.T) {
	b, err := os.ReadFile(fieldsGolden)
	if err != nil {
		t.Fatal(err)
	}
	var frames []goldenFrame
	if err := json.Unmarshal(b, &frames); err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{} // "clock.s", "node.a", "extra.w", "tail.dt"
	keysOf := func(table string, delta any) {
		if d, ok := delta.(map[string]any); ok {
			for k := range d {
				used[table+"."+k] = true
			}
		}
	}
	for _, f := range frames {
		var items []any
		if err := json.Unmarshal([]byte(f.Compact), &items); err != nil {
			t.Fatal(err)
		}
		if _, whole := items[1].(map[string]any); whole && len(items) == 2 {
			continue
		}
		for _, it := range items[1:] {
			batch, ok := it.([]any)
			if !ok {
				keysOf("clock", it)
				continue
			}
			for _, n := range batch[1].([]any) {
				if n, ok := n.([]any); ok && len(n) > 2 {
					keysOf("node", n[2])
				}
			}
			for i := range len(batch) - 2 {
				used["tail."+batchTail[i].Name] = true
			}
			if len(batch) == 2+len(batchTail) {
				keysOf("extra", batch[len(batch)-1])
			}
		}
	}
	var want []string
	for _, d := range docsOf(clockDelta) {
		want = append(want, "clock."+d.Key)
	}
	for _, d := range docsOf(nodeDelta) {
		want = append(want, "node."+d.Key)
	}
	for _, d := range docsOf(batchExtra) {
		want = append(want, "extra."+d.Key)
	}
	for _, p := range batchTail {
		want = append(want, "tail."+p.Name)
	}
	for _, w := range want {
		if !used[w] {
			t.Errorf("no golden frame uses %s: add it to everyFieldStream", w)
		}
	}
}

// Each field of the tables is the protocol-1 field it names: set alone, it changes
// that field of the object protocol 1 writes, to the value a delta writes for it; it
// is left out of a zero object exactly when the table says omitEmpty.
func TestCompactFieldsNameTheirProtocol1Fields(t *testing.T) {
	checkFields(t, "clock", clockDelta, func(c *Clock) []byte { return (&State{Clock: *c}).AppendJSON(nil) })
	checkFields(t, "node", nodeDelta, func(n *Node) []byte { return n.appendJSON(nil) })
	checkFields(t, "extra", batchExtra, func(b *Batch) []byte { return b.appendJSON(nil) })
}

// sampleOf is a value of each kind, not its zero.
var sampleOf = map[string]string{"int": "7", "bool": "true", "float": "0.5", "string": `"x"`,
	"network": `{"delay":[1,5],"fifo":true,"loss":0,"hold":true}`, "arrivals": `{"3":-1}`}

func checkFields[T any](t *testing.T, table string, fields []deltaField[T], protocol1 func(*T) []byte) {
	t.Helper()
	object := func(x *T) map[string]string {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(protocol1(x), &m); err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for k, v := range m {
			out[k] = string(v)
		}
		return out
	}
	var zero T
	before := object(&zero)
	for _, f := range fields {
		d := f.describe()
		sample, ok := sampleOf[d.Kind]
		if !ok {
			t.Fatalf("%s.%s: no sample of kind %s", table, d.Key, d.Kind)
		}
		var x T
		if err := f.read(json.RawMessage(sample), &x); err != nil {
			t.Fatalf("%s.%s reads %s: %v", table, d.Key, sample, err)
		}
		after := object(&x)
		if after[d.Name] != sample {
			t.Errorf("%s.%s set to %s: protocol 1 writes %q: %s, want %s", table, d.Key, sample, d.Name, after[d.Name], sample)
		}
		for k, v := range after {
			if k != d.Name && before[k] != v {
				t.Errorf("%s.%s set to %s changes %q too", table, d.Key, sample, k)
			}
		}
		if _, there := before[d.Name]; there == d.OmitEmpty {
			t.Errorf("%s.%s: protocol 1 leaves %q out when empty: %v, the table says %v", table, d.Key, d.Name, !there, d.OmitEmpty)
		}
		if got, want := string(appendDelta(nil, fields, &zero, &x, "{", "")), `{"`+d.Key+`":`+sample+`}`; got != want {
			t.Errorf("%s.%s: delta %s, want %s", table, d.Key, got, want)
		}
	}
}
