package session

import (
	"encoding/json"
	"strconv"

	"github.com/teach-dist/playground/runtime/sim"
)

// Proto is the version of the WebSocket protocol (docs/protocol.md).
const Proto = 1

// Frames are built by hand where they carry trace events, which are already JSON: the
// trace encoder's output goes to the browser untouched, so it is trace v1 exactly.

func appendInt(b []byte, v int) []byte { return strconv.AppendInt(b, int64(v), 10) }

func appendBool(b []byte, v bool) []byte { return strconv.AppendBool(b, v) }

func appendFloat(b []byte, v float64) []byte { return strconv.AppendFloat(b, v, 'g', -1, 64) }

func appendString(b []byte, v string) []byte {
	q, _ := json.Marshal(v)
	return append(b, q...)
}

func appendNode(b []byte, v *nodeView, rules []string) []byte {
	b = append(b, `{"id":`...)
	b = appendInt(b, v.id)
	b = append(b, `,"alive":`...)
	b = appendBool(b, v.alive)
	b = append(b, `,"cs":`...)
	b = appendBool(b, v.cs)
	b = append(b, `,"token":`...)
	b = appendBool(b, v.token)
	b = append(b, `,"leader":`...)
	b = appendInt(b, v.leader)
	b = append(b, `,"group":`...)
	b = appendInt(b, v.group)
	b = append(b, `,"state":`...)
	b = append(b, v.state...)
	if rules != nil {
		b = append(b, `,"rules":[`...)
		for i, r := range rules {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, r)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// appendClock writes the fields every state-bearing frame shares. seq is the seq of
// the latest trace event shown (-1: none yet): captions key on it.
func (s *Session) appendClock(b []byte, step, t int, seq int64) []byte {
	b = append(b, `"step":`...)
	b = appendInt(b, step)
	b = append(b, `,"t":`...)
	b = appendInt(b, t)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, `,"horizon":`...)
	b = appendInt(b, max(s.horizon, step))
	b = append(b, `,"playing":`...)
	b = appendBool(b, s.playing)
	b = append(b, `,"speed":`...)
	b = appendFloat(b, s.speed)
	b = append(b, `,"quiet":`...)
	b = appendBool(b, s.quiet && s.pending == nil)
	b = append(b, `,"interventions":`...)
	b = appendInt(b, s.applied)
	if s.failed != nil {
		b = append(b, `,"stopped":`...)
		b = appendString(b, s.failed.Error())
	}
	return b
}

func (s *Session) eventsFrame(bs []batch) []byte {
	last := bs[len(bs)-1]
	n := 128
	for _, b := range bs {
		n += len(b.json) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, `{"type":"events",`...)
	b = s.appendClock(b, last.step, last.t, last.seq)
	b = append(b, `,"batches":[`...)
	for i, x := range bs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, x.json...)
	}
	return append(b, "]}"...)
}

func (s *Session) stateFrame() []byte {
	b := []byte(`{"type":"state",`)
	b = s.appendClock(b, s.sim.Steps(), s.sim.Now(), s.lastSeq)
	return append(b, '}')
}

func (s *Session) helloFrame() []byte {
	b := []byte(`{"type":"hello","proto":`)
	b = appendInt(b, Proto)
	b = append(b, `,"session":`...)
	b = appendString(b, s.id)
	b = append(b, `,"algorithm":`...)
	b = appendString(b, s.algorithm)
	b = append(b, `,"name":`...)
	b = appendString(b, s.setup.Name)
	b = append(b, `,"scenario":`...)
	if len(s.setup.Scenario) > 0 {
		b = append(b, s.setup.Scenario...)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"ids":[`...)
	for i, id := range s.cfg.IDs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendInt(b, id)
	}
	b = append(b, `],"network":`...)
	b = appendNetwork(b, &s.cfg.Network)
	b = append(b, `,"seed":`...)
	b = strconv.AppendUint(b, s.cfg.Seed, 10)
	b = append(b, `,"cs":`...)
	b = appendInt(b, s.cfg.CS)
	b = append(b, `,"rate":`...)
	b = appendFloat(b, Rate)
	b = append(b, `,"minSpeed":`...)
	b = appendFloat(b, MinSpeed)
	b = append(b, `,"maxSpeed":`...)
	b = appendFloat(b, MaxSpeed)
	b = append(b, `,"recentMax":`...)
	b = appendInt(b, Recent)
	b = append(b, `,"maxEvents":`...)
	b = appendInt(b, s.opts.MaxEvents)
	return append(b, '}')
}

// appendNetwork writes a network model: {"delay":[min,max],"fifo":..,"loss":..,"hold":..}.
func appendNetwork(b []byte, nw *sim.Network) []byte {
	b = append(b, `{"delay":[`...)
	b = appendInt(b, nw.DelayMin)
	b = append(b, ',')
	b = appendInt(b, nw.DelayMax)
	b = append(b, `],"fifo":`...)
	b = appendBool(b, nw.FIFO)
	b = append(b, `,"loss":`...)
	b = appendFloat(b, nw.Loss)
	b = append(b, `,"hold":`...)
	b = appendBool(b, nw.Hold)
	return append(b, '}')
}

func (s *Session) snapshotFrame() []byte {
	snap := s.sim.Snapshot()
	b := make([]byte, 0, 4096)
	b = append(b, `{"type":"snapshot",`...)
	b = s.appendClock(b, snap.Step, snap.T, s.lastSeq)
	b = append(b, `,"network":`...)
	nw := s.sim.Network()
	b = appendNetwork(b, &nw)
	b = append(b, `,"nodes":[`...)
	for i, v := range views(&snap) {
		if i > 0 {
			b = append(b, ',')
		}
		rules := s.rules[i]
		if rules == nil {
			rules = []string{}
		}
		b = appendNode(b, &v, rules)
	}
	b = append(b, `],"inflight":[`...)
	for i, f := range snap.InFlight {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"msg":`...)
		b = s.enc.AppendMessage(b, &f.Msg)
		b = append(b, `,"sent":`...)
		b = appendInt(b, s.sentAt[f.Msg.ID])
		b = append(b, `,"at":`...)
		b = appendInt(b, f.At)
		b = append(b, '}')
	}
	b = append(b, `],"lit":[`...)
	for i, l := range s.lit {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"node":`...)
		b = appendInt(b, l.node)
		b = append(b, `,"rule":`...)
		b = appendString(b, l.rule)
		b = append(b, '}')
	}
	b = append(b, `],"recent":[`...)
	for i, ev := range s.recent() {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, ev...)
	}
	return append(b, "]}"...)
}

// ErrorFrame is the frame that tells one client its frame or command failed; ref is
// the client's ref (0: none).
func ErrorFrame(ref int64, code, msg string) []byte { return errorFrame(ref, code, msg) }

func errorFrame(ref int64, code, msg string) []byte {
	b := []byte(`{"type":"error","code":`)
	b = appendString(b, code)
	b = append(b, `,"error":`...)
	b = appendString(b, msg)
	if ref != 0 {
		b = append(b, `,"ref":`...)
		b = strconv.AppendInt(b, ref, 10)
	}
	return append(b, '}')
}
