package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/teach-dist/playground/runtime/sim"
)

// The frames of a run: what a playground page draws. They are encoded by hand, field
// by field, because they carry trace events and algorithm state that are JSON already
// (the trace encoder's bytes go to the browser untouched, so they are trace v1
// exactly) and because a playing run sends one every step.

// Hello is the first frame on a connection, and again after a reset: what the run is.
type Hello struct {
	Proto     int    `json:"proto"`
	Session   string `json:"session"` // empty for a lecture's followers: the id would let them drive
	Algorithm string `json:"algorithm"`
	Name      string `json:"name"` // the curated scenario's name, or empty
	// Scenario is the scenario v1 document the run came from; nil encodes as null.
	Scenario  json.RawMessage `json:"scenario"`
	IDs       []int           `json:"ids"`
	Network   Network         `json:"network"`
	Seed      uint64          `json:"seed"`
	CS        int             `json:"cs"`
	Rate      float64         `json:"rate"`
	MinSpeed  float64         `json:"minSpeed"`
	MaxSpeed  float64         `json:"maxSpeed"`
	RecentMax int             `json:"recentMax"`
	MaxEvents int             `json:"maxEvents"`
	// Rules are the run's rules when its algorithm is the scenario's Starlark source
	// (rules a student edited, a challenge's): the page was drawn with the Go
	// algorithm's, or with the rules before a Run, and draws these instead. Absent
	// when the run is the Go algorithm's own.
	Rules []RuleText `json:"rules,omitempty"`
	// Vars are that source's inspector variables, with Rules: an edited source may
	// declare others than the page's.
	Vars []VarText `json:"vars,omitempty"`
	// Title is that source's title, with Rules; Own its own name when it is an
	// algorithm written from scratch (sim.Spec.Name): the page then heads the run
	// with Title, marked as the student's algorithm, not one of the notes'.
	Title string `json:"title,omitempty"`
	Own   string `json:"own,omitempty"`
}

// VarText is one variable of the inspector: sim.Var as a page reads it.
type VarText struct {
	Name string `json:"name"`
	Doc  string `json:"doc"`
}

// VarsOf is a spec's variables as hello carries them.
func VarsOf(vars []sim.Var) []VarText {
	out := make([]VarText, len(vars))
	for i, v := range vars {
		out[i] = VarText{Name: v.Name, Doc: v.Doc}
	}
	return out
}

// RuleText is one rule of the pseudocode panel and the narration: sim.Rule as a page
// reads it.
type RuleText struct {
	Label string            `json:"label"`
	Notes string            `json:"notes,omitempty"`
	Group string            `json:"group"`
	Lines []string          `json:"lines"`
	Says  string            `json:"says"`
	Why   map[string]string `json:"why,omitempty"`
}

// RulesOf is a spec's rules as hello carries them.
func RulesOf(rules []sim.Rule) []RuleText {
	out := make([]RuleText, len(rules))
	for i, r := range rules {
		out[i] = RuleText{Label: r.Label, Notes: r.Notes, Group: r.Group, Lines: r.Lines, Says: r.Says, Why: r.Why}
		if out[i].Lines == nil {
			out[i].Lines = []string{}
		}
	}
	return out
}

// Network is a network model: {"delay":[min,max],"fifo":..,"loss":..,"hold":..}.
type Network struct {
	Delay [2]int  `json:"delay"`
	FIFO  bool    `json:"fifo"`
	Loss  float64 `json:"loss"`
	Hold  bool    `json:"hold"`
}

// NetworkOf is the frame's form of the kernel's network model.
func NetworkOf(nw *sim.Network) Network {
	return Network{Delay: [2]int{nw.DelayMin, nw.DelayMax}, FIFO: nw.FIFO, Loss: nw.Loss, Hold: nw.Hold}
}

// Clock is what every state-bearing frame (state, events, snapshot) carries first.
type Clock struct {
	Step          int     `json:"step"`
	T             int     `json:"t"`
	Seq           int64   `json:"seq"` // of the latest trace event shown, -1 before the first: captions key on it
	Horizon       int     `json:"horizon"`
	Playing       bool    `json:"playing"`
	Speed         float64 `json:"speed"`
	Quiet         bool    `json:"quiet"`
	Interventions int     `json:"interventions"`
	Stopped       string  `json:"stopped,omitempty"` // why the run stopped at its event limit
	// Slowed: the server is busy and this run's client is over its share of the CPU,
	// so the run goes at this fraction of its speed (a power of two); 0 (absent): not.
	Slowed float64 `json:"slowed,omitempty"`
	// StoppedLine: the line of the algorithm's source (a student's Starlark rules) where
	// the error that stopped the run is, for the editor; 0 when there is none.
	StoppedLine int `json:"stoppedLine,omitempty"`
}

