package sim

import (
	"io"
	"strconv"
)

// EventType is the `type` of a trace v1 event.
type EventType uint8

const (
	EvSend EventType = iota
	EvDeliver
	EvDrop
	EvRule
	EvRequest
	EvEnter
	EvExit
	EvElect
	EvLeader
	EvCrash
	EvRecover
	EvTimer
	EvViolation
	EvPartition
	EvHeal
	EvEnd
)

var eventNames = [...]string{"send", "deliver", "drop", "rule", "request", "enter", "exit",
	"elect", "leader", "crash", "recover", "timer", "violation", "partition", "heal", "end"}

func (t EventType) String() string { return enumName(eventNames[:], t) }

// Event is one line of the trace (CONTRACT: trace v1, docs/trace.md). Node indexes are
// turned into the scenario's ids when the event is encoded.
type Event struct {
	Seq  int64
	T    int
	Type EventType
	Node int // index; -1 when the event has none

	Msg    Message // send, deliver, drop
	Reason string  // drop: why
	Rule   string  // rule
	Why    string  // rule: which case applied, if the rule has cases
	Name   string  // timer
	Leader int     // leader: the id this node now takes as leader

	Property string // violation
	Detail   string // violation
	// Nodes (violation) are the processes a violation is about, as indexes, in index
	// order: those in the CS, the one waiting too long, those deadlocked, those whose
	// leaders disagree. Cycle (deadlock) is the wait-for cycle, closed on its first
	// process: each waits for the next. Both are written as ids ("nodes", "cycle").
	Nodes []int
	Cycle []int

	Groups [][]int // partition, as ids

	Totals *Totals // end
}

// Totals are the figures of the `end` event. Messages, Delivered and Dropped count the
// algorithm's messages; application messages (AppMessage) are counted in App only.
type Totals struct {
	Messages   int // sent (including those lost on the way)
	Delivered  int
	Dropped    int
	App        int // application messages sent (ActTell); written only when non-zero
	Entries    int
	Elections  int
	Violations int
	Steps      int
}

// Encoder writes events as trace v1 JSON lines. It needs the ids and the algorithm's
// message schema to name nodes and payload fields.
type Encoder struct {
	ids  []int
	spec *Spec
}

// NewEncoder returns an encoder for a run with these ids.
func NewEncoder(spec *Spec, ids []int) *Encoder { return &Encoder{ids: ids, spec: spec} }

func (e *Encoder) id(i int) int64 {
	if i >= 0 && i < len(e.ids) {
		return int64(e.ids[i])
	}
	return int64(i)
}

// Append writes ev as one JSON object (no newline).
func (e *Encoder) Append(b []byte, ev *Event) []byte {
	b = append(b, `{"seq":`...)
	b = strconv.AppendInt(b, ev.Seq, 10)
	b = append(b, `,"t":`...)
	b = strconv.AppendInt(b, int64(ev.T), 10)
	b = append(b, `,"type":"`...)
	b = append(b, ev.Type.String()...)
	b = append(b, '"')
	if ev.Node >= 0 && ev.Type != EvEnd && ev.Type != EvViolation {
		b = append(b, `,"node":`...)
		b = strconv.AppendInt(b, e.id(ev.Node), 10)
	}
	switch ev.Type {
	case EvSend, EvDeliver, EvDrop:
		b = append(b, `,"msg":`...)
		b = e.AppendMessage(b, &ev.Msg)
		if ev.Reason != "" {
			b = appendStringField(b, `,"reason":`, ev.Reason)
		}
	case EvRule:
		b = appendStringField(b, `,"rule":`, ev.Rule)
		if ev.Why != "" {
			b = appendStringField(b, `,"why":`, ev.Why)
		}
	case EvTimer:
		b = appendStringField(b, `,"name":`, ev.Name)
	case EvLeader:
		b = append(b, `,"leader":`...)
		b = strconv.AppendInt(b, int64(ev.Leader), 10)
	case EvViolation:
		b = appendStringField(b, `,"property":`, ev.Property)
		b = appendStringField(b, `,"detail":`, ev.Detail)
		if ev.Nodes != nil {
			b = append(b, `,"nodes":`...)
			b = e.appendIDs(b, ev.Nodes)
		}
		if ev.Cycle != nil {
			b = append(b, `,"cycle":`...)
			b = e.appendIDs(b, ev.Cycle)
		}
	case EvPartition:
		b = append(b, `,"groups":[`...)
		for i, g := range ev.Groups {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendInts(b, g)
		}
		b = append(b, ']')
	case EvEnd:
		t := ev.Totals
		totals := [...]struct {
			key string
			n   int
		}{{"messages", t.Messages}, {"entries", t.Entries}, {"delivered", t.Delivered}, {"dropped", t.Dropped},
			{"elections", t.Elections}, {"violations", t.Violations}, {"steps", t.Steps}, {"app", t.App}}
		for _, f := range totals {
			// Only runs with application messages have "app", so older traces stay as they were.
			if f.key == "app" && f.n == 0 {
				continue
			}
			b = append(b, `,"`...)
			b = append(b, f.key...)
			b = append(b, `":`...)
			b = strconv.AppendInt(b, int64(f.n), 10)
		}
	}
	return append(b, '}')
}

