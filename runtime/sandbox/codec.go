package sandbox

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/teach-dist/playground/algorithms/starlarkalg"
	"github.com/teach-dist/playground/runtime/sim"
)

// A step worker's requests and answers go over its pipes as frames: a length, then the
// fields in a fixed order as varints and length-prefixed bytes. A step is one frame
// each way, so the encoding is the hot path of a source's run (encoding/gob's
// reflection cost as much as the step itself, BenchmarkKernelSandboxed); the rare
// load answer carries the source's declarations as JSON inside its frame.

// maxFrame bounds a frame: a source is at most 64 KiB, a state a few thousand values.
const maxFrame = 16 << 20

var errFrame = errors.New("sandbox: a frame that is not one")

type frameWriter struct {
	w   *bufio.Writer
	buf []byte
}

func (f *frameWriter) send(b []byte) error {
	var n [binary.MaxVarintLen64]byte
	if _, err := f.w.Write(n[:binary.PutUvarint(n[:], uint64(len(b)))]); err != nil {
		return err
	}
	if _, err := f.w.Write(b); err != nil {
		return err
	}
	return f.w.Flush()
}

type frameReader struct {
	r   *bufio.Reader
	buf []byte
}

func (f *frameReader) next() ([]byte, error) {
	n, err := binary.ReadUvarint(f.r)
	if err != nil {
		return nil, err
	}
	if n > maxFrame {
		return nil, errFrame
	}
	if uint64(cap(f.buf)) < n {
		f.buf = make([]byte, n)
	}
	f.buf = f.buf[:n]
	if _, err := io.ReadFull(f.r, f.buf); err != nil {
		return nil, err
	}
	return f.buf, nil
}

// enc appends fields.
type enc []byte

func (e *enc) uint(v uint64) { *e = binary.AppendUvarint(*e, v) }
func (e *enc) int(v int)     { *e = binary.AppendVarint(*e, int64(v)) }
func (e *enc) bool(v bool) {
	if v {
		*e = append(*e, 1)
	} else {
		*e = append(*e, 0)
	}
}
func (e *enc) bytes(b []byte) { e.uint(uint64(len(b))); *e = append(*e, b...) }
func (e *enc) str(s string)   { e.uint(uint64(len(s))); *e = append(*e, s...) }

// ints writes a slice, nil apart from empty (a message's slot keeps what was sent).
func (e *enc) ints(v []int) {
	if v == nil {
		e.uint(0)
		return
	}
	e.uint(uint64(len(v)) + 1)
	for _, x := range v {
		e.int(x)
	}
}

func (e *enc) bools(v []bool) {
	e.uint(uint64(len(v)))
	for _, x := range v {
		e.bool(x)
	}
}

func (e *enc) msg(m *sim.Message) {
	*e = binary.AppendVarint(*e, m.ID)
	e.str(m.Type)
	e.int(m.From)
	e.int(m.To)
	e.int(m.TS)
	e.int(m.Arg)
	e.ints(m.Vec)
	e.ints(m.Queue)
}

func (e *enc) err(se *starlarkalg.Error) {
	e.bool(se != nil)
	if se == nil {
		return
	}
	e.str(se.Algorithm)
	e.str(se.Handler)
	e.int(se.Node)
	e.str(se.Rule)
	e.int(se.Line)
	e.int(se.Col)
	e.str(se.Msg)
}

// dec reads fields; the first failure sticks and every later read gives zero values.
type dec struct {
	b   []byte
	bad bool
}

// varint reads one varint with read: binary.Uvarint, or binary.Varint for a signed one.
func varint[T uint64 | int64](d *dec, read func([]byte) (T, int)) T {
	v, k := read(d.b)
	if k <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[k:]
	return v
}

func (d *dec) uint() uint64 { return varint(d, binary.Uvarint) }
func (d *dec) int() int     { return int(varint(d, binary.Varint)) }

func (d *dec) bool() bool {
	if len(d.b) == 0 {
		d.fail()
		return false
	}
	v := d.b[0] != 0
	d.b = d.b[1:]
	return v
}

// count reads a length that cannot exceed what is left (each element takes a byte).
func (d *dec) count(n uint64) int {
	if n > uint64(len(d.b)) {
		d.fail()
		return 0
	}
	return int(n)
}

func (d *dec) bytes() []byte {
	n := d.count(d.uint())
	if n == 0 {
		return nil
	}
	out := append([]byte(nil), d.b[:n]...)
	d.b = d.b[n:]
	return out
}

