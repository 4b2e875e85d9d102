package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
)

// The view of compact frames (compact.go): what the Compactor and an Expander both
// keep, and the JSON helpers they share.

// view is what both ends know before a frame: the state the compact frames are
// relative to. But for its table it is built only from what a snapshot also carries, so a follower that
// joins at a checkpoint has the same view as one that followed from the start (Same).
type view struct {
	clock    Clock
	nodes    map[int]*nodeView
	inflight map[int64]json.RawMessage // message id -> its trace JSON
	lastMsg  int64                     // the largest message id known
	// The table: strings (rule names, event and message types, reasons) that went
	// once in full and then go as their place, and each message type's payload keys.
	// It is learned from the frames, never reset, and a joiner gets it whole in the
	// checkpoint (Table).
	strs    []string
	strIdx  map[string]int
	payload map[string][]string
}

type nodeView struct {
	Node
	keys []string          // the state's keys, in order
	vals []json.RawMessage // and their values
}

func (v *view) reset() {
	strs, idx, payload := v.strs, v.strIdx, v.payload
	if idx == nil {
		idx, payload = map[string]int{}, map[string][]string{}
	}
	*v = view{nodes: map[int]*nodeView{}, inflight: map[int64]json.RawMessage{}, strs: strs, strIdx: idx, payload: payload}
	v.clock.Seq = -1
}

// pairSep joins a rule and its why into one string of the table.
const pairSep = "\x00"

// holder is the process that acts first in a batch unless its first event says
// otherwise: the one in the critical section (the lowest id if several), whose stay
// ends in a batch of its own; -1 when none is.
func (v *view) holder() int {
	h := -1
	for id, n := range v.nodes {
		if n.CS && (h < 0 || id < h) {
			h = id
		}
	}
	return h
}

// slot writes a string of the table: -(its place+1) when the table has it, else the
// string, which both ends then add.
func (v *view) slot(b []byte, raw json.RawMessage) []byte {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return append(b, raw...)
	}
	if k, ok := v.strIdx[s]; ok {
		return strconv.AppendInt(b, int64(-k-1), 10)
	}
	v.learn(s)
	return append(b, raw...)
}

func (v *view) learn(s string) {
	v.strIdx[s] = len(v.strs)
	v.strs = append(v.strs, s)
}

// unslot reads a string of the table back.
func (v *view) unslot(raw json.RawMessage) (string, error) {
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		v.learn(s)
		return s, nil
	}
	k, err := strconv.Atoi(string(raw))
	if err != nil || k >= 0 || -k-1 >= len(v.strs) {
		return "", fmt.Errorf("protocol: %s is not in the compact table", raw)
	}
	return v.strs[-k-1], nil
}

// Table is the frame that gives a joiner the table: it comes first in the compact
// stream's checkpoint, {"type":"table","strings":[..],"payload":[["TYPE","key",..],..]}.
// A follower takes it in and hands nothing on.
func (c *Compactor) Table() []byte {
	b := []byte(`{"type":"table","strings":[`)
	for i, s := range c.v.strs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	b = append(b, `],"payload":[`...)
	types := make([]string, 0, len(c.v.payload))
	for t := range c.v.payload {
		types = append(types, t)
	}
	sort.Strings(types)
	for i, t := range types {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = appendString(b, t)
		for _, k := range c.v.payload[t] {
			b = append(b, ',')
			b = appendString(b, k)
		}
		b = append(b, ']')
	}
	return append(b, "]}"...)
}

func (v *view) clone() view {
	w := *v
	w.nodes = make(map[int]*nodeView, len(v.nodes))
	for k, n := range v.nodes {
		w.nodes[k] = n
	}
	w.inflight = make(map[int64]json.RawMessage, len(v.inflight))
	for k, m := range v.inflight {
		w.inflight[k] = m
	}
	w.strs = slices.Clone(v.strs)
	w.strIdx = maps.Clone(v.strIdx)
	w.payload = maps.Clone(v.payload)
	return w
}

// same reports whether two views are equal: the check at a checkpoint.
func (v *view) same(w *view) bool {
	if v.clock != w.clock || v.lastMsg != w.lastMsg || len(v.nodes) != len(w.nodes) || len(v.inflight) != len(w.inflight) {
		return false
	}
	for id, m := range v.inflight {
		if !bytes.Equal(m, w.inflight[id]) {
			return false
		}
	}
	for id, n := range v.nodes {
		o := w.nodes[id]
		if o == nil || !bytes.Equal(n.appendJSON(nil), o.appendJSON(nil)) {
			return false
		}
	}
	return true
}

func newNodeView(n Node) (*nodeView, error) {
	n.Rules = nil
	keys, vals, err := objectFields(n.State)
	if err != nil {
		return nil, err
	}
	return &nodeView{Node: n, keys: keys, vals: vals}, nil
}

func (v *view) applySnapshot(s *Snapshot) error {
	v.reset()
	v.clock = s.Clock
	for _, n := range s.Nodes {
		nv, err := newNodeView(n)
		if err != nil {
			return err
		}
		v.nodes[n.ID] = nv
	}
	for _, m := range s.InFlight {
		var h msgHead
		if err := json.Unmarshal(m.Msg, &h); err != nil {
			return err
		}
		v.inflight[h.ID] = m.Msg
		v.lastMsg = max(v.lastMsg, h.ID)
	}
	for _, ev := range s.Recent {
		var e eventHead
		if err := json.Unmarshal(ev, &e); err != nil {
			return err
		}
		if e.Msg != nil {
			v.lastMsg = max(v.lastMsg, e.Msg.ID)
		}
	}
	return nil
}

type msgHead struct {
	ID int64 `json:"id"`
	To int   `json:"to"`
}

type eventHead struct {
	Type string   `json:"type"`
	Msg  *msgHead `json:"msg"`
}

// applyEvent follows one trace event: messages sent, delivered or dropped.
func (v *view) applyEvent(typ string, id int64, msg json.RawMessage) {
	switch typ {
	case "send":
		v.inflight[id] = msg
	case "deliver", "drop":
		delete(v.inflight, id)
	}
	v.lastMsg = max(v.lastMsg, id)
}

func (v *view) applyNodes(nodes []Node) error {
	for _, n := range nodes {
		nv, err := newNodeView(n)
		if err != nil {
			return err
		}
		v.nodes[n.ID] = nv
	}
	return nil
}

func eqKeys(keys []string, want ...string) bool {
	if len(keys) != len(want) {
		return false
	}
	for i := range keys {
		if keys[i] != want[i] {
			return false
		}
	}
	return true
}

// objectFields reads a JSON object's keys and raw values, in order.
func objectFields(raw json.RawMessage) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, errors.New("protocol: expected an object")
	}
	var keys []string
	var vals []json.RawMessage
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		keys = append(keys, k.(string))
		vals = append(vals, v)
	}
	return keys, vals, nil
}

func arrayItems(raw json.RawMessage) ([]json.RawMessage, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("protocol: %w", err)
	}
	return items, nil
}
