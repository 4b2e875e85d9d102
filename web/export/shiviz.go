package export

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/teach-dist/playground/runtime/causal"
	"github.com/teach-dist/playground/runtime/sim"
)

// ShiViz (a space-time diagram viewer for logs with vector clocks) reads a log whose
// first line is the regular expression that parses it and whose second line separates
// executions (empty: one execution). Ours is its default expression: per event a line
// "host {vector clock as JSON}" and then a line describing the event. Clocks come from
// runtime/causal, the same happened-before the space-time diagram draws.
const shivizRegexp = `(?<host>\S*) (?<clock>{.*})\n(?<event>.*)`

// shiviz builds the log while the run replays.
type shiviz struct {
	ids     []int
	enc     *sim.Encoder
	tracker *causal.Tracker
	entries []shivizEntry
	lastOf  []int // per node index: its latest entry, -1 before one
}

type shivizEntry struct {
	node  int
	clock []int
	text  string
	rules []string
}

func newShiViz(ids []int) *shiviz {
	l := &shiviz{ids: ids, tracker: causal.NewTracker(len(ids)), lastOf: make([]int, len(ids))}
	for i := range l.lastOf {
		l.lastOf[i] = -1
	}
	return l
}

// sink takes the replay's encoder (for messages with ids) and returns the sink.
func (l *shiviz) sink(enc *sim.Encoder) sim.Sink {
	l.enc = enc
	return l.add
}

func (l *shiviz) host(i int) string { return "P" + strconv.Itoa(l.ids[i]) }

func (l *shiviz) add(ev *sim.Event) {
	if ev.Type == sim.EvRule {
		// A rule names the code its process's latest event ran: it annotates that
		// event rather than being one (as in runtime/causal).
		if ev.Node >= 0 && ev.Node < len(l.lastOf) && l.lastOf[ev.Node] >= 0 {
			e := &l.entries[l.lastOf[ev.Node]]
			e.rules = append(e.rules, ev.Rule)
		}
		return
	}
	c := l.tracker.Next(causal.FromSim(ev))
	if c.Process < 0 {
		return
	}
	var text string
	switch ev.Type {
	case sim.EvSend:
		text = "send " + ev.Msg.Type + " to " + l.host(ev.Msg.To) + " " + string(l.enc.AppendMessage(nil, &ev.Msg))
	case sim.EvDeliver:
		text = "deliver " + ev.Msg.Type + " from " + l.host(ev.Msg.From) + " " + string(l.enc.AppendMessage(nil, &ev.Msg))
	case sim.EvRequest:
		text = "request the CS"
	case sim.EvEnter:
		text = "enter the CS"
	case sim.EvExit:
		text = "exit the CS"
	case sim.EvElect:
		text = "start an election"
	case sim.EvLeader:
		text = "take P" + strconv.Itoa(ev.Leader) + " as leader"
	case sim.EvTimer:
		text = "timer " + ev.Name + " fires"
	default:
		text = ev.Type.String()
	}
	l.lastOf[c.Process] = len(l.entries)
	l.entries = append(l.entries, shivizEntry{node: c.Process, clock: c.Vector, text: "t=" + strconv.Itoa(ev.T) + " " + text})
}

// bytes writes the log.
func (l *shiviz) bytes() []byte {
	var b strings.Builder
	b.WriteString(shivizRegexp)
	b.WriteString("\n\n")
	for _, e := range l.entries {
		b.WriteString(l.host(e.node))
		b.WriteByte(' ')
		// Only the processes this event knows of: ShiViz reads a missing host as 0.
		clock := make(map[string]int)
		for k, v := range e.clock {
			if v > 0 {
				clock[l.host(k)] = v
			}
		}
		j, _ := json.Marshal(clock) // sorted keys: the same run gives the same log
		b.Write(j)
		b.WriteByte('\n')
		b.WriteString(e.text)
		if len(e.rules) > 0 {
			b.WriteString(" [" + strings.Join(e.rules, ", ") + "]")
		}
		b.WriteByte('\n')
	}
	return []byte(b.String())
}