// State carries only the clock: after play, pause, speed, or a step with nothing to do.
type State struct {
	Clock
}

// Events is one or more batches, in order.
type Events struct {
	Clock
	Batches []Batch `json:"batches"`
}

// Batch is what one step or one intervention produced.
type Batch struct {
	Step int `json:"step"`
	T    int `json:"t"`
	// Events is the JSON array of the batch's trace v1 events, as the trace encoder
	// wrote them.
	Events json.RawMessage `json:"events"`
	Nodes  []Node          `json:"nodes"`  // the processes whose view changed
	Arrive Arrivals        `json:"arrive"` // messages sent in the batch and still in flight
	// Network is set in a batch that changed the network model.
	Network *Network `json:"network,omitempty"`
	// Retime is set (perhaps empty) in a batch that switched hold mode: the new arrival
	// time of every message in flight.
	Retime Arrivals `json:"retime,omitempty"`
}

// Node is the view of one process.
type Node struct {
	ID     int             `json:"id"`
	Alive  bool            `json:"alive"`
	CS     bool            `json:"cs"`
	Token  bool            `json:"token"`
	Leader int             `json:"leader"` // -1: none
	Group  int             `json:"group"`  // partition group
	State  json.RawMessage `json:"state"`  // the algorithm's variables, canonical JSON
	// Rules is set in a snapshot only (perhaps empty): the rules the process fired in
	// its latest batch that fired any.
	Rules []string `json:"rules,omitempty"`
}

// Arrival is when a message in flight arrives (-1 while held in hold mode).
type Arrival struct {
	Msg int64
	At  int
}

// Arrivals encode as an object keyed by message id, in the order they were added.
type Arrivals []Arrival

// Snapshot is the whole visible state: on connect, after seek, back and reset.
type Snapshot struct {
	Clock
	Network  Network           `json:"network"`
	Nodes    []Node            `json:"nodes"`
	InFlight []InFlight        `json:"inflight"`
	Lit      []Lit             `json:"lit"`
	Recent   []json.RawMessage `json:"recent"` // the narration log's trace events
}

// InFlight is a message in the network.
type InFlight struct {
	Msg  json.RawMessage `json:"msg"` // as in trace events
	Sent int             `json:"sent"`
	At   int             `json:"at"` // -1 while held
}

// Lit is a rule of the latest batch that fired any.
type Lit struct {
	Node int    `json:"node"`
	Rule string `json:"rule"`
}

// Error tells one client that its frame or command failed.
type Error struct {
	Code  string `json:"code"` // codes.go
	Error string `json:"error"`
	Ref   int64  `json:"ref,omitempty"` // the client's ref
	// Line: for an error in a scenario's source (a student's Starlark rules), its line.
	Line int `json:"line,omitempty"`
}

func (*Hello) Type() string    { return "hello" }
func (*State) Type() string    { return "state" }
func (*Events) Type() string   { return "events" }
func (*Snapshot) Type() string { return "snapshot" }
func (*Error) Type() string    { return "error" }

func appendInt(b []byte, v int) []byte { return strconv.AppendInt(b, int64(v), 10) }

func appendBool(b []byte, v bool) []byte { return strconv.AppendBool(b, v) }

func appendFloat(b []byte, v float64) []byte { return strconv.AppendFloat(b, v, 'g', -1, 64) }

func appendString(b []byte, v string) []byte {
	q, _ := json.Marshal(v)
	return append(b, q...)
}

// appendList writes the elements of xs, comma-separated, each by each; the brackets
// around them are the caller's (with the field's name).
func appendList[T any](b []byte, xs []T, each func(x *T, b []byte) []byte) []byte {
	for i := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = each(&xs[i], b)
	}
	return b
}

func appendIntElem(v *int, b []byte) []byte { return appendInt(b, *v) }

func appendStringElem(v *string, b []byte) []byte { return appendString(b, *v) }

func appendRawElem(v *json.RawMessage, b []byte) []byte { return append(b, *v...) }

func appendRaw(b []byte, v json.RawMessage) []byte {
	if len(v) == 0 {
		return append(b, "null"...)
	}
	return append(b, v...)
}

