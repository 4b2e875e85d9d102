package session

import (
	"github.com/teach-dist/playground/runtime/protocol"
	"github.com/teach-dist/playground/scenarios"
)

// The session's frames as values of runtime/protocol, which encodes each once for every
// subscriber.

// clock is the clock of the step shown. seq is the seq of the latest trace event shown
// (-1: none yet): captions key on it.
func (s *Session) clockFrame(step, t int, seq int64) protocol.Clock {
	c := protocol.Clock{Step: step, T: t, Seq: seq, Horizon: max(s.horizon, step), Playing: s.playing,
		Speed: s.speed, Quiet: s.quiet && s.pending == nil, Interventions: s.applied}
	if s.playing && s.factor < 1 {
		c.Slowed = s.factor
	}
	if s.failed != nil {
		c.Stopped = s.failed.Error()
		c.StoppedLine = scenarios.SourceLine(s.failed)
	}
	return c
}

func (s *Session) eventsFrame(bs []batch) protocol.Encoded {
	last := bs[len(bs)-1]
	f := &protocol.Events{Clock: s.clockFrame(last.step, last.t, last.seq), Batches: make([]protocol.Batch, len(bs))}
	for i := range bs {
		f.Batches[i] = *bs[i].wire
	}
	return protocol.Encode(f)
}

func (s *Session) stateFrame() protocol.Encoded {
	return protocol.Encode(&protocol.State{Clock: s.clockFrame(s.sim.Steps(), s.sim.Now(), s.lastSeq)})
}

func (s *Session) helloFrame() protocol.Encoded {
	h := &protocol.Hello{
		Proto: protocol.Proto, Session: s.id, Algorithm: s.algorithm, Name: s.setup.Name,
		Scenario: s.setup.Scenario, IDs: s.cfg.IDs, Network: protocol.NetworkOf(&s.cfg.Network),
		Seed: s.cfg.Seed, CS: s.cfg.CS, Rate: Rate, MinSpeed: MinSpeed, MaxSpeed: MaxSpeed,
		RecentMax: Recent, MaxEvents: s.opts.MaxEvents,
	}
	if s.setup.Source && s.cfg.Spec != nil {
		h.Rules = protocol.RulesOf(s.cfg.Spec.Rules)
		h.Vars = protocol.VarsOf(s.cfg.Spec.Vars)
		h.Title, h.Own = s.cfg.Spec.Title, s.cfg.Spec.Name
	}
	return protocol.Encode(h)
}

func (s *Session) snapshotFrame() protocol.Encoded {
	snap := s.sim.Snapshot()
	nw := s.sim.Network()
	f := &protocol.Snapshot{Clock: s.clockFrame(snap.Step, snap.T, s.lastSeq), Network: protocol.NetworkOf(&nw),
		Nodes: views(&snap), InFlight: make([]protocol.InFlight, len(snap.InFlight)),
		Lit: make([]protocol.Lit, len(s.lit)), Recent: s.recent()}
	for i := range f.Nodes {
		f.Nodes[i].Rules = s.rules[i]
		if f.Nodes[i].Rules == nil {
			f.Nodes[i].Rules = []string{}
		}
	}
	// The messages are encoded into one buffer, then cut: one allocation for them all.
	msgs := make([]byte, 0, 64*len(snap.InFlight))
	ends := make([]int, len(snap.InFlight))
	for i := range snap.InFlight {
		msgs = s.enc.AppendMessage(msgs, &snap.InFlight[i].Msg)
		ends[i] = len(msgs)
	}
	for i, m := range snap.InFlight {
		from := 0
		if i > 0 {
			from = ends[i-1]
		}
		f.InFlight[i] = protocol.InFlight{Msg: msgs[from:ends[i]:ends[i]], Sent: s.sentAt[m.Msg.ID], At: m.At}
	}
	for i, l := range s.lit {
		f.Lit[i] = protocol.Lit{Node: l.node, Rule: l.rule}
	}
	return protocol.Encode(f)
}

// errorFrame is an error frame to one client; ref is the client's ref (0: none).
func errorFrame(ref int64, code, msg string, line int) protocol.Encoded {
	return protocol.Encode(&protocol.Error{Code: code, Error: msg, Ref: ref, Line: line})
}
