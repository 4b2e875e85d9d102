package protocol

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// Compact follower frames: protocol 2 of a lecture's follower socket (docs/protocol.md,
// "Compact follower frames"). A follower keeps the run's view (the clock, every
// process, the messages in flight); an events frame then only says what the follower
// cannot work out from it: which message was delivered (by id), which rule fired, the
// new messages (their id is the next one, their sender the process acting), the state
// variables that changed, the arrival times as offsets. Every other frame goes as it
// is, in a one-element array.
//
// The Compactor (the lecture's, once per frame for every follower) and the Expander
// (a tool's; static/compact.js is the browser's) keep the same view by applying the
// same protocol-1 frames to it, so what one leaves out the other puts back. The
// Compactor checks each frame by expanding it before it lets it go, and sends the
// frame whole when the expansion is not byte for byte the original.

// ProtoCompact is the version of the compact follower frames.
const ProtoCompact = 2

// Compactor writes the compact frames of one lecture's stream.
type Compactor struct{ v view }

// NewCompactor returns a compactor that has seen nothing yet.
func NewCompactor() *Compactor {
	c := &Compactor{}
	c.v.reset()
	return c
}

// Encode returns the compact form of frame f (whose protocol-1 bytes are v1) and
// follows it. Frames other than events, and an events frame that does not come back
// exactly, go whole: [v1].
func (c *Compactor) Encode(f Frame, v1 []byte) []byte {
	switch f := f.(type) {
	case *Events:
		w := c.v.clone()
		out, err := compactEvents(&w, f)
		if err == nil {
			x := Expander{v: c.v.clone()}
			back, err := x.expandEvents(out)
			if err == nil && bytes.Equal(back, v1) {
				c.v = w
				return out
			}
		}
		_ = c.v.follow(f) // a frame that cannot be read was never sent by a session
	case *Snapshot:
		_ = c.v.applySnapshot(f)
	case *State:
		c.v.clock = f.Clock
	case *Hello:
		c.v.reset()
	}
	return Whole(v1)
}

// Same reports whether a follower starting from snapshot s would have the view this
// compactor has: when not, the lecture sends the snapshot to every follower before it
// makes the checkpoint, so they all start over from it.
func (c *Compactor) Same(s *Snapshot) bool {
	var w view
	if w.applySnapshot(s) != nil {
		return false
	}
	return c.v.same(&w)
}

// Whole is a protocol-1 frame as a compact stream carries it: [v1].
func Whole(v1 []byte) []byte {
	b := make([]byte, 0, len(v1)+2)
	b = append(b, '[')
	b = append(b, v1...)
	return append(b, ']')
}

// follow applies a whole events frame to the view.
func (v *view) follow(f *Events) error {
	for _, bt := range f.Batches {
		evs, err := arrayItems(bt.Events)
		if err != nil {
			return err
		}
		for _, ev := range evs {
			var e struct {
				Type string          `json:"type"`
				Msg  json.RawMessage `json:"msg"`
			}
			if err := json.Unmarshal(ev, &e); err != nil {
				return err
			}
			if e.Msg != nil {
				var h msgHead
				if err := json.Unmarshal(e.Msg, &h); err != nil {
					return err
				}
				v.applyEvent(e.Type, h.ID, e.Msg)
			}
		}
		if err := v.applyNodes(bt.Nodes); err != nil {
			return err
		}
	}
	v.clock = f.Clock
	return nil
}

// compactEvents writes [C, B...] and moves w past the frame.
func compactEvents(w *view, f *Events) ([]byte, error) {
	b := make([]byte, 0, 64)
	var body []byte
	seq, step, t := w.clock.Seq, w.clock.Step, w.clock.T
	for i := range f.Batches {
		bt := &f.Batches[i]
		body = append(body, ',')
		var err error
		body, seq, err = compactBatch(body, w, bt, seq, step, t)
		if err != nil {
			return nil, err
		}
		step, t = bt.Step, bt.T
	}
	pred := w.clock
	pred.Step, pred.T, pred.Seq, pred.Horizon = step, t, seq, max(w.clock.Horizon, step)
	b = append(b, '[')
	b = appendDelta(b, clockDelta, &pred, &f.Clock, "{", "0")
	if len(b) == 2 && b[1] == '0' && len(body) > 0 {
		b = b[:1] // a clock as predicted is left out: the first batch starts at once
		body = body[1:]
	}
	b = append(b, body...)
	w.clock = f.Clock
	return append(b, ']'), nil
}

