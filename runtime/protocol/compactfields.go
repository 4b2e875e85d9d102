package protocol

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// The fields of compact follower frames (compact.go), declared once. The Compactor
// writes them and the Expander reads them through these tables, and go generate writes
// the browser's copy of them, static/compact_fields.js, which static/compact.js reads:
// a field added here reaches the three ends at once, and `make check` fails while the
// browser's copy is not current.

//go:generate go run gen_compact_fields.go ../../static/compact_fields.js

// A delta is a JSON object of the fields of a protocol-1 object that differ from what
// the follower already has, each under a short key: {"s":5,"p":true}.

// clockDelta is C, an events frame's clock against the prediction (compactEvents).
// Slowed and StoppedLine are not here: a frame whose clock changes them does not come
// back from its compact form, so the Compactor sends it whole.
var clockDelta = []deltaField[Clock]{
	fieldOf("s", "step", intKind, func(c *Clock) *int { return &c.Step }),
	fieldOf("t", "t", intKind, func(c *Clock) *int { return &c.T }),
	fieldOf("q", "seq", int64Kind, func(c *Clock) *int64 { return &c.Seq }),
	fieldOf("h", "horizon", intKind, func(c *Clock) *int { return &c.Horizon }),
	fieldOf("p", "playing", boolKind, func(c *Clock) *bool { return &c.Playing }),
	fieldOf("v", "speed", floatKind, func(c *Clock) *float64 { return &c.Speed }),
	fieldOf("z", "quiet", boolKind, func(c *Clock) *bool { return &c.Quiet }),
	fieldOf("i", "interventions", intKind, func(c *Clock) *int { return &c.Interventions }),
	fieldOf("x", "stopped", stringKind, func(c *Clock) *string { return &c.Stopped }).omitEmpty(),
}

// nodeDelta is F, a process's fields besides its state against the view the
// follower has of it (compactNode).
var nodeDelta = []deltaField[Node]{
	fieldOf("a", "alive", boolKind, func(n *Node) *bool { return &n.Alive }),
	fieldOf("c", "cs", boolKind, func(n *Node) *bool { return &n.CS }),
	fieldOf("k", "token", boolKind, func(n *Node) *bool { return &n.Token }),
	fieldOf("l", "leader", intKind, func(n *Node) *int { return &n.Leader }),
	fieldOf("g", "group", intKind, func(n *Node) *int { return &n.Group }),
}

// batchExtra is X, what a batch rarely has, against a batch without it.
var batchExtra = []deltaField[Batch]{
	fieldOf("w", "network", networkKind, func(b *Batch) **Network { return &b.Network }).omitEmpty(),
	fieldOf("r", "retime", arrivalsKind, func(b *Batch) *Arrivals { return &b.Retime }).omitEmpty(),
}

// noBatch is the batch X is written against.
var noBatch Batch

// batchTail is what a compact batch [E, N, A, dt, ds, X] has after N, in order, each
// with its form when it says nothing: the parts after the last one that says
// something are left out, and a reader puts them back.
var batchTail = [...]tailPart{
	{"arrive", json.RawMessage("[]")}, // A: the arrival times (compactArrivals)
	{"dt", json.RawMessage("0")},      // the batch's t minus the previous one's
	{"dstep", json.RawMessage("0")},   // its step minus (the previous step + 1)
	{"extra", json.RawMessage("{}")},  // X: batchExtra
}

type tailPart struct {
	Name string          `json:"name"`
	Zero json.RawMessage `json:"zero"` // the part when it says nothing
}

// kind is how a field's value is compared and written, and its name in the browser's
// table (which checks a value's type by it); values are read back by encoding/json.
type kind[V any] struct {
	name   string
	equal  func(a, b V) bool
	append func(b []byte, v V) []byte
}

var (
	intKind     = kind[int]{"int", eq[int], appendInt}
	int64Kind   = kind[int64]{"int", eq[int64], func(b []byte, v int64) []byte { return strconv.AppendInt(b, v, 10) }}
	boolKind    = kind[bool]{"bool", eq[bool], appendBool}
	floatKind   = kind[float64]{"float", eq[float64], appendFloat}
	stringKind  = kind[string]{"string", eq[string], appendString}
	networkKind = kind[*Network]{"network",
		func(a, b *Network) bool { return a == b || a != nil && b != nil && *a == *b },
		func(b []byte, n *Network) []byte { return n.appendJSON(b) }}
	arrivalsKind = kind[Arrivals]{"arrivals",
		func(a, b Arrivals) bool { return (a == nil) == (b == nil) && slices.Equal(a, b) },
		func(b []byte, a Arrivals) []byte { return a.appendJSON(b) }}
)

func eq[V comparable](a, b V) bool { return a == b }

// deltaField is one field of a delta, of a protocol-1 object of type T.
type deltaField[T any] interface {
	describe() fieldDoc
	differs(pred, now *T) bool
	appendValue(b []byte, x *T) []byte
	read(raw json.RawMessage, x *T) error
}

// fieldDoc is a field as the browser's table gives it.
type fieldDoc struct {
	Key       string `json:"key"`  // in a compact delta
	Name      string `json:"name"` // in the protocol-1 object
	Kind      string `json:"kind"`
	OmitEmpty bool   `json:"omitEmpty,omitempty"` // protocol 1 leaves the field out when it is empty
}

type field[T, V any] struct {
	doc  fieldDoc
	kind kind[V]
	at   func(*T) *V
}

func fieldOf[T, V any](key, name string, k kind[V], at func(*T) *V) field[T, V] {
	return field[T, V]{doc: fieldDoc{Key: key, Name: name, Kind: k.name}, kind: k, at: at}
}