// AppendJSON implements Frame.
func (f *Hello) AppendJSON(b []byte) []byte {
	b = append(b, `{"type":"hello","proto":`...)
	b = appendInt(b, f.Proto)
	b = append(b, `,"session":`...)
	b = appendString(b, f.Session)
	b = append(b, `,"algorithm":`...)
	b = appendString(b, f.Algorithm)
	b = append(b, `,"name":`...)
	b = appendString(b, f.Name)
	b = append(b, `,"scenario":`...)
	b = appendRaw(b, f.Scenario)
	b = append(b, `,"ids":[`...)
	b = appendList(b, f.IDs, appendIntElem)
	b = append(b, `],"network":`...)
	b = f.Network.appendJSON(b)
	b = append(b, `,"seed":`...)
	b = strconv.AppendUint(b, f.Seed, 10)
	b = append(b, `,"cs":`...)
	b = appendInt(b, f.CS)
	b = append(b, `,"rate":`...)
	b = appendFloat(b, f.Rate)
	b = append(b, `,"minSpeed":`...)
	b = appendFloat(b, f.MinSpeed)
	b = append(b, `,"maxSpeed":`...)
	b = appendFloat(b, f.MaxSpeed)
	b = append(b, `,"recentMax":`...)
	b = appendInt(b, f.RecentMax)
	b = append(b, `,"maxEvents":`...)
	b = appendInt(b, f.MaxEvents)
	if len(f.Rules) > 0 {
		// Once per run, not per step: encoding/json is fast enough.
		rules, _ := json.Marshal(f.Rules) // strings, slices and maps of strings: cannot fail
		b = append(b, `,"rules":`...)
		b = append(b, rules...)
	}
	if len(f.Vars) > 0 {
		vars, _ := json.Marshal(f.Vars) // strings: cannot fail
		b = append(b, `,"vars":`...)
		b = append(b, vars...)
	}
	if f.Title != "" {
		b = append(b, `,"title":`...)
		b = appendString(b, f.Title)
	}
	if f.Own != "" {
		b = append(b, `,"own":`...)
		b = appendString(b, f.Own)
	}
	return append(b, '}')
}

func (nw *Network) appendJSON(b []byte) []byte {
	b = append(b, `{"delay":[`...)
	b = appendInt(b, nw.Delay[0])
	b = append(b, ',')
	b = appendInt(b, nw.Delay[1])
	b = append(b, `],"fifo":`...)
	b = appendBool(b, nw.FIFO)
	b = append(b, `,"loss":`...)
	b = appendFloat(b, nw.Loss)
	b = append(b, `,"hold":`...)
	b = appendBool(b, nw.Hold)
	return append(b, '}')
}

// appendJSON writes the clock's fields, after the frame's type.
func (c *Clock) appendJSON(b []byte) []byte {
	b = append(b, `"step":`...)
	b = appendInt(b, c.Step)
	b = append(b, `,"t":`...)
	b = appendInt(b, c.T)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, c.Seq, 10)
	b = append(b, `,"horizon":`...)
	b = appendInt(b, c.Horizon)
	b = append(b, `,"playing":`...)
	b = appendBool(b, c.Playing)
	b = append(b, `,"speed":`...)
	b = appendFloat(b, c.Speed)
	b = append(b, `,"quiet":`...)
	b = appendBool(b, c.Quiet)
	b = append(b, `,"interventions":`...)
	b = appendInt(b, c.Interventions)
	if c.Stopped != "" {
		b = append(b, `,"stopped":`...)
		b = appendString(b, c.Stopped)
	}
	if c.StoppedLine != 0 {
		b = append(b, `,"stoppedLine":`...)
		b = appendInt(b, c.StoppedLine)
	}
	if c.Slowed != 0 {
		b = append(b, `,"slowed":`...)
		b = appendFloat(b, c.Slowed)
	}
	return b
}

// AppendJSON implements Frame.
func (f *State) AppendJSON(b []byte) []byte {
	b = append(b, `{"type":"state",`...)
	b = f.Clock.appendJSON(b)
	return append(b, '}')
}

// AppendJSON implements Frame.
func (f *Events) AppendJSON(b []byte) []byte {
	n := 160
	for i := range f.Batches {
		n += 96 + len(f.Batches[i].Events) + 160*len(f.Batches[i].Nodes) + 16*len(f.Batches[i].Arrive)
	}
	if cap(b)-len(b) < n {
		b = append(make([]byte, 0, len(b)+n), b...)
	}
	b = append(b, `{"type":"events",`...)
	b = f.Clock.appendJSON(b)
	b = append(b, `,"batches":[`...)
	b = appendList(b, f.Batches, (*Batch).appendJSON)
	return append(b, "]}"...)
}

