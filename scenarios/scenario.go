// Package scenarios holds the scenario format (CONTRACT: scenario v1): strict decoding,
// validation against the algorithm registry, conversion to a kernel configuration, and
// the curated library embedded in the binary.
package scenarios

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/runtime/sim"
)

// Version is the scenario format this package writes; it reads versions 1..Version.
const Version = 1

// MaxBytes bounds a scenario document.
const MaxBytes = 1 << 20

// MaxEvents bounds the events a scenario may schedule.
const MaxEvents = 10_000

// Scenario is scenario v1 as it appears in JSON. Optional fields are pointers or
// omitted when empty so that encoding a decoded scenario gives back what was meant.
type Scenario struct {
	Version   int             `json:"version"`
	Algorithm string          `json:"algorithm"`
	Title     string          `json:"title,omitempty"` // curated scenarios
	About     string          `json:"about,omitempty"` // curated scenarios: one paragraph
	Nodes     int             `json:"nodes,omitempty"`
	IDs       []int           `json:"ids,omitempty"`
	Seed      uint64          `json:"seed"`
	Network   *Network        `json:"network,omitempty"`
	CS        *int            `json:"cs,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Events    []Event         `json:"events,omitempty"`
	Until     int             `json:"until,omitempty"`
	Monitors  *Monitors       `json:"monitors,omitempty"`
	Captions  []Caption       `json:"captions,omitempty"` // curated scenarios
}

// Caption explains a key step; the playground shows it when the run reaches the trace
// event with this seq.
type Caption struct {
	Seq  int64  `json:"seq"`
	Text string `json:"text"`
}

// MaxCaption bounds a caption's text.
const MaxCaption = 400

// Network is the scenario's network model.
type Network struct {
	Delay Delay   `json:"delay,omitempty"`
	FIFO  *bool   `json:"fifo,omitempty"`
	Loss  float64 `json:"loss,omitempty"`
	Hold  bool    `json:"hold,omitempty"`
}

// Delay is [min, max], or a single number for a fixed delay.
type Delay []int

// UnmarshalJSON accepts 2, [2] or [1, 3].
func (d *Delay) UnmarshalJSON(b []byte) error {
	var n int
	if err := json.Unmarshal(b, &n); err == nil {
		*d = Delay{n, n}
		return nil
	}
	var v []int
	if err := json.Unmarshal(b, &v); err != nil {
		return errors.New("expected a number or [min, max]")
	}
	*d = v
	return nil
}

// Monitors tunes the monitors.
type Monitors struct {
	Pending int `json:"pending,omitempty"` // a request waiting longer is reported
}

// Event is one scheduled action. Node ids, not indexes.
type Event struct {
	At     int     `json:"at"`
	Do     string  `json:"do"`
	Node   *int    `json:"node,omitempty"`
	Msg    int64   `json:"msg,omitempty"`
	From   *int    `json:"from,omitempty"`
	To     *int    `json:"to,omitempty"`
	Type   string  `json:"type,omitempty"`
	Groups [][]int `json:"groups,omitempty"`

	// network: the parts of the network model that change (each optional, at least one).
	Delay Delay    `json:"delay,omitempty"`
	FIFO  *bool    `json:"fifo,omitempty"`
	Loss  *float64 `json:"loss,omitempty"`
	Hold  *bool    `json:"hold,omitempty"`

	// fire: the name of the node's armed timer to fire now (hold mode; the explorer's
	// counterexamples place time-outs among the deliveries this way).
	Name string `json:"name,omitempty"`
}

// Error is a scenario that cannot run; Field names the culprit (e.g. "events[2].node").
type Error struct {
	Field  string
	Reason string
}

func (e *Error) Error() string {
	if e.Field == "" {
		return "scenario: " + e.Reason
	}
	return "scenario: " + e.Field + ": " + e.Reason
}

func fieldErr(field, format string, args ...any) error {
	return &Error{Field: field, Reason: fmt.Sprintf(format, args...)}
}

var topFields = []string{"version", "algorithm", "title", "about", "nodes", "ids", "seed",
	"network", "cs", "params", "events", "until", "monitors", "captions"}

// Decode reads one scenario strictly: unknown fields, wrong types, trailing data and
// invalid values are errors naming the field. The result is validated.
func Decode(r io.Reader) (*Scenario, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxBytes+1))
	if err != nil {
		return nil, &Error{Reason: err.Error()}
	}
	return Parse(data)
}

// Parse is Decode on bytes.
func Parse(data []byte) (*Scenario, error) {
	if len(data) > MaxBytes {
		return nil, &Error{Reason: fmt.Sprintf("larger than %d bytes", MaxBytes)}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Scenario
	if err := dec.Decode(&s); err != nil {
		if f := badDelay(data); f != "" && strings.Contains(err.Error(), "[min, max]") {
			return nil, fieldErr(f, "expected a number or [min, max]")
		}
		return nil, jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &Error{Reason: "unexpected data after the scenario object"}
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// jsonError turns encoding/json's errors into ones that name the field.
func jsonError(err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if field == "" {
			field = "(document)"
		}
		return fieldErr(field, "expected %s, got %s", kindName(typeErr.Type.String()), typeErr.Value)
	case errors.As(err, &syntaxErr):
		return &Error{Reason: fmt.Sprintf("not valid JSON at byte %d: %v", syntaxErr.Offset, syntaxErr)}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &Error{Reason: "not valid JSON: the document ends too early"}
	case errors.Is(err, io.EOF):
		return &Error{Reason: "empty document"}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.TrimPrefix(err.Error(), "json: unknown field ")
		return &Error{Field: strings.Trim(name, `"`), Reason: "unknown field (allowed at the top: " + strings.Join(topFields, ", ") + ")"}
	}
	// Errors from a field's own decoder (Delay) carry no path; say where it happened.
	if strings.Contains(err.Error(), "[min, max]") {
		return fieldErr("network.delay", "%v", err)
	}
	return &Error{Reason: err.Error()}
}