// compactBatch writes [E, N, A, dt, dstep, X] (batchTail), its trailing parts left out
// when they say nothing.
func compactBatch(b []byte, w *view, bt *Batch, seq int64, prevStep, prevT int) ([]byte, int64, error) {
	evs, err := arrayItems(bt.Events)
	if err != nil {
		return nil, 0, err
	}
	b = append(b, "[["...)
	cur := w.holder() // the process of the previous event
	var sent []int64
	var memo sendMemo
	repeat := false // the latest element is a list of sends like the previous one
	for i, ev := range evs {
		mark := len(b)
		if i > 0 {
			b = append(b, ',')
		}
		keys, vals, err := objectFields(ev)
		if err != nil {
			return nil, 0, err
		}
		var e struct {
			Seq  int64           `json:"seq"`
			T    int             `json:"t"`
			Type string          `json:"type"`
			Node *int            `json:"node"`
			Msg  json.RawMessage `json:"msg"`
		}
		if err := json.Unmarshal(ev, &e); err != nil {
			return nil, 0, err
		}
		var mh msgHead
		if e.Msg != nil {
			if err := json.Unmarshal(e.Msg, &mh); err != nil {
				return nil, 0, err
			}
		}
		at := len(b)
		b = compactEvent(b, w, &memo, ev, keys, vals, e.Seq == seq+1 && e.T == bt.T, e.Type, e.Node, cur, mh, e.Msg)
		// [a] after [..., z]: sends like the previous one go as one list, [..., z, a].
		one := isRepeat(b[at:])
		if one && repeat {
			to := append([]byte(nil), b[at+1:len(b)-1]...)
			b = append(append(append(b[:mark-1], ','), to...), ']')
		}
		repeat = one
		seq = e.Seq
		if e.Node != nil {
			cur = *e.Node
		}
		if e.Msg != nil {
			if e.Type == "send" {
				sent = append(sent, mh.ID)
			}
			w.applyEvent(e.Type, mh.ID, e.Msg)
		}
	}
	b = append(b, "],["...)
	for i := range bt.Nodes {
		n := &bt.Nodes[i]
		if i > 0 {
			b = append(b, ',')
		}
		nv, err := newNodeView(*n)
		if err != nil {
			return nil, 0, err
		}
		b = compactNode(b, w, w.nodes[n.ID], nv, n)
		w.nodes[n.ID] = nv
	}
	b = append(b, ']')
	var starts [len(batchTail)]int
	starts[0] = len(b)
	b = compactArrivals(append(b, ','), bt, sent)
	starts[1] = len(b)
	b = appendInt(append(b, ','), bt.T-prevT)
	starts[2] = len(b)
	b = appendInt(append(b, ','), bt.Step-(prevStep+1))
	starts[3] = len(b)
	b = appendDelta(append(b, ','), batchExtra, &noBatch, bt, "{", "{}")
	b = trimTail(b, starts[:])
	return append(b, ']'), seq, nil
}