func (x *Batch) appendJSON(b []byte) []byte {
	b = append(b, `{"step":`...)
	b = appendInt(b, x.Step)
	b = append(b, `,"t":`...)
	b = appendInt(b, x.T)
	b = append(b, `,"events":`...)
	if len(x.Events) == 0 {
		b = append(b, "[]"...)
	} else {
		b = append(b, x.Events...)
	}
	b = append(b, `,"nodes":[`...)
	b = appendList(b, x.Nodes, (*Node).appendJSON)
	b = append(b, `],"arrive":`...)
	b = x.Arrive.appendJSON(b)
	if x.Network != nil {
		b = append(b, `,"network":`...)
		b = x.Network.appendJSON(b)
	}
	if x.Retime != nil {
		b = append(b, `,"retime":`...)
		b = x.Retime.appendJSON(b)
	}
	return append(b, '}')
}

func (v *Node) appendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = appendInt(b, v.ID)
	b = append(b, `,"alive":`...)
	b = appendBool(b, v.Alive)
	b = append(b, `,"cs":`...)
	b = appendBool(b, v.CS)
	b = append(b, `,"token":`...)
	b = appendBool(b, v.Token)
	b = append(b, `,"leader":`...)
	b = appendInt(b, v.Leader)
	b = append(b, `,"group":`...)
	b = appendInt(b, v.Group)
	b = append(b, `,"state":`...)
	b = appendRaw(b, v.State)
	if v.Rules != nil {
		b = append(b, `,"rules":[`...)
		b = appendList(b, v.Rules, appendStringElem)
		b = append(b, ']')
	}
	return append(b, '}')
}

func (a Arrivals) appendJSON(b []byte) []byte {
	b = append(b, '{')
	b = appendList(b, a, (*Arrival).appendJSON)
	return append(b, '}')
}

// appendJSON writes the arrival as a member of the Arrivals object: "msg":at.
func (x *Arrival) appendJSON(b []byte) []byte {
	b = append(b, '"')
	b = strconv.AppendInt(b, x.Msg, 10)
	b = append(b, `":`...)
	return appendInt(b, x.At)
}

// UnmarshalJSON reads the object back in its order (a map would lose it).
func (a *Arrivals) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		*a = nil
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return errors.New("protocol: arrivals: expected an object")
	}
	out := Arrivals{}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := k.(string)
		id, err := strconv.ParseInt(key, 10, 64)
		if err != nil {
			return fmt.Errorf("protocol: arrivals: %q is not a message id", key)
		}
		var at int
		if err := dec.Decode(&at); err != nil {
			return err
		}
		out = append(out, Arrival{Msg: id, At: at})
	}
	*a = out
	return nil
}

// AppendJSON implements Frame.
func (f *Snapshot) AppendJSON(b []byte) []byte {
	n := 256 + 64*len(f.InFlight) + 32*len(f.Lit)
	for i := range f.Nodes {
		n += 128 + len(f.Nodes[i].State)
	}
	for _, ev := range f.Recent {
		n += len(ev) + 1
	}
	if cap(b)-len(b) < n {
		b = append(make([]byte, 0, len(b)+n), b...)
	}
	b = append(b, `{"type":"snapshot",`...)
	b = f.Clock.appendJSON(b)
	b = append(b, `,"network":`...)
	b = f.Network.appendJSON(b)
	b = append(b, `,"nodes":[`...)
	b = appendList(b, f.Nodes, (*Node).appendJSON)
	b = append(b, `],"inflight":[`...)
	b = appendList(b, f.InFlight, (*InFlight).appendJSON)
	b = append(b, `],"lit":[`...)
	b = appendList(b, f.Lit, (*Lit).appendJSON)
	b = append(b, `],"recent":[`...)
	b = appendList(b, f.Recent, appendRawElem)
	return append(b, "]}"...)
}

func (m *InFlight) appendJSON(b []byte) []byte {
	b = append(b, `{"msg":`...)
	b = appendRaw(b, m.Msg)
	b = append(b, `,"sent":`...)
	b = appendInt(b, m.Sent)
	b = append(b, `,"at":`...)
	b = appendInt(b, m.At)
	return append(b, '}')
}

func (l *Lit) appendJSON(b []byte) []byte {
	b = append(b, `{"node":`...)
	b = appendInt(b, l.Node)
	b = append(b, `,"rule":`...)
	b = appendString(b, l.Rule)
	return append(b, '}')
}

// AppendJSON implements Frame.
func (f *Error) AppendJSON(b []byte) []byte {
	b = append(b, `{"type":"error","code":`...)
	b = appendString(b, f.Code)
	b = append(b, `,"error":`...)
	b = appendString(b, f.Error)
	if f.Ref != 0 {
		b = append(b, `,"ref":`...)
		b = strconv.AppendInt(b, f.Ref, 10)
	}
	if f.Line != 0 {
		b = append(b, `,"line":`...)
		b = appendInt(b, f.Line)
	}
	return append(b, '}')
}
