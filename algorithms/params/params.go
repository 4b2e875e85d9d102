// Package params decodes an algorithm's params from what the algorithm declares about
// them (sim.Param): one decoder for every algorithm, so each error is worded the same
// way: it names the field (params.<field>) and says what the field accepts, and a
// student who mistypes a setting in the playground is told which one and how to fix it.
//
// An algorithm declares its fields once, on its sim.Spec (Params), keeps its settings
// in a struct whose fields carry `param:"<name>"` tags, and registers
// Parser(fields, DefaultParams) as its ParseParams; its constructor reads the result
// back with Of. Rules a declaration cannot state go in the struct's Validate method,
// and shapes of their own (a tree, voting sets) in an Object hook.
package params

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"

	"github.com/teach-dist/playground/runtime/sim"
)

// Object decodes a sim.ParamObject field that has no Fields of its own: raw is the
// field's JSON (never null; null leaves the field out).
type Object[P any] struct {
	Name   string
	Decode func(raw []byte, ids []int, p *P) error
}

// Validator is implemented by a params struct (or a struct inside it) with rules
// between its fields; field is its path for the error ("params", "params.heartbeat").
// It runs once the struct's fields are decoded.
type Validator interface {
	Validate(field string) error
}

// Parser returns a sim.Spec.ParseParams for these fields: it starts from def(ids) and
// decodes raw over it with Parse.
func Parser[P any](fields []sim.Param, def func(ids []int) P, objects ...Object[P]) func(raw []byte, ids []int) (any, error) {
	return func(raw []byte, ids []int) (any, error) {
		p, err := Parse(raw, ids, fields, def(ids), objects...)
		if err != nil {
			return nil, err
		}
		return p, nil
	}
}

// Parse decodes raw strictly into a copy of def: a field that is not one of fields, has
// the wrong type or lies outside its range is an error naming it, and so is anything
// after the one object. Fields left out, or null, keep their value in def; so do nil,
// blank or null raw. A node field needs ids to choose from even when left out.
func Parse[P any](raw []byte, ids []int, fields []sim.Param, def P, objects ...Object[P]) (P, error) {
	p := def
	hook := func(name string, raw []byte) (bool, error) {
		for _, o := range objects {
			if o.Name == name {
				return true, o.Decode(raw, ids, &p)
			}
		}
		return false, nil
	}
	err := parseInto(raw, ids, fields, reflect.ValueOf(&p).Elem(), hook)
	return p, err
}

// ParseValue is Parse for a params struct whose type is only known at run time (an
// algorithm written in Starlark builds it with reflect.StructOf from its declarations):
// dst is an addressable struct holding the defaults, and raw is decoded over it. It
// takes no Object hooks, so fields must not be objects without Fields.
func ParseValue(raw []byte, ids []int, fields []sim.Param, dst reflect.Value) error {
	return parseInto(raw, ids, fields, dst, func(string, []byte) (bool, error) { return false, nil })
}

// ParseValueWith is ParseValue whose object fields without Fields of their own are
// decoded by hook, as Parse's objects are: hook gets the field's name and JSON (never
// null) and says whether it decoded it.
func ParseValueWith(raw []byte, ids []int, fields []sim.Param, dst reflect.Value, hook func(name string, raw []byte) (bool, error)) error {
	return parseInto(raw, ids, fields, dst, hook)
}

