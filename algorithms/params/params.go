// Package params decodes an algorithm's JSON params strictly and words the errors the
// same way everywhere: each names the field (params.<field>) and what it accepts, so a
// student who mistypes a setting in the playground is told which one and how to fix it.
package params

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Field names one JSON field and what it accepts, for the error when a value has the
// wrong JSON type. Want words it as "params.<Name>: got <value>, want <Want>", Must as
// "params.<Name>: must be <Must>, got <value>"; with neither, the error is the
// object-level one ("params: got <value>, want an object with ...").
//
// A field of a nested object is named by its path ("heartbeat.period").
type Field struct {
	Name string
	Want string
	Must string
}

// Spec describes an algorithm's params object.
type Spec struct {
	// Fields are the accepted fields, in the order the messages list them.
	Fields []Field
	// Object is what "want an object with ..." lists; "" joins the field names with ", ".
	Object string
	// Allowed is what "(allowed: ...)" lists; "" joins the field names with ", ".
	Allowed string
	// QuoteUnknown words an unknown field as `params: unknown field "x" (allowed: ...)`
	// rather than `params.x: unknown field (allowed: ...)`.
	QuoteUnknown bool
}

// Decode reads raw strictly into dst, a pointer to a struct whose pointer fields stay
// nil when left out: unknown fields and anything after the one object are errors. It
// reports whether params were given at all; nil, blank or null are not, and leave dst
// alone so the caller keeps its defaults.
func Decode(raw []byte, dst any, s Spec) (given bool, err error) {
	text := strings.TrimSpace(string(raw))
	if text == "" || text == "null" {
		return false, nil
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return true, s.decodeError(err)
	}
	// Only JSON whitespace may follow the object (the decoder's own notion of blank).
	if strings.TrimLeft(text[dec.InputOffset():], " \t\r\n") != "" {
		return true, errors.New("params: must be a single JSON object")
	}
	return true, nil
}

// decodeError turns a decoding error into one that names the field.
func (s Spec) decodeError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if f, ok := s.field(te.Field); ok {
			switch {
			case f.Want != "":
				return fmt.Errorf("params.%s: got %s, want %s", f.Name, te.Value, f.Want)
			case f.Must != "":
				return fmt.Errorf("params.%s: must be %s, got %s", f.Name, f.Must, te.Value)
			}
		}
		return fmt.Errorf("params: got %s, want an object with %s", te.Value, s.list(s.Object))
	}
	// encoding/json reports an unknown field only in its message.
	if msg := err.Error(); strings.HasPrefix(msg, "json: unknown field ") {
		quoted := strings.TrimPrefix(msg, "json: unknown field ")
		if s.QuoteUnknown {
			return fmt.Errorf("params: unknown field %s (allowed: %s)", quoted, s.list(s.Allowed))
		}
		return fmt.Errorf("params.%s: unknown field (allowed: %s)", strings.Trim(quoted, `"`), s.list(s.Allowed))
	}
	return fmt.Errorf("params: %v", err)
}

// field finds the field a type error is about: by its whole path first, then by its
// last part, since a field promoted from an embedded struct comes as "Embedded.name".
func (s Spec) field(path string) (Field, bool) {
	last := path[strings.LastIndex(path, ".")+1:]
	for _, name := range []string{path, last} {
		if i := slices.IndexFunc(s.Fields, func(f Field) bool { return f.Name == name }); i >= 0 {
			return s.Fields[i], true
		}
	}
	return Field{}, false
}

func (s Spec) list(override string) string {
	if override != "" {
		return override
	}
	names := make([]string, len(s.Fields))
	for i, f := range s.Fields {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

// NodeID checks that id is one of ids; the error names the field and lists the ids.
func NodeID(field string, id int, ids []int) error {
	if slices.Contains(ids, id) {
		return nil
	}
	return fmt.Errorf("params.%s: %d is not a node id (ids: %s)", field, id, JoinInts(ids))
}

// JoinInts writes v space-separated, the way messages list ids: "0 1 2".
func JoinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, " ")
}