func kindName(goType string) string {
	switch {
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"):
		return "an integer"
	case goType == "string":
		return "a string"
	case goType == "bool":
		return "true or false"
	case goType == "float64":
		return "a number"
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	}
	return "an object"
}

// Spec returns the scenario's algorithm (valid after Validate).
func (s *Scenario) Spec() *sim.Spec {
	spec, _ := algorithms.Lookup(s.Algorithm)
	return spec
}

// Validate checks every field and fills nothing in; Config applies the defaults.
func (s *Scenario) Validate() error {
	if s.Version < 1 || s.Version > Version {
		return fieldErr("version", "%d is not supported (this playground reads version 1)", s.Version)
	}
	spec, ok := algorithms.Lookup(s.Algorithm)
	if !ok {
		return fieldErr("algorithm", "%q is unknown (allowed: %s)", s.Algorithm, strings.Join(algorithms.Slugs(), ", "))
	}
	n := s.nodeCount(spec)
	if n < sim.MinNodes || n > sim.MaxNodes {
		return fieldErr("nodes", "%d is out of range (%d to %d)", n, sim.MinNodes, sim.MaxNodes)
	}
	if s.IDs != nil {
		if len(s.IDs) != n {
			return fieldErr("ids", "has %d ids but nodes is %d", len(s.IDs), n)
		}
		seen := map[int]bool{}
		for k, id := range s.IDs {
			if id < 0 || id > 1_000_000 {
				return fieldErr(fmt.Sprintf("ids[%d]", k), "%d is out of range (0 to 1000000)", id)
			}
			if seen[id] {
				return fieldErr(fmt.Sprintf("ids[%d]", k), "%d appears twice", id)
			}
			seen[id] = true
		}
	}
	if nw := s.Network; nw != nil {
		if nw.Delay != nil {
			if len(nw.Delay) < 1 || len(nw.Delay) > 2 {
				return fieldErr("network.delay", "expected a number or [min, max]")
			}
			lo, hi := nw.Delay[0], nw.Delay[len(nw.Delay)-1]
			if lo < 0 || hi < lo || hi > sim.MaxDelay {
				return fieldErr("network.delay", "[%d, %d] must satisfy 0 <= min <= max <= %d", lo, hi, sim.MaxDelay)
			}
		}
		if nw.Loss < 0 || nw.Loss > 1 {
			return fieldErr("network.loss", "%v must be between 0 and 1", nw.Loss)
		}
	}
	if s.CS != nil && (*s.CS < 0 || *s.CS > sim.MaxTime) {
		return fieldErr("cs", "%d is out of range (0 to %d)", *s.CS, sim.MaxTime)
	}
	if s.Until < 0 || s.Until > sim.MaxTime {
		return fieldErr("until", "%d is out of range (1 to %d)", s.Until, sim.MaxTime)
	}
	if s.Monitors != nil && s.Monitors.Pending < 0 {
		return fieldErr("monitors.pending", "%d must not be negative", s.Monitors.Pending)
	}
	for k, c := range s.Captions {
		f := fmt.Sprintf("captions[%d]", k)
		if c.Seq < 0 || (k > 0 && c.Seq <= s.Captions[k-1].Seq) {
			return fieldErr(f+".seq", "%d must be 0 or more and larger than the previous caption's", c.Seq)
		}
		if strings.TrimSpace(c.Text) == "" || len(c.Text) > MaxCaption {
			return fieldErr(f+".text", "must be 1 to %d characters", MaxCaption)
		}
	}
	if _, err := s.params(spec); err != nil {
		return err
	}
	if len(s.Events) > MaxEvents {
		return fieldErr("events", "%d events is more than the limit of %d", len(s.Events), MaxEvents)
	}
	_, err := s.actions(spec)
	return err
}