func parseInto(raw []byte, ids []int, fields []sim.Param, dst reflect.Value, hook func(name string, raw []byte) (bool, error)) error {
	for _, f := range fields {
		if f.Kind == sim.ParamNode && len(ids) == 0 {
			return fmt.Errorf("params.%s: there are no node ids to choose from", f.Name)
		}
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	d := decoder{ids: ids, hook: hook}
	dec := json.NewDecoder(bytes.NewReader(raw))
	var obj json.RawMessage
	if err := dec.Decode(&obj); err != nil {
		return fmt.Errorf("params: %v", err)
	}
	if dec.More() || dec.InputOffset() != int64(len(raw)) {
		return errors.New("params: must be a single JSON object")
	}
	return d.object("params", obj, fields, dst)
}

// Of returns the params a constructor was given: what Parser returned (P, or a non-nil
// *P from a hand-built setup), otherwise def.
func Of[P any](setup *sim.Setup, def P) P {
	switch v := setup.Params.(type) {
	case P:
		return v
	case *P:
		if v != nil {
			return *v
		}
	}
	return def
}

type decoder struct {
	ids  []int
	hook func(name string, raw []byte) (bool, error)
}

// object decodes a JSON object into the struct dst, field by declared field; path
// names the object in errors.
func (d *decoder) object(path string, raw []byte, fields []sim.Param, dst reflect.Value) error {
	members, err := members(raw)
	if err != nil {
		return fmt.Errorf("%s: got %s, want an object with %s", path, describe(raw, sim.ParamObject), names(fields))
	}
	for i, m := range members {
		if _, twice := lookup(members[:i], m.name); twice {
			return fmt.Errorf("%s.%s: given twice", path, m.name)
		}
		if find(fields, m.name) == nil {
			return fmt.Errorf("%s.%s: unknown field (allowed: %s)", path, m.name, names(fields))
		}
	}
	for _, f := range fields {
		v, ok := lookup(members, f.Name)
		if !ok || string(v) == "null" {
			continue
		}
		if err := d.field(path+"."+f.Name, v, f, dst); err != nil {
			return err
		}
	}
	return validate(path, dst)
}

func (d *decoder) field(path string, raw []byte, f sim.Param, dst reflect.Value) error {
	if f.Kind == sim.ParamObject && len(f.Fields) == 0 {
		if ok, err := d.hook(f.Name, raw); ok {
			return err
		}
		panic("params: no Object hook decodes " + path)
	}
	to := fieldOf(dst, f.Name)
	switch f.Kind {
	case sim.ParamInt, sim.ParamNode:
		n, err := strconv.Atoi(string(raw))
		if err != nil {
			return fmt.Errorf("%s: got %s, want %s", path, describe(raw, f.Kind), want(f))
		}
		if err := checkInt(path, n, f, d.ids); err != nil {
			return err
		}
		to.SetInt(int64(n))
	case sim.ParamBool:
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			return fmt.Errorf("%s: got %s, want %s", path, describe(raw, f.Kind), want(f))
		}
		to.SetBool(b)
	case sim.ParamChoice:
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return fmt.Errorf("%s: got %s, want %s", path, describe(raw, f.Kind), want(f))
		}
		if !contains(f.Choices, s) {
			return fmt.Errorf("%s: %q is unknown (allowed: %s)", path, s, quoted(f.Choices, ", "))
		}
		to.SetString(s)
	case sim.ParamObject:
		return d.object(path, raw, f.Fields, to)
	}
	return nil
}

func checkInt(path string, n int, f sim.Param, ids []int) error {
	if f.Kind == sim.ParamNode {
		return notNode(path, n, ids)
	}
	if n < f.Min || n > maxOf(f) {
		return fmt.Errorf("%s: must be %s (at most %d), got %d", path, want(f), maxOf(f), n)
	}
	return nil
}

// validate runs the Validate methods of dst and of the structs inlined in it.
func validate(path string, dst reflect.Value) error {
	for i := 0; i < dst.NumField(); i++ {
		sf := dst.Type().Field(i)
		if sf.Tag.Get("param") == "" && sf.Type.Kind() == reflect.Struct && sf.IsExported() {
			if err := validate(path, dst.Field(i)); err != nil {
				return err
			}
		}
	}
	if v, ok := dst.Addr().Interface().(Validator); ok {
		return v.Validate(path)
	}
	return nil
}

// fieldOf finds the struct field tagged `param:"name"`, in dst or in a struct field of
// dst without a tag (settings shared by several algorithms are inlined that way).
func fieldOf(dst reflect.Value, name string) reflect.Value {
	if v, ok := searchField(dst, name); ok {
		return v
	}
	panic("params: " + dst.Type().String() + " has no field tagged param:\"" + name + "\"")
}

func searchField(dst reflect.Value, name string) (reflect.Value, bool) {
	t := dst.Type()
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		switch tag := sf.Tag.Get("param"); {
		case tag == name:
			return dst.Field(i), true
		case tag == "" && sf.Type.Kind() == reflect.Struct && sf.IsExported():
			if v, ok := searchField(dst.Field(i), name); ok {
				return v, true
			}
		}
	}
	return reflect.Value{}, false
}
