package cost

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/teach-dist/playground/runtime/sim"
)

// MaxLine bounds one trace line; the kernel's lines are far shorter.
const MaxLine = 1 << 20

var eventTypes = func() map[string]sim.EventType {
	m := map[string]sim.EventType{}
	for t := sim.EvSend; t <= sim.EvEnd; t++ {
		m[t.String()] = t
	}
	return m
}()

type wireEvent struct {
	Seq    int64  `json:"seq"`
	T      int    `json:"t"`
	Type   string `json:"type"`
	Node   *int   `json:"node"`
	Leader int    `json:"leader"`
	Name   string `json:"name"`
	Rule   string `json:"rule"`
	Msg    *struct {
		ID   int64  `json:"id"`
		Type string `json:"type"`
		From int    `json:"from"`
		To   int    `json:"to"`
	} `json:"msg"`
}

// DecodeTrace reads trace v1 (JSON Lines) and hands each event to fn, in order. Event
// types it does not know are skipped (a newer trace may add some).
func DecodeTrace(r io.Reader, fn func(Event)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine)
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if len(b) == 0 {
			continue
		}
		var w wireEvent
		if err := json.Unmarshal(b, &w); err != nil {
			return fmt.Errorf("trace line %d: %v", line, err)
		}
		t, ok := eventTypes[w.Type]
		if !ok {
			continue
		}
		e := Event{Seq: w.Seq, T: w.T, Type: t, Node: -1, Leader: w.Leader, Name: w.Name}
		if w.Node != nil {
			e.Node = *w.Node
		}
		if t == sim.EvRule {
			e.Name = w.Rule
		}
		if w.Msg != nil {
			e.Msg = Msg{ID: w.Msg.ID, Type: w.Msg.Type, From: w.Msg.From, To: w.Msg.To}
		}
		fn(e)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("trace line %d: %v", line+1, err)
	}
	return nil
}

// FromTrace measures a trace v1 of an algorithm. ids are the run's ids (nil: learnt
// from the trace, in order of appearance). Steps are unknown in a trace: points carry
// step -1.
func FromTrace(r io.Reader, spec *sim.Spec, ids []int, opts Options) (Result, error) {
	c := New(spec, ids, opts)
	err := DecodeTrace(r, c.Add)
	return c.Result(), err
}
