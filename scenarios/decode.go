package scenarios

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/teach-dist/playground/runtime/sim"
)

// Strict decoding of a scenario document, and encoding/json's errors turned into ones
// that name the field.

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
func Parse(data []byte) (*Scenario, error) { return ParseCharged(data, nil) }

// ParseCharged is Parse that asks charge before loading a source not yet cached.
func ParseCharged(data []byte, charge LoadCharge) (*Scenario, error) {
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
	if f := DuplicateKey(data); f != "" {
		return nil, errDuplicate(f)
	}
	if err := explicitZero(data); err != nil {
		return nil, err
	}
	if err := s.charge(charge); err != nil {
		return nil, err
	}
	if err := s.readVersion1(); err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// readVersion1 gives a version 1 document the meaning it was written with: what it
// left to a default that has changed since defaults epoch 1 is written out as the
// earlier value (Maekawa's ids 0..N-1 and grid, the ring elections' earlier ways), and
// it becomes a version 2 document with those values explicit. Links do not come here:
// they carry their own defaults epoch.
func (s *Scenario) readVersion1() error {
	if s.Version != 1 {
		return nil
	}
	if err := s.pinDefaults(Version1Epoch); err != nil {
		return fieldErr("params", "%v", err)
	}
	s.Version = Version
	return nil
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
	var fe *sim.FieldError
	if errors.As(err, &fe) && fe.Field == "delay" {
		return fieldErr("network.delay", "%s", fe.Reason)
	}
	return &Error{Reason: err.Error()}
}

func kindName(goType string) string {
	switch {
	case strings.HasPrefix(goType, "uint"):
		return "a whole number, 0 or more"
	case strings.HasPrefix(goType, "int"):
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