func (s *Scenario) nodeCount(spec *sim.Spec) int {
	switch {
	case s.Nodes != 0:
		return s.Nodes
	case s.IDs != nil:
		return len(s.IDs)
	}
	return spec.Defaults.Nodes
}

// ids returns the node ids, defaulting to 0..n-1.
func (s *Scenario) ids(spec *sim.Spec) []int {
	if s.IDs != nil {
		return slices.Clone(s.IDs)
	}
	ids := make([]int, s.nodeCount(spec))
	for i := range ids {
		ids[i] = i
	}
	return ids
}

func (s *Scenario) params(spec *sim.Spec) (any, error) {
	raw := bytes.TrimSpace(s.Params)
	empty := len(raw) == 0 || string(raw) == "null" || string(raw) == "{}"
	if spec.ParseParams == nil {
		if !empty {
			return nil, fieldErr("params", "%s takes no params", spec.Slug)
		}
		return nil, nil
	}
	p, err := spec.ParseParams(raw, s.ids(spec))
	if err != nil {
		msg := err.Error()
		if strings.HasPrefix(msg, "params") {
			return nil, &Error{Reason: msg}
		}
		return nil, fieldErr("params", "%s", msg)
	}
	return p, nil
}

func (s *Scenario) actions(spec *sim.Spec) ([]sim.Action, error) {
	ids := s.ids(spec)
	acts := make([]sim.Action, 0, len(s.Events))
	for k, e := range s.Events {
		f := fmt.Sprintf("events[%d]", k)
		a, err := eventAction(spec, ids, f, e)
		if err != nil {
			return nil, err
		}
		if e.At < 0 || e.At > sim.MaxTime {
			return nil, fieldErr(f+".at", "%d is out of range (0 to %d)", e.At, sim.MaxTime)
		}
		a.At = e.At
		acts = append(acts, a)
	}
	return acts, nil
}

// takesNode reports whether an action of this kind is done to one node.
func takesNode(do sim.ActionKind) bool {
	return do != sim.ActDrop && do != sim.ActDeliver && do != sim.ActPartition && do != sim.ActHeal && do != sim.ActNetwork
}

// badDelay names the delay (network.delay or events[k].delay) that does not decode:
// the Delay decoder's error carries no path.
func badDelay(data []byte) string {
	var doc struct {
		Network struct {
			Delay json.RawMessage `json:"delay"`
		} `json:"network"`
		Events []struct {
			Delay json.RawMessage `json:"delay"`
		} `json:"events"`
	}
	if json.Unmarshal(data, &doc) != nil {
		return ""
	}
	bad := func(raw json.RawMessage) bool {
		var d Delay
		return len(raw) > 0 && d.UnmarshalJSON(raw) != nil
	}
	if bad(doc.Network.Delay) {
		return "network.delay"
	}
	for k, e := range doc.Events {
		if bad(e.Delay) {
			return fmt.Sprintf("events[%d].delay", k)
		}
	}
	return ""
}

