package params

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/teach-dist/playground/runtime/sim"
)

// This file words what a field accepts and what it got, the same way for every
// algorithm.

// want says what a field accepts: "a positive integer", "true or false" ...
func want(f sim.Param) string {
	switch f.Kind {
	case sim.ParamInt:
		switch {
		case f.Min == 1:
			return "a positive integer"
		case f.Min == 0 && f.Zero != "":
			return "0 (" + f.Zero + ") or a positive integer"
		case f.Min == 0:
			return "0 or a positive integer"
		}
		return fmt.Sprintf("an integer from %d", f.Min)
	case sim.ParamNode:
		return "a node id (an integer)"
	case sim.ParamBool:
		return "true or false"
	case sim.ParamChoice:
		return quoted(f.Choices, " or ")
	}
	return "an object with " + names(f.Fields)
}

func maxOf(f sim.Param) int {
	if f.Max > 0 {
		return f.Max
	}
	return sim.MaxTime
}

// describe names a JSON value's type as encoding/json does in its errors ("string",
// "number"); a number meant for an integer field shows itself ("number 1.5").
func describe(raw []byte, kind sim.ParamKind) string {
	switch raw[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	if kind == sim.ParamInt || kind == sim.ParamNode {
		return "number " + string(raw)
	}
	return "number"
}

func names(fields []sim.Param) string {
	s := make([]string, len(fields))
	for i, f := range fields {
		s[i] = f.Name
	}
	return strings.Join(s, ", ")
}

func quoted(v []string, sep string) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Quote(x)
	}
	return strings.Join(s, sep)
}

func find(fields []sim.Param, name string) *sim.Param {
	for i := range fields {
		if fields[i].Name == name {
			return &fields[i]
		}
	}
	return nil
}

func contains[T comparable](v []T, x T) bool { return slices.Contains(v, x) }

type member struct {
	name string
	raw  json.RawMessage
}

// members reads a JSON object's members in order; a name given twice is an error,
// not silently the last one.
func members(raw []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not an object")
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var m member
		m.name = tok.(string) // object keys are always strings
		if err := dec.Decode(&m.raw); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

func lookup(ms []member, name string) (json.RawMessage, bool) {
	for _, m := range ms {
		if m.name == name {
			return m.raw, true
		}
	}
	return nil, false
}