func (f field[T, V]) omitEmpty() field[T, V] {
	f.doc.OmitEmpty = true
	return f
}

func (f field[T, V]) describe() fieldDoc { return f.doc }

func (f field[T, V]) differs(pred, now *T) bool { return !f.kind.equal(*f.at(pred), *f.at(now)) }

func (f field[T, V]) appendValue(b []byte, x *T) []byte { return f.kind.append(b, *f.at(x)) }

func (f field[T, V]) read(raw json.RawMessage, x *T) error { return json.Unmarshal(raw, f.at(x)) }

// appendDelta writes the fields of now that differ from pred, {"key":value,...},
// opened by open ("{" or ",{"); empty when none differs.
func appendDelta[T any](b []byte, fields []deltaField[T], pred, now *T, open, empty string) []byte {
	start := len(b)
	for _, f := range fields {
		if !f.differs(pred, now) {
			continue
		}
		if len(b) == start {
			b = append(b, open...)
		} else {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, f.describe().Key...)
		b = append(b, `":`...)
		b = f.appendValue(b, now)
	}
	if len(b) == start {
		return append(b, empty...)
	}
	return append(b, '}')
}

// readDelta sets the fields of x that delta has; keys it does not know are passed over.
func readDelta[T any](delta json.RawMessage, fields []deltaField[T], x *T) error {
	if string(delta) == "{}" {
		return nil // the usual X
	}
	var byKey map[string]json.RawMessage
	if err := json.Unmarshal(delta, &byKey); err != nil {
		return fmt.Errorf("protocol: a compact delta: %w", err)
	}
	for _, f := range fields {
		raw, ok := byKey[f.describe().Key]
		if !ok {
			continue
		}
		if err := f.read(raw, x); err != nil {
			d := f.describe()
			return fmt.Errorf("protocol: compact field %s (%s): %w", d.Key, d.Name, err)
		}
	}
	return nil
}

// trimTail leaves out the parts of a batch's tail that say nothing, from the end:
// starts[i] is where part i of batchTail begins in b, at the comma before it.
func trimTail(b []byte, starts []int) []byte {
	for i := len(starts) - 1; i >= 0 && string(b[starts[i]+1:]) == string(batchTail[i].Zero); i-- {
		b = b[:starts[i]]
	}
	return b
}

// CompactFieldsJS is the browser's copy of the tables above, the ES module
// static/compact_fields.js: go generate writes it (gen_compact_fields.go).
func CompactFieldsJS() []byte {
	b := []byte(`// Code generated by go generate in runtime/protocol from compactfields.go; DO NOT EDIT.
//
// The fields of compact follower frames (docs/protocol.md, "Compact follower frames")
// as the Go compactor writes them and its expander reads them: compact.js reads the
// frames by these tables, and makes the view's clocks and processes with the two
// functions after them. A field is {key (in a compact delta), name (in the
// protocol-1 object), kind, omitEmpty (protocol 1 leaves it out when empty)}.
`)
	b = appendJSTable(b, "clockFields", "C, an events frame's clock: the fields that differ from the prediction.", docsOf(clockDelta))
	b = appendJSTable(b, "nodeFields", "F, a process's fields besides its state that changed.", docsOf(nodeDelta))
	b = appendJSTable(b, "extraFields", "X, what a batch rarely has.", docsOf(batchExtra))
	b = appendJSTable(b, "batchTail", "A batch is [E, N, ...batchTail]: each part, and its form when it says nothing (left out at the end).", batchTail[:])
	b = appendJSView(b, "clockOf", "the clock of a protocol-1 frame: its clockFields", nil, docsOf(clockDelta), nil)
	return appendJSView(b, "nodeView", "a process as the view keeps it: its id, nodeFields and state", []string{"id"}, docsOf(nodeDelta), []string{"state"})
}

// appendJSView writes a function that copies the named fields of an object into a new
// one, as one object literal rather than a loop over the table: V8 keeps a literal's
// fields in the object itself, and those of every object spread from it after (the
// expander spreads each clock and process from the last), where objects built field
// by field made the page's expander about a tenth slower. Fields that protocol 1
// leaves out when empty are added after, when set.
func appendJSView(b []byte, name, doc string, before []string, fields []fieldDoc, after []string) []byte {
	names := before
	var optional []string
	for _, d := range fields {
		if d.OmitEmpty {
			optional = append(optional, d.Name)
		} else {
			names = append(names, d.Name)
		}
	}
	names = append(names, after...)
	b = append(b, "\n// "+name+" is "+doc+".\nexport function "+name+"(f) {\n  const o = {"...)
	for i, n := range names {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, " "+n+": f."+n...)
	}
	b = append(b, " };\n"...)
	for _, n := range optional {
		b = append(b, "  if (f."+n+") o."+n+" = f."+n+";\n"...)
	}
	return append(b, "  return o;\n}\n"...)
}

func docsOf[T any](fields []deltaField[T]) []fieldDoc {
	docs := make([]fieldDoc, len(fields))
	for i, f := range fields {
		docs[i] = f.describe()
	}
	return docs
}

func appendJSTable[E any](b []byte, name, doc string, rows []E) []byte {
	b = append(b, "\n// "...)
	b = append(b, doc...)
	b = append(b, "\nexport const "...)
	b = append(b, name...)
	b = append(b, " = [\n"...)
	for _, r := range rows {
		row, err := json.Marshal(r)
		if err != nil {
			panic(err) // strings and JSON literals of this file
		}
		b = append(b, "  "...)
		b = append(b, row...)
		b = append(b, ",\n"...)
	}
	return append(b, "];\n"...)
}
