package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Expander reads compact follower frames back into protocol-1 frames (compact.go). The
// server does not need it: the Compactor checks its frames with it, and tools and tests
// that read a compact stream use it; static/compact.js does the same in the browser.
type Expander struct{ v view }

// NewExpander returns an expander that has seen nothing yet: the first frame it reads
// must be a whole one (a follower's first frames are the checkpoint's hello and
// snapshot).
func NewExpander() *Expander {
	x := &Expander{}
	x.v.reset()
	return x
}

// Expand reads one stamped compact frame ([lseq, ...]) and returns its number and its
// protocol-1 bytes, stamped the same way as a protocol-1 follower receives them. The
// table of a checkpoint has no protocol-1 frame: its bytes are nil.
func (x *Expander) Expand(stamped []byte) (uint64, []byte, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(stamped, &items); err != nil || len(items) < 2 {
		return 0, nil, errors.New("protocol: a compact frame is an array [lseq, ...]")
	}
	n, err := strconv.ParseUint(string(items[0]), 10, 64)
	if err != nil {
		return 0, nil, fmt.Errorf("protocol: compact frame: lseq %s", items[0])
	}
	var v1 []byte
	if len(items) == 2 && bytes.HasPrefix(items[1], []byte(`{"type":"table",`)) {
		return n, nil, x.takeTable(items[1])
	}
	if len(items) == 2 && bytes.HasPrefix(items[1], []byte(`{"type":`)) {
		v1 = items[1]
		if err := x.followWhole(v1); err != nil {
			return 0, nil, err
		}
	} else {
		body := append([]byte{'['}, stamped[len(items[0])+2:]...) // [C,B...]
		if v1, err = x.expandEvents(body); err != nil {
			return 0, nil, err
		}
	}
	return n, Stamp(n, v1), nil
}

// takeTable replaces the table by a checkpoint's (Compactor.Table).
func (x *Expander) takeTable(raw []byte) error {
	var t struct {
		Strings []string   `json:"strings"`
		Payload [][]string `json:"payload"`
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return fmt.Errorf("protocol: compact table: %w", err)
	}
	x.v.strs, x.v.strIdx, x.v.payload = nil, map[string]int{}, map[string][]string{}
	for _, s := range t.Strings {
		x.v.learn(s)
	}
	for _, p := range t.Payload {
		if len(p) == 0 {
			return errors.New("protocol: compact table: a payload without its type")
		}
		x.v.payload[p[0]] = p[1:]
	}
	return nil
}

// followWhole applies a frame that came whole.
func (x *Expander) followWhole(v1 []byte) error {
	f, err := Decode(v1)
	if err != nil {
		return err
	}
	switch f := f.(type) {
	case *Events:
		return x.v.follow(f)
	case *Snapshot:
		return x.v.applySnapshot(f)
	case *State:
		x.v.clock = f.Clock
	case *Hello:
		x.v.reset()
	}
	return nil
}

// expandEvents reads [C, B...] into an events frame's protocol-1 bytes.
func (x *Expander) expandEvents(body []byte) ([]byte, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(body, &items); err != nil || len(items) == 0 {
		return nil, errors.New("protocol: a compact events frame is [clock, batch...]")
	}
	w := &x.v
	f := Events{Batches: make([]Batch, 0, len(items)-1)}
	seq, step, t := w.clock.Seq, w.clock.Step, w.clock.T
	clock := items[0]
	batches := items[1:]
	if clock[0] == '[' { // the clock as predicted, left out
		clock, batches = json.RawMessage("0"), items
	}
	for _, raw := range batches {
		bt, last, err := expandBatch(w, raw, seq, step, t)
		if err != nil {
			return nil, err
		}
		f.Batches = append(f.Batches, bt)
		seq, step, t = last, bt.Step, bt.T
	}
	f.Clock = w.clock
	f.Step, f.T, f.Seq, f.Horizon = step, t, seq, max(w.clock.Horizon, step)
	if !bytes.Equal(clock, []byte("0")) {
		c := f.Clock // read into a copy, which alone goes to the heap
		if err := readDelta(clock, clockDelta, &c); err != nil {
			return nil, err
		}
		f.Clock = c
	}
	w.clock = f.Clock
	return f.AppendJSON(nil), nil
}