// networkChange validates a network event's fields into a kernel change.
func networkChange(f string, e Event) (sim.NetChange, error) {
	if e.Delay != nil && (len(e.Delay) < 1 || len(e.Delay) > 2) {
		return sim.NetChange{}, fieldErr(f+".delay", "expected a number or [min, max]")
	}
	c := sim.ChangeOf(e.Delay, e.FIFO, e.Loss, e.Hold)
	if err := c.Check(); err != nil {
		// The kernel's message starts with the field's name: "delay: ...".
		field, reason, ok := strings.Cut(err.Error(), ": ")
		if !ok || field == "network" {
			return c, fieldErr(f, "network needs at least one of delay, fifo, loss, hold")
		}
		return c, fieldErr(f+"."+field, "%s", reason)
	}
	return c, nil
}

// setNetwork writes a kernel network change as a network event's fields (the reverse
// of networkChange, for links).
func (e *Event) setNetwork(c sim.NetChange) {
	if c.Set&sim.NetDelay != 0 {
		e.Delay = Delay{c.DelayMin, c.DelayMax}
	}
	if c.Set&sim.NetFIFO != 0 {
		v := c.FIFO
		e.FIFO = &v
	}
	if c.Set&sim.NetLoss != 0 {
		v := c.Loss
		e.Loss = &v
	}
	if c.Set&sim.NetHold != 0 {
		v := c.Hold
		e.Hold = &v
	}
}

// eventAction validates one event and converts it to a kernel action (ids to
// indexes), leaving At to the caller: a scheduled event has a time, a link's
// intervention a step. f names the event in errors (e.g. "events[2]").
func eventAction(spec *sim.Spec, ids []int, f string, e Event) (sim.Action, error) {
	index := func(field string, id int) (int, error) {
		if k := slices.Index(ids, id); k >= 0 {
			return k, nil
		}
		return 0, fieldErr(field, "%d is not a node id (ids: %s)", id, joinInts(ids))
	}
	do, ok := sim.ParseActionKind(e.Do)
	if !ok {
		return sim.Action{}, fieldErr(f+".do", "%q is unknown (allowed: %s)", e.Do, strings.Join(sim.ActionNames(), ", "))
	}
	a := sim.Action{Do: do, From: -1, To: -1, Msg: e.Msg, Type: e.Type}
	if takesNode(do) {
		if e.Node == nil {
			return sim.Action{}, fieldErr(f+".node", "%q needs a node", e.Do)
		}
		i, err := index(f+".node", *e.Node)
		if err != nil {
			return sim.Action{}, err
		}
		a.Node = i
	} else if e.Node != nil {
		return sim.Action{}, fieldErr(f+".node", "%q takes no node", e.Do)
	}
	switch do {
	case sim.ActRequest, sim.ActRelease:
		if spec.Family != sim.Mutex {
			return sim.Action{}, fieldErr(f+".do", "%q needs a mutual exclusion algorithm; %s elects a leader (allowed: elect, crash, recover, drop, partition, heal)", e.Do, spec.Slug)
		}
	case sim.ActElect:
		if spec.Family != sim.Election {
			return sim.Action{}, fieldErr(f+".do", "%q needs an election algorithm; %s is mutual exclusion (allowed: request, release, crash, recover, drop, partition, heal)", e.Do, spec.Slug)
		}
	case sim.ActDrop:
		if e.Msg < 0 {
			return sim.Action{}, fieldErr(f+".msg", "%d is not a message id", e.Msg)
		}
		if e.From != nil {
			if a.From, ok = indexOf(ids, *e.From); !ok {
				return sim.Action{}, fieldErr(f+".from", "%d is not a node id (ids: %s)", *e.From, joinInts(ids))
			}
		}
		if e.To != nil {
			if a.To, ok = indexOf(ids, *e.To); !ok {
				return sim.Action{}, fieldErr(f+".to", "%d is not a node id (ids: %s)", *e.To, joinInts(ids))
			}
		}
		if e.Type != "" && e.Type != sim.AppMessage && spec.MessageType(e.Type) == nil {
			return sim.Action{}, fieldErr(f+".type", "%q is not a message of %s (allowed: %s, or %s for an application message)", e.Type, spec.Slug, messageNames(spec), sim.AppMessage)
		}
	case sim.ActDeliver:
		if e.Msg <= 0 {
			return sim.Action{}, fieldErr(f+".msg", "deliver needs the id of a held message")
		}
	case sim.ActTell:
		if e.To == nil {
			return sim.Action{}, fieldErr(f+".to", "tell needs the id of the process to tell")
		}
		i, err := index(f+".to", *e.To)
		if err != nil {
			return sim.Action{}, err
		}
		if i == a.Node {
			return sim.Action{}, fieldErr(f+".to", "%d tells itself: a process tells another process", *e.To)
		}
		a.To = i
	case sim.ActFire:
		if e.Name == "" {
			return sim.Action{}, fieldErr(f+".name", "fire needs the name of one of the node's timers")
		}
		a.Timer = e.Name
	case sim.ActPartition:
		if len(e.Groups) == 0 {
			return sim.Action{}, fieldErr(f+".groups", "a partition needs at least one group of ids")
		}
		seen := map[int]bool{}
		for g, group := range e.Groups {
			idx := make([]int, len(group))
			for m, id := range group {
				i, err := index(fmt.Sprintf("%s.groups[%d][%d]", f, g, m), id)
				if err != nil {
					return sim.Action{}, err
				}
				if seen[id] {
					return sim.Action{}, fieldErr(fmt.Sprintf("%s.groups[%d][%d]", f, g, m), "%d is in two groups", id)
				}
				seen[id] = true
				idx[m] = i
			}
			a.Groups = append(a.Groups, idx)
		}
	}
	if do == sim.ActTell && (e.Msg != 0 || e.From != nil || e.Type != "") {
		return sim.Action{}, fieldErr(f, "msg, from and type belong to drop and deliver only (tell takes node and to)")
	}
	if do != sim.ActDrop && do != sim.ActDeliver && do != sim.ActTell && (e.Msg != 0 || e.From != nil || e.To != nil || e.Type != "") {
		return sim.Action{}, fieldErr(f, "msg, from, to and type belong to drop and deliver only")
	}
	if do != sim.ActPartition && e.Groups != nil {
		return sim.Action{}, fieldErr(f+".groups", "groups belong to partition only")
	}
	if do != sim.ActFire && e.Name != "" {
		return sim.Action{}, fieldErr(f+".name", "name belongs to fire only")
	}
	if do == sim.ActNetwork {
		c, err := networkChange(f, e)
		if err != nil {
			return sim.Action{}, err
		}
		a.Net = c
	} else {
		for _, x := range []struct {
			name string
			set  bool
		}{{"delay", e.Delay != nil}, {"fifo", e.FIFO != nil}, {"loss", e.Loss != nil}, {"hold", e.Hold != nil}} {
			if x.set {
				return sim.Action{}, fieldErr(f+"."+x.name, "%s belongs to network only", x.name)
			}
		}
	}
	return a, nil
}

