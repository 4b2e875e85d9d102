package starlarkalg

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"go.starlark.net/starlark"
)

// maxParamValues bounds the values of one param of its own shape, as a state's are.
const maxParamValues = 4096

// jsonData is a param of its own shape as Starlark data: an object is a dict with
// string keys in the document's order (a key given twice is an error), an array a
// list, a number an int (a fraction is an error), and strings, booleans and null
// themselves. At most maxParamValues values in all.
func jsonData(raw []byte) (starlark.Value, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	count := 0
	v, err := jsonValue(dec, &count)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the value")
	}
	return v, nil
}

func jsonValue(dec *json.Decoder, count *int) (starlark.Value, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if *count++; *count > maxParamValues {
		return nil, fmt.Errorf("more than %d values", maxParamValues)
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			d := starlark.NewDict(0)
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key := starlark.String(kt.(string)) // object keys are always strings
				if _, found, _ := d.Get(key); found {
					return nil, fmt.Errorf("%q: given twice", string(key))
				}
				v, err := jsonValue(dec, count)
				if err != nil {
					return nil, err
				}
				_ = d.SetKey(key, v) // a new dict: cannot fail
			}
			_, err := dec.Token()
			return d, err
		case '[':
			var elems []starlark.Value
			for dec.More() {
				v, err := jsonValue(dec, count)
				if err != nil {
					return nil, err
				}
				elems = append(elems, v)
			}
			_, err := dec.Token()
			return starlark.NewList(elems), err
		}
	case json.Number:
		n, err := t.Int64()
		if err != nil {
			return nil, fmt.Errorf("%s is not an integer", t)
		}
		return starlark.MakeInt64(n), nil
	case string:
		return starlark.String(t), nil
	case bool:
		return starlark.Bool(t), nil
	case nil:
		return starlark.None, nil
	}
	return nil, fmt.Errorf("unexpected %v", tok)
}