func (d *dec) str() string {
	n := d.count(d.uint())
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

// ints reads a slice written by enc.ints: its length plus one, 0 for nil.
func (d *dec) ints() []int {
	n := d.uint()
	if n == 0 {
		return nil
	}
	return elements(d.count(n-1), d.int)
}

func (d *dec) bools() []bool { return elements(d.count(d.uint()), d.bool) }

// elements reads n elements with read; nil when n is 0.
func elements[T any](n int, read func() T) []T {
	if n == 0 {
		return nil
	}
	out := make([]T, n)
	for k := range out {
		out[k] = read()
	}
	return out
}

func (d *dec) msg(m *sim.Message) {
	m.ID = varint(d, binary.Varint)
	if d.bad {
		return
	}
	m.Type = d.str()
	m.From, m.To, m.TS, m.Arg = d.int(), d.int(), d.int(), d.int()
	m.Vec, m.Queue = d.ints(), d.ints()
}

func (d *dec) err() *starlarkalg.Error {
	if !d.bool() {
		return nil
	}
	return &starlarkalg.Error{Algorithm: d.str(), Handler: d.str(), Node: d.int(), Rule: d.str(),
		Line: d.int(), Col: d.int(), Msg: d.str()}
}

func (d *dec) fail() { d.bad, d.b = true, nil }

func (d *dec) done() error {
	if d.bad || len(d.b) != 0 {
		return errFrame
	}
	return nil
}

func encodeRequest(b []byte, r *request) []byte {
	e := enc(b[:0])
	e.uint(uint64(r.Op))
	e.str(r.Key)
	switch r.Op {
	case opLoad:
		e.str(r.Slug)
		e.str(r.Source)
		return e
	}
	e.int(r.Self)
	e.ints(r.Setup.IDs)
	e.bytes(r.Setup.Params)
	e.int(r.Setup.MaxDelay)
	if r.Op == opStep {
		e.bytes(r.State)
		e.uint(uint64(r.Input.Kind))
		e.msg(&r.Input.Msg)
		e.str(r.Input.Timer)
		e.bools(r.Up)
	}
	return e
}

func decodeRequest(b []byte) (*request, error) {
	d := &dec{b: b}
	r := &request{Op: op(d.uint()), Key: d.str()}
	switch r.Op {
	case opLoad:
		r.Slug, r.Source = d.str(), d.str()
	case opInit, opStep:
		r.Self = d.int()
		r.Setup = setupWire{IDs: d.ints(), Params: d.bytes(), MaxDelay: d.int()}
		if r.Op == opStep {
			r.State = d.bytes()
			r.Input.Kind = sim.InputKind(d.uint())
			d.msg(&r.Input.Msg)
			r.Input.Timer = d.str()
			r.Up = d.bools()
		}
	default:
		return nil, fmt.Errorf("sandbox: unknown request %d", r.Op)
	}
	return r, d.done()
}

func encodeResponse(b []byte, r *response) ([]byte, error) {
	e := enc(b[:0])
	e.bool(r.Unknown)
	e.bool(r.Spec != nil)
	if r.Spec != nil {
		j, err := json.Marshal(r.Spec)
		if err != nil {
			return nil, err
		}
		e.bytes(j)
	}
	e.err(r.LoadErr)
	res := &r.Result
	e.bytes(res.State)
	e.bytes(res.View)
	e.ints(res.Waiting)
	e.bool(res.Token)
	e.uint(uint64(len(res.Effects)))
	for k := range res.Effects {
		f := &res.Effects[k]
		e.uint(uint64(f.Kind))
		switch f.Kind {
		case sim.FireRule:
			e.str(f.Rule)
			e.str(f.Why)
		case sim.Send:
			e.msg(&f.Msg)
		case sim.SetTimer:
			e.str(f.Timer)
			e.int(f.After)
		case sim.CancelTimer:
			e.str(f.Timer)
		case sim.DeclareLeader:
			e.int(f.Leader)
		}
	}
	e.err(res.Err)
	return e, nil
}

func decodeResponse(b []byte) (*response, error) {
	d := &dec{b: b}
	r := &response{Unknown: d.bool()}
	if d.bool() {
		r.Spec = &specWire{}
		if err := json.Unmarshal(d.bytes(), r.Spec); err != nil {
			return nil, fmt.Errorf("sandbox: the source's declarations: %w", err)
		}
	}
	r.LoadErr = d.err()
	res := &r.Result
	res.State, res.View, res.Waiting, res.Token = d.bytes(), d.bytes(), d.ints(), d.bool()
	if n := d.count(d.uint()); n > 0 {
		res.Effects = make([]sim.Effect, n)
		for k := range res.Effects {
			f := &res.Effects[k]
			f.Kind = sim.EffectKind(d.uint())
			switch f.Kind {
			case sim.FireRule:
				f.Rule, f.Why = d.str(), d.str()
			case sim.Send:
				d.msg(&f.Msg)
			case sim.SetTimer:
				f.Timer, f.After = d.str(), d.int()
			case sim.CancelTimer:
				f.Timer = d.str()
			case sim.DeclareLeader:
				f.Leader = d.int()
			}
		}
	}
	res.Err = d.err()
	return r, d.done()
}