func expandBatch(w *view, raw json.RawMessage, seq int64, prevStep, prevT int) (Batch, int64, error) {
	var parts []json.RawMessage
	if err := json.Unmarshal(raw, &parts); err != nil || len(parts) < 2 {
		return Batch{}, 0, errors.New("protocol: a compact batch is [events, nodes, arrivals, ...]")
	}
	var tail [len(batchTail)]json.RawMessage // the parts left out at the end say nothing
	for i, p := range batchTail {
		tail[i] = p.Zero
		if 2+i < len(parts) {
			tail[i] = parts[2+i]
		}
	}
	arrive, dt, dstep, extra := tail[0], tail[1], tail[2], tail[3]
	bt := Batch{Step: prevStep + 1, T: prevT}
	if err := addInt(&bt.T, dt); err != nil {
		return Batch{}, 0, err
	}
	if err := addInt(&bt.Step, dstep); err != nil {
		return Batch{}, 0, err
	}
	if err := readDelta(extra, batchExtra, &bt); err != nil {
		return Batch{}, 0, err
	}
	var packed []json.RawMessage
	if err := json.Unmarshal(parts[0], &packed); err != nil {
		return Batch{}, 0, err
	}
	// [to, to..]: one send like the previous one per addressee.
	var evs []json.RawMessage
	for _, ce := range packed {
		if !repeats(ce) {
			evs = append(evs, ce)
			continue
		}
		for _, to := range bytes.Split(ce[1:len(ce)-1], []byte{','}) {
			evs = append(evs, json.RawMessage("["+string(to)+"]"))
		}
	}
	out := []byte{'['}
	cur := w.holder()
	var sent []int64
	var memo sendMemo
	for i, ce := range evs {
		ev, err := expandEvent(w, &memo, ce, seq+1, bt.T, cur)
		if err != nil {
			return Batch{}, 0, err
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, ev...)
		var e struct {
			Seq  int64           `json:"seq"`
			Type string          `json:"type"`
			Node *int            `json:"node"`
			Msg  json.RawMessage `json:"msg"`
		}
		if err := json.Unmarshal(ev, &e); err != nil {
			return Batch{}, 0, err
		}
		seq = e.Seq
		if e.Node != nil {
			cur = *e.Node
		}
		if e.Msg != nil {
			var h msgHead
			if err := json.Unmarshal(e.Msg, &h); err != nil {
				return Batch{}, 0, err
			}
			if e.Type == "send" {
				sent = append(sent, h.ID)
			}
			w.applyEvent(e.Type, h.ID, e.Msg)
		}
	}
	bt.Events = append(out, ']')
	var nodes []json.RawMessage
	if err := json.Unmarshal(parts[1], &nodes); err != nil {
		return Batch{}, 0, err
	}
	for _, cn := range nodes {
		n, err := expandNode(w, cn)
		if err != nil {
			return Batch{}, 0, err
		}
		nv, err := newNodeView(n)
		if err != nil {
			return Batch{}, 0, err
		}
		w.nodes[n.ID] = nv
		bt.Nodes = append(bt.Nodes, n)
	}
	if bytes.HasPrefix(arrive, []byte("{")) {
		if err := json.Unmarshal(arrive, &bt.Arrive); err != nil {
			return Batch{}, 0, err
		}
	} else {
		var offs []int
		if err := json.Unmarshal(arrive, &offs); err != nil || len(offs) != len(sent) {
			return Batch{}, 0, errors.New("protocol: compact arrivals do not match the messages sent")
		}
		bt.Arrive = make(Arrivals, len(offs))
		for i, o := range offs {
			bt.Arrive[i] = Arrival{Msg: sent[i], At: bt.T + o}
		}
	}
	return bt, seq, nil
}