// AppendMessage writes a message with the payload keys its type declares. A type the
// algorithm does not declare (AppMessage) has no payload keys.
func (e *Encoder) AppendMessage(b []byte, m *Message) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, m.ID, 10)
	b = append(b, `,"type":`...)
	b = appendString(b, m.Type)
	b = append(b, `,"from":`...)
	b = strconv.AppendInt(b, e.id(m.From), 10)
	b = append(b, `,"to":`...)
	b = strconv.AppendInt(b, e.id(m.To), 10)
	if mt := e.spec.MessageType(m.Type); mt != nil {
		if mt.TS != "" {
			b = append(b, ',')
			b = appendString(b, mt.TS)
			b = append(b, ':')
			b = strconv.AppendInt(b, int64(m.TS), 10)
		}
		if mt.Arg != "" {
			b = append(b, ',')
			b = appendString(b, mt.Arg)
			b = append(b, ':')
			b = strconv.AppendInt(b, int64(m.Arg), 10)
		}
		if mt.Vec != "" {
			b = append(b, ',')
			b = appendString(b, mt.Vec)
			b = append(b, ':')
			b = appendInts(b, m.Vec)
		}
		if mt.Queue != "" {
			b = append(b, ',')
			b = appendString(b, mt.Queue)
			b = append(b, ':')
			b = appendInts(b, m.Queue)
		}
	}
	return append(b, '}')
}

// appendIDs writes node indexes as a JSON array of their ids.
func (e *Encoder) appendIDs(b []byte, idx []int) []byte {
	b = append(b, '[')
	for k, i := range idx {
		if k > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, e.id(i), 10)
	}
	return append(b, ']')
}

// appendStringField writes a string field: key is its `,"name":` prefix.
func appendStringField(b []byte, key, v string) []byte {
	return appendString(append(b, key...), v)
}

// AppendLine writes ev followed by a newline.
func (e *Encoder) AppendLine(b []byte, ev *Event) []byte {
	return append(e.Append(b, ev), '\n')
}

// Lines returns a sink that appends every event to *buf as a JSON line.
func (e *Encoder) Lines(buf *[]byte) Sink {
	return func(ev *Event) { *buf = e.AppendLine(*buf, ev) }
}

// To returns a sink that writes every event to w as a JSON line. A failed write does
// not stop the run: the first error is kept in *werr for the caller, after the run.
func (e *Encoder) To(w io.Writer, werr *error) Sink {
	var line []byte
	return func(ev *Event) {
		line = e.AppendLine(line[:0], ev)
		if _, err := w.Write(line); err != nil && *werr == nil {
			*werr = err
		}
	}
}

// Recorder keeps a copy of every event, for tests and replays.
type Recorder struct{ Events []Event }

// Sink returns the recorder's sink.
func (r *Recorder) Sink() Sink {
	return func(ev *Event) {
		c := *ev
		c.Msg = ev.Msg.Clone()
		r.Events = append(r.Events, c)
	}
}
