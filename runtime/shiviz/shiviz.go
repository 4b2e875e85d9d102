// Package shiviz writes a run as a ShiViz log. ShiViz (DistributedClocks/shiviz) draws
// a space-time diagram from a log of events that carry vector clocks. Its rules, which
// this package follows:
//
//   - An uploaded file's first line is the regular expression that parses the log and
//     its second line the delimiter between executions (blank: one execution); the log
//     is the rest. A pasted log is parsed with the expression in ShiViz's form, whose
//     default is Regexp. The log is written in that default shape, so both work.
//   - A clock is a JSON object from host to count. Each host's own entry starts at 1 and
//     grows by exactly 1 per event of that host; a host appears only once it has an event.
//   - ShiViz draws an arrow into an event only where the event's clock has learnt of
//     another host's event it did not know of before. A message that arrives after its
//     receiver already heard of its send another way (a FIFO overtaking) has no arrow.
//
// The clocks are runtime/causal's (the happened-before of the playground's space-time
// diagram), shifted by one: every process starts its line with a start event, so each
// process of the run has a timeline, even one that never does anything, and no export
// is empty.
package shiviz

import (
	"bufio"
	"io"
	"strconv"

	"github.com/teach-dist/playground/runtime/causal"
	"github.com/teach-dist/playground/runtime/sim"
)

// Regexp is ShiViz's default log-parsing expression (js/shiviz.js, index.html): a line
// describing the event, then a line "host {clock}". The log's first line is this.
const Regexp = `(?<event>.*)\n(?<host>\S*) (?<clock>{.*})`

// Writer writes the log while a run replays: give Sink to the kernel, then Close.
// It holds back one event at a time (the rules its process fires next are appended to
// it), so memory does not grow with the run.
type Writer struct {
	w       *bufio.Writer
	enc     *sim.Encoder
	ids     []int
	tracker *causal.Tracker
	pending []entry    // written at the next event of a process: the start events, then one
	waiting [][]string // per process: rules fired before its event of the same step
	line    []byte
	first   []int // the clock of the first process's last event written (nil: its start)
}

type entry struct {
	node  int
	t     int
	clock []int // runtime/causal's vector clock; nil for a start event
	text  []byte
	rules []string
}

// New starts a log of a run with these process ids; enc encodes messages as in the
// trace. It writes through a buffer: Close flushes it and reports a failed write.
func New(w io.Writer, enc *sim.Encoder, ids []int) *Writer {
	l := &Writer{w: bufio.NewWriter(w), enc: enc, ids: ids, tracker: causal.NewTracker(len(ids)), waiting: make([][]string, len(ids))}
	// The second line is empty: one execution.
	_, _ = l.w.WriteString(Regexp + "\n\n")
	for i := range ids {
		l.pending = append(l.pending, entry{node: i, text: []byte("start")})
	}
	return l
}

// Sink returns the kernel sink that adds each trace event to the log.
func (l *Writer) Sink() sim.Sink { return l.add }

func (l *Writer) add(ev *sim.Event) {
	if ev.Type == sim.EvRule {
		l.rule(ev)
		return
	}
	c := l.tracker.Next(causal.FromSim(ev))
	if c.Process < 0 {
		return // drops, partitions, violations, the end: no process's event
	}
	l.flush()
	e := entry{node: c.Process, t: ev.T, clock: c.Vector, text: l.describe(ev), rules: l.waiting[c.Process]}
	l.waiting[c.Process] = nil
	l.pending = append(l.pending, e)
}

// rule appends a rule's label to the event of the step that fired it. The kernel
// writes a step's own event first and its rules after (docs/trace.md), so that is the
// event just before the rule when it is the same process's at the same time (and the
// start events take the initial rules). Otherwise the step had no event of its own
// before its rules (releasing the CS fires RR1, then exits): the rule waits for the
// process's next event.
func (l *Writer) rule(ev *sim.Event) {
	p := ev.Node
	if p < 0 || p >= len(l.ids) {
		return
	}
	for k := range l.pending {
		if e := &l.pending[k]; e.node == p && e.t == ev.T {
			e.rules = append(e.rules, ev.Rule)
			return
		}
	}
	l.waiting[p] = append(l.waiting[p], ev.Rule)
}

func (l *Writer) host(i int) string { return "P" + strconv.Itoa(l.ids[i]) }

func (l *Writer) describe(ev *sim.Event) []byte {
	var b []byte
	switch ev.Type {
	case sim.EvSend:
		b = append(b, "send "+ev.Msg.Type+" to "+l.host(ev.Msg.To)+" "...)
		b = l.enc.AppendMessage(b, &ev.Msg)
	case sim.EvDeliver:
		b = append(b, "deliver "+ev.Msg.Type+" from "+l.host(ev.Msg.From)+" "...)
		b = l.enc.AppendMessage(b, &ev.Msg)
	case sim.EvRequest:
		b = append(b, "request the CS"...)
	case sim.EvEnter:
		b = append(b, "enter the CS"...)
	case sim.EvExit:
		b = append(b, "exit the CS"...)
	case sim.EvElect:
		b = append(b, "start an election"...)
	case sim.EvLeader:
		b = append(b, "take P"+strconv.Itoa(ev.Leader)+" as leader"...)
	case sim.EvTimer:
		b = append(b, "timer "+ev.Name+" fires"...)
	default:
		b = append(b, ev.Type.String()...)
	}
	return b
}

// flush writes the events held back.
func (l *Writer) flush() {
	for k := range l.pending {
		l.write(&l.pending[k])
	}
	l.pending = l.pending[:0]
}

// write writes one event: its description, then "host {clock}".
func (l *Writer) write(e *entry) {
	b := append(l.line[:0], "t="...)
	b = strconv.AppendInt(b, int64(e.t), 10)
	b = append(b, ' ')
	b = append(b, e.text...)
	for k, r := range e.rules {
		if k == 0 {
			b = append(b, " ["...)
		} else {
			b = append(b, ", "...)
		}
		b = append(b, r...)
		if k == len(e.rules)-1 {
			b = append(b, ']')
		}
	}
	b = append(b, '\n')
	b = append(b, l.host(e.node)...)
	b = append(b, " {"...)
	// ShiViz counts the start event, so every count of runtime/causal is one more. A
	// process this event knows nothing of is left out (ShiViz reads it as 0). Keys are
	// in process order, so the same run gives the same log.
	first := true
	for k := range l.ids {
		v := 1 // a start event knows only itself
		switch {
		case e.clock != nil && e.clock[k] > 0:
			v = e.clock[k] + 1
		case k != e.node:
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, l.host(k)...)
		b = append(b, `":`...)
		b = strconv.AppendInt(b, int64(v), 10)
	}
	b = append(b, "}\n"...)
	l.line = b
	if e.node == 0 {
		l.first = append(l.first[:0], e.clock...)
	}
	_, _ = l.w.Write(b)
}

// Note ends the log with an event of the first process at time t that says text (an
// export cut short says so in the log itself, where ShiViz shows it). Write nothing
// after it but Close.
func (l *Writer) Note(t int, text string) {
	l.flush()
	if len(l.ids) == 0 {
		return
	}
	clock := make([]int, len(l.ids))
	copy(clock, l.first)
	clock[0]++
	l.write(&entry{node: 0, t: t, clock: clock, text: []byte(text)})
}

// Close writes what is held back and flushes; it returns the first write error.
func (l *Writer) Close() error {
	l.flush()
	return l.w.Flush()
}