// addInt adds the integer raw to *x.
func addInt(x *int, raw json.RawMessage) error {
	d, err := strconv.Atoi(string(raw))
	if err != nil {
		return fmt.Errorf("protocol: %s is not an integer", raw)
	}
	*x += d
	return nil
}

// repeats reports whether a compact event is [to, to..]: digits and commas only.
func repeats(ce []byte) bool {
	if len(ce) < 3 || ce[0] != '[' || ce[len(ce)-1] != ']' {
		return false
	}
	for _, c := range ce[1 : len(ce)-1] {
		if (c < '0' || c > '9') && c != ',' {
			return false
		}
	}
	return true
}

func expandEvent(w *view, memo *sendMemo, ce json.RawMessage, seq int64, t, cur int) ([]byte, error) {
	head := func(typ string, node int) []byte {
		b := []byte(`{"seq":`)
		b = strconv.AppendInt(b, seq, 10)
		b = append(b, `,"t":`...)
		b = appendInt(b, t)
		b = append(b, `,"type":`...)
		b = appendString(b, typ)
		b = append(b, `,"node":`...)
		return appendInt(b, node)
	}
	switch c := ce[0]; {
	case c >= '0' && c <= '9':
		d, err := strconv.ParseInt(string(ce), 10, 64)
		if err != nil {
			return nil, err
		}
		id := w.lastMsg - d
		msg, ok := w.inflight[id]
		if !ok {
			return nil, fmt.Errorf("protocol: deliver of message %d, which is not in flight", id)
		}
		var h msgHead
		if err := json.Unmarshal(msg, &h); err != nil {
			return nil, err
		}
		b := head("deliver", h.To)
		b = append(b, `,"msg":`...)
		b = append(b, msg...)
		return append(b, '}'), nil
	case c == '"' || c == '-':
		typ, err := w.unslot(ce)
		if err != nil {
			return nil, err
		}
		return append(head(typ, cur), '}'), nil
	case c == '{':
		if bytes.HasPrefix(ce, []byte(`{"seq":`)) {
			return ce, nil
		}
		b := []byte(`{"seq":`)
		b = strconv.AppendInt(b, seq, 10)
		b = append(b, `,"t":`...)
		b = appendInt(b, t)
		if len(ce) > 2 {
			b = append(b, ',')
		}
		return append(b, ce[1:]...), nil
	case c == '[':
		var parts []json.RawMessage
		if err := json.Unmarshal(ce, &parts); err != nil || len(parts) == 0 {
			return nil, errors.New("protocol: an empty compact event")
		}
		if p := parts[0][0]; p == '"' || p == '-' { // a rule, or an event of another process
			rule, err := w.unslot(parts[0])
			if err != nil {
				return nil, err
			}
			if len(parts) == 2 && parts[1][0] >= '0' && parts[1][0] <= '9' {
				node, err := strconv.Atoi(string(parts[1]))
				if err != nil {
					return nil, err
				}
				return append(head(rule, node), '}'), nil
			}
			b := head("rule", cur)
			b = append(b, `,"rule":`...)
			if r, why, ok := strings.Cut(rule, pairSep); ok {
				b = appendString(b, r)
				b = append(b, `,"why":`...)
				b = appendString(b, why)
				return append(b, '}'), nil
			}
			b = appendString(b, rule)
			if len(parts) > 1 {
				why, err := w.unslot(parts[1])
				if err != nil {
					return nil, err
				}
				b = append(b, `,"why":`...)
				b = appendString(b, why)
				w.learn(rule + pairSep + why)
			}
			return append(b, '}'), nil
		}
		var mt string
		if len(parts) == 1 { // like the previous send
			if memo.vals == nil {
				return nil, errors.New("protocol: a compact send like the previous one, with none before it")
			}
			mt = memo.typ
			parts = append(append(parts, nil), memo.vals...)
		} else {
			var err error
			if mt, err = w.unslot(parts[1]); err != nil {
				return nil, err
			}
		}
		b := head("send", cur) // a send of the next message
		b = append(b, `,"msg":{"id":`...)
		b = strconv.AppendInt(b, w.lastMsg+1, 10)
		b = append(b, `,"type":`...)
		b = appendString(b, mt)
		b = append(b, `,"from":`...)
		b = appendInt(b, cur)
		b = append(b, `,"to":`...)
		b = append(b, parts[0]...)
		if keys, ok := w.payload[mt]; ok {
			memo.typ, memo.vals = mt, append([]json.RawMessage{}, parts[2:]...)
			if len(parts) != 2+len(keys) {
				return nil, fmt.Errorf("protocol: a compact %s message has %d payload values for %d keys", mt, len(parts)-2, len(keys))
			}
			for i, k := range keys {
				b = append(b, ',')
				b = appendString(b, k)
				b = append(b, ':')
				b = append(b, parts[2+i]...)
			}
		} else {
			var keys []string
			if len(parts) > 2 {
				ks, vs, err := objectFields(parts[2])
				if err != nil {
					return nil, err
				}
				for i, k := range ks {
					b = append(b, ',')
					b = appendString(b, k)
					b = append(b, ':')
					b = append(b, vs[i]...)
				}
				keys = ks
			}
			w.payload[mt] = keys
			memo.typ, memo.vals = mt, []json.RawMessage{}
			if len(parts) > 2 {
				_, memo.vals, _ = objectFields(parts[2])
			}
		}
		return append(b, "}}"...), nil
	}
	return nil, fmt.Errorf("protocol: %s is not a compact event", ce)
}