func indexOf(ids []int, id int) (int, bool) {
	k := slices.Index(ids, id)
	return k, k >= 0
}

func joinInts(v []int) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, " ")
}

func messageNames(spec *sim.Spec) string {
	names := make([]string, len(spec.Messages))
	for i, m := range spec.Messages {
		names[i] = m.Name
	}
	return strings.Join(names, ", ")
}

// Config turns a valid scenario into the kernel's configuration, applying the
// algorithm's defaults for what the scenario leaves out.
func (s *Scenario) Config() (sim.Config, error) {
	if err := s.Validate(); err != nil {
		return sim.Config{}, err
	}
	spec := s.Spec()
	d := spec.Defaults
	cfg := sim.Config{
		Spec:  spec,
		IDs:   s.ids(spec),
		Seed:  s.Seed,
		CS:    d.CS,
		Until: d.Until,
		Network: sim.Network{
			DelayMin: d.Delay[0], DelayMax: d.Delay[1], FIFO: d.FIFO,
		},
	}
	if nw := s.Network; nw != nil {
		if nw.Delay != nil {
			cfg.Network.DelayMin, cfg.Network.DelayMax = nw.Delay[0], nw.Delay[len(nw.Delay)-1]
		}
		if nw.FIFO != nil {
			cfg.Network.FIFO = *nw.FIFO
		}
		cfg.Network.Loss = nw.Loss
		cfg.Network.Hold = nw.Hold
	}
	if s.CS != nil {
		cfg.CS = *s.CS
	}
	if s.Until > 0 {
		cfg.Until = s.Until
	}
	if s.Monitors != nil {
		cfg.Pending = s.Monitors.Pending
	}
	var err error
	if cfg.Params, err = s.params(spec); err != nil {
		return sim.Config{}, err
	}
	if cfg.Actions, err = s.actions(spec); err != nil {
		return sim.Config{}, err
	}
	return cfg, nil
}

// Encode writes the scenario as indented JSON.
func (s *Scenario) Encode(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}