// isRepeat reports whether a compact event is [to]: a send like the previous one.
func isRepeat(ce []byte) bool {
	if len(ce) < 3 || ce[0] != '[' || ce[len(ce)-1] != ']' {
		return false
	}
	for _, c := range ce[1 : len(ce)-1] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// sendMemo is the latest message sent in the batch: the next one of the same type and
// payload need only say its addressee.
type sendMemo struct {
	typ  string
	vals []json.RawMessage
}

func (m *sendMemo) same(typ string, vals []json.RawMessage) bool {
	if m.vals == nil || m.typ != typ || len(m.vals) != len(vals) {
		return false
	}
	for i := range vals {
		if !bytes.Equal(vals[i], m.vals[i]) {
			return false
		}
	}
	return true
}

// compactEvent writes one trace event in the shortest form that gives it back. S is a
// string of the table (view.slot: -place-1, or the string itself the first time):
//
//	d                     deliver of message lastMsg-d (in flight) to its addressee
//	S                     an event of the process of the previous event (for the first
//	                      event of a batch: the process in the CS) with no other field
//	[S,node]              the same for another process
//	[S(,S)]               rule (and why) fired by the process of the previous event; a
//	                      rule and why seen together before are one S, "rule\x00why"
//	[to,S,v..]            send by that process of the next message id, of type S, whose
//	                      payload keys the table has: their values, in order
//	[to,S(,{..})]         the same for a type the table does not have yet: the payload
//	[to, to..]            sends like the previous send of the batch, to other processes
//	{..}                  any other event without its seq and t (the next seq, the batch's t)
//	{"seq":..}            anything else, whole
func compactEvent(b []byte, w *view, memo *sendMemo, ev json.RawMessage, keys []string, vals []json.RawMessage, clocked bool,
	typ string, node *int, cur int, mh msgHead, msg json.RawMessage) []byte {
	if !clocked || len(keys) < 3 || keys[0] != "seq" || keys[1] != "t" || keys[2] != "type" {
		return append(b, ev...)
	}
	rest := keys[3:]
	same := node != nil && *node == cur
	switch {
	case typ == "deliver" && eqKeys(rest, "node", "msg") && node != nil && *node == mh.To && bytes.Equal(w.inflight[mh.ID], msg) &&
		mh.ID <= w.lastMsg:
		return strconv.AppendInt(b, w.lastMsg-mh.ID, 10)
	case typ == "rule" && same && (eqKeys(rest, "node", "rule") || eqKeys(rest, "node", "rule", "why")) &&
		vals[4][0] == '"' && (len(vals) == 5 || vals[5][0] == '"'):
		var rule, why string
		_ = json.Unmarshal(vals[4], &rule)
		if len(vals) == 6 {
			_ = json.Unmarshal(vals[5], &why)
		}
		if strings.Contains(rule+why, pairSep) {
			break // not a string of the table: the event goes as an object
		}
		b = append(b, '[')
		if len(vals) == 6 {
			if k, ok := w.strIdx[rule+pairSep+why]; ok {
				b = strconv.AppendInt(b, int64(-k-1), 10)
				return append(b, ']')
			}
			b = w.slot(b, vals[4])
			b = append(b, ',')
			b = w.slot(b, vals[5])
			w.learn(rule + pairSep + why)
			return append(b, ']')
		}
		b = w.slot(b, vals[4])
		return append(b, ']')
	case typ == "send" && same && eqKeys(rest, "node", "msg") && mh.ID == w.lastMsg+1:
		mk, mv, err := objectFields(msg)
		if err != nil || len(mk) < 4 || mk[0] != "id" || mk[1] != "type" || mk[2] != "from" || mk[3] != "to" ||
			string(mv[2]) != strconv.Itoa(cur) || mv[1][0] != '"' {
			break
		}
		to, err := strconv.Atoi(string(mv[3]))
		if err != nil || to < 0 {
			break
		}
		var mt string
		_ = json.Unmarshal(mv[1], &mt)
		known, ok := w.payload[mt]
		if ok && !eqKeys(known, mk[4:]...) {
			break // the type's payload changed keys: the event goes as an object
		}
		if ok && memo.same(mt, mv[4:]) {
			b = append(b, '[')
			b = append(b, mv[3]...)
			return append(b, ']')
		}
		memo.typ, memo.vals = mt, append([]json.RawMessage{}, mv[4:]...)
		b = append(b, '[')
		b = append(b, mv[3]...)
		b = append(b, ',')
		b = w.slot(b, mv[1])
		if ok {
			for i := 4; i < len(mk); i++ {
				b = append(b, ',')
				b = append(b, mv[i]...)
			}
			return append(b, ']')
		}
		w.payload[mt] = slices.Clone(mk[4:])
		if len(mk) > 4 {
			b = append(b, ",{"...)
			for i := 4; i < len(mk); i++ {
				if i > 4 {
					b = append(b, ',')
				}
				b = appendString(b, mk[i])
				b = append(b, ':')
				b = append(b, mv[i]...)
			}
			b = append(b, '}')
		}
		return append(b, ']')
	case same && eqKeys(rest, "node") && vals[2][0] == '"':
		return w.slot(b, vals[2])
	case eqKeys(rest, "node") && vals[2][0] == '"' && node != nil && *node >= 0:
		b = append(b, '[')
		b = w.slot(b, vals[2])
		b = append(b, ',')
		b = append(b, vals[3]...)
		return append(b, ']')
	}
	// Without seq and t: the fields from "type" on, as they were written.
	k := bytes.Index(ev, []byte(`"type":`))
	if k < 0 {
		return append(b, ev...)
	}
	b = append(b, '{')
	return append(b, ev[k:]...)
}

// compactNode writes a process's view against the one the follower has:
// [id, [k, v, ...]] gives the state variables that changed, by their place k among the
// state's keys (-k-1 and a list: the old list with these items added at its end; "k"
// and S: a string, as a string of the table); [id, {state}] the whole state when its
// keys changed; a third element, the delta of the other fields (nodeDelta), when any
// changed. A process the follower has no view of, or a view with rules, goes whole.
func compactNode(b []byte, w *view, old, nv *nodeView, n *Node) []byte {
	if old == nil || n.Rules != nil {
		return n.appendJSON(b)
	}
	b = append(b, '[')
	b = appendInt(b, n.ID)
	b = append(b, ',')
	if eqKeys(old.keys, nv.keys...) {
		b = append(b, '[')
		first := true
		for i := range nv.vals {
			if bytes.Equal(nv.vals[i], old.vals[i]) {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			if tail, ok := appended(old.vals[i], nv.vals[i]); ok {
				b = appendInt(b, -i-1) // the old list and these items
				b = append(b, ',')
				b = append(b, tail...)
				continue
			}
			if v := nv.vals[i]; len(v) > 0 && v[0] == '"' {
				b = append(b, '"') // a string of the table: the place as a string
				b = appendInt(b, i)
				b = append(b, `",`...)
				b = w.slot(b, v)
				continue
			}
			b = appendInt(b, i)
			b = append(b, ',')
			b = append(b, nv.vals[i]...)
		}
		b = append(b, ']')
	} else {
		b = appendRaw(b, n.State)
	}
	b = appendDelta(b, nodeDelta, &old.Node, n, ",{", "")
	return append(b, ']')
}

// appended reports whether list now is list old with items added at its end, and
// returns those items as a list.
func appended(old, now json.RawMessage) (json.RawMessage, bool) {
	n := len(old)
	if n < 3 || old[0] != '[' || old[n-1] != ']' || len(now) <= n || !bytes.Equal(now[:n-1], old[:n-1]) || now[n-1] != ',' {
		return nil, false
	}
	tail := append(json.RawMessage{'['}, now[n:]...)
	return tail, true
}

// compactArrivals writes the arrival times as offsets from the batch's time, one per
// message sent in the batch in order ([2,1]), or whole ({"13":9}) when they are not
// exactly those messages or one is held.
func compactArrivals(b []byte, bt *Batch, sent []int64) []byte {
	ok := len(bt.Arrive) == len(sent)
	for i := 0; ok && i < len(sent); i++ {
		ok = bt.Arrive[i].Msg == sent[i] && bt.Arrive[i].At >= bt.T
	}
	if !ok {
		return bt.Arrive.appendJSON(b)
	}
	b = append(b, '[')
	for i, a := range bt.Arrive {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendInt(b, a.At-bt.T)
	}
	return append(b, ']')
}
