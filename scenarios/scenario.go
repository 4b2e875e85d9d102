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
	"strings"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/algorithms/starlarkalg"
	"github.com/teach-dist/playground/runtime/sim"
)

// Version is the scenario format this package writes; it reads versions 1..Version.
// Version 2 takes today's defaults; a version 1 file is read with the defaults it was
// written with, those of defaults epoch 1 (Version1Epoch), which pinDefaults writes out.
const Version = 2

// Version1Epoch is the defaults epoch of scenario version 1: the defaults before
// Maekawa's ids became 1..N and every later change.
const Version1Epoch = 1

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
	// Source is an algorithm in Starlark that runs instead of Algorithm's Go one
	// (source.go); Algorithm must have a template (starlarkalg.Templates).
	Source string `json:"source,omitempty"`
	// Challenge is what a curated scenario asks of a student's source (challenge.go).
	Challenge *Challenge `json:"challenge,omitempty"`
}

// DefaultWorkloadTitle is the title of a free run's default workload: the events Play
// adds to a free run with nothing scheduled (static/workload.js). Such a run counts
// as free where that matters (the explorer may search it at fewer processes).
const DefaultWorkloadTitle = "Default workload"

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
type Delay = sim.Delay

// Monitors tunes the monitors.
type Monitors struct {
	Pending int `json:"pending,omitempty"` // a request waiting longer is reported
}

// Event is one scheduled action, as the kernel's decoder reads it: node ids, not
// indexes. A link's interventions and the WebSocket act frames are written the same
// way and decoded by the same code (sim.ActionJSON.Action).
type Event = sim.ActionJSON

// Error is a scenario that cannot run; Field names the culprit (e.g. "events[2].node").
type Error struct {
	Field  string
	Reason string
	// Line and Col place an error of the field "source" in the source (0: nowhere).
	Line, Col int
}

func (e *Error) Error() string { return FieldMessage("scenario", e.Field, e.Reason) }

// FieldMessage is how an error in a document of kind doc reads: "doc: field: reason",
// or "doc: reason" when no one field is at fault. Assignments read the same.
func FieldMessage(doc, field, reason string) string {
	if field == "" {
		return doc + ": " + reason
	}
	return doc + ": " + field + ": " + reason
}

func fieldErr(field, format string, args ...any) error {
	return &Error{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// Spec returns the scenario's algorithm (valid after Validate): its source when it
// has one, else the Go algorithm.
func (s *Scenario) Spec() *sim.Spec {
	if s.Source != "" {
		spec, err := loadSource(s.Algorithm, s.Source)
		if err != nil {
			return nil
		}
		return spec
	}
	spec, _ := algorithms.Lookup(s.Algorithm)
	return spec
}

// sourceSpec checks Source and returns the Spec it loads to.
func (s *Scenario) sourceSpec() (*sim.Spec, error) {
	if !slices.Contains(starlarkalg.Templates(), s.Algorithm) {
		return nil, fieldErr("source", "%s has no Starlark template, so no editable rules (these have: %s)",
			s.Algorithm, strings.Join(starlarkalg.Templates(), ", "))
	}
	spec, err := loadSource(s.Algorithm, s.Source)
	if err != nil {
		return nil, sourceErr(err)
	}
	// A source runs on the page of its algorithm: one of the same family. An
	// algorithm of its own (a declared name) is named apart from the playground's.
	host, _ := algorithms.Lookup(s.Algorithm)
	if spec.Family != host.Family {
		return nil, fieldErr("source", "declares family %q, but %s is of family %q: a source runs on the page of an algorithm of its family", spec.Family, s.Algorithm, host.Family)
	}
	if _, taken := algorithms.Lookup(spec.Name); taken {
		return nil, fieldErr("source", "name: %q is one of the playground's algorithms: give your algorithm a name of its own", spec.Name)
	}
	return spec, nil
}

// Validate checks every field and fills nothing in; Config applies the defaults.
func (s *Scenario) Validate() error {
	if s.Version < 1 || s.Version > Version {
		return fieldErr("version", "%d is not supported (this playground reads versions 1 and 2)", s.Version)
	}
	spec, ok := algorithms.Lookup(s.Algorithm)
	if !ok {
		return fieldErr("algorithm", "%q is unknown (allowed: %s)", s.Algorithm, strings.Join(algorithms.Slugs(), ", "))
	}
	if s.Source != "" {
		var err error
		if spec, err = s.sourceSpec(); err != nil {
			return err
		}
	}
	if err := s.Challenge.validate(s.Source != ""); err != nil {
		return err
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

// ids returns the node ids, defaulting to the algorithm's (sim.Defaults.IDs).
func (s *Scenario) ids(spec *sim.Spec) []int {
	if s.IDs != nil {
		return slices.Clone(s.IDs)
	}
	return spec.Defaults.IDs(s.nodeCount(spec))
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
		a, err := e.Action(spec, ids)
		if err != nil {
			return nil, eventErr(f, err)
		}
		if e.At < 0 || e.At > sim.MaxTime {
			return nil, fieldErr(f+".at", "%d is out of range (0 to %d)", e.At, sim.MaxTime)
		}
		acts = append(acts, a)
	}
	return acts, nil
}

// eventErr names the field of event f (e.g. "events[2]") that the kernel's check
// found at fault.
func eventErr(f string, err error) *Error {
	var fe *sim.FieldError
	if !errors.As(err, &fe) {
		return &Error{Field: f, Reason: err.Error()}
	}
	if fe.Field == "" {
		return &Error{Field: f, Reason: fe.Reason}
	}
	return &Error{Field: f + "." + fe.Field, Reason: fe.Reason}
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