func expandNode(w *view, cn json.RawMessage) (Node, error) {
	if cn[0] == '{' {
		var n Node
		err := json.Unmarshal(cn, &n)
		return n, err
	}
	var parts []json.RawMessage
	if err := json.Unmarshal(cn, &parts); err != nil || len(parts) < 2 {
		return Node{}, errors.New("protocol: a compact process is [id, state, ...]")
	}
	id, err := strconv.Atoi(string(parts[0]))
	if err != nil {
		return Node{}, err
	}
	old := w.nodes[id]
	if old == nil {
		return Node{}, fmt.Errorf("protocol: process %d has no view to change", id)
	}
	n := old.Node
	if parts[1][0] == '{' {
		n.State = parts[1]
	} else {
		var pairs []json.RawMessage
		if err := json.Unmarshal(parts[1], &pairs); err != nil || len(pairs)%2 != 0 {
			return Node{}, errors.New("protocol: compact state changes come in pairs")
		}
		vals := append([]json.RawMessage(nil), old.vals...)
		for i := 0; i < len(pairs); i += 2 {
			if p := pairs[i]; len(p) > 2 && p[0] == '"' { // "k": a string of the table
				k, err := strconv.Atoi(string(p[1 : len(p)-1]))
				if err != nil || k < 0 || k >= len(vals) {
					return Node{}, fmt.Errorf("protocol: state variable %s of process %d", p, id)
				}
				str, err := w.unslot(pairs[i+1])
				if err != nil {
					return Node{}, err
				}
				vals[k] = appendString(nil, str)
				continue
			}
			k, err := strconv.Atoi(string(pairs[i]))
			add := k < 0
			if add {
				k = -k - 1
			}
			if err != nil || k >= len(vals) {
				return Node{}, fmt.Errorf("protocol: state variable %s of process %d", pairs[i], id)
			}
			if add {
				v := pairs[i+1]
				if len(v) < 3 || v[0] != '[' || len(vals[k]) < 3 || vals[k][0] != '[' {
					return Node{}, fmt.Errorf("protocol: items added to state variable %d of process %d, which is not a list", k, id)
				}
				old := vals[k]
				vals[k] = append(append(append(json.RawMessage{}, old[:len(old)-1]...), ','), v[1:]...)
				continue
			}
			vals[k] = pairs[i+1]
		}
		b := []byte{'{'}
		for i, k := range old.keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			b = append(b, vals[i]...)
		}
		n.State = append(b, '}')
	}
	if len(parts) > 2 {
		changed := n // read into a copy, which alone goes to the heap
		if err := readDelta(parts[2], nodeDelta, &changed); err != nil {
			return Node{}, err
		}
		n = changed
	}
	return n, nil
}
