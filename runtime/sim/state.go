package sim

import "strconv"

// StateWriter encodes a node's variables as one canonical JSON object: keys in the order
// written, no spaces, integers only. The same state always gives the same bytes, so the
// encoding doubles as the explorer's state key and the inspector's data.
type StateWriter struct {
	b     []byte
	count int
}

func (w *StateWriter) key(k string) {
	if w.count == 0 {
		w.b = append(w.b, '{')
	} else {
		w.b = append(w.b, ',')
	}
	w.count++
	w.b = appendString(w.b, k)
	w.b = append(w.b, ':')
}

// Str writes a string variable.
func (w *StateWriter) Str(k, v string) {
	w.key(k)
	w.b = appendString(w.b, v)
}

// Int writes an integer variable.
func (w *StateWriter) Int(k string, v int) {
	w.key(k)
	w.b = strconv.AppendInt(w.b, int64(v), 10)
}

// Bool writes a boolean variable.
func (w *StateWriter) Bool(k string, v bool) {
	w.key(k)
	w.b = strconv.AppendBool(w.b, v)
}

// Ints writes an array of integers (never null).
func (w *StateWriter) Ints(k string, v []int) {
	w.key(k)
	w.b = appendInts(w.b, v)
}

// Pairs writes an array of pairs, such as a queue of (timestamp, id) requests.
func (w *StateWriter) Pairs(k string, v [][2]int) {
	w.key(k)
	w.b = append(w.b, '[')
	for i, p := range v {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.b = append(w.b, '[')
		w.b = strconv.AppendInt(w.b, int64(p[0]), 10)
		w.b = append(w.b, ',')
		w.b = strconv.AppendInt(w.b, int64(p[1]), 10)
		w.b = append(w.b, ']')
	}
	w.b = append(w.b, ']')
}

// Object writes the variables of obj, an object another StateWriter encoded (a node
// whose variables were encoded in another process writes them back so).
func (w *StateWriter) Object(obj []byte) {
	if len(obj) <= 2 { // "{}": nothing
		return
	}
	if w.count == 0 {
		w.b = append(w.b, '{')
	} else {
		w.b = append(w.b, ',')
	}
	w.count++
	w.b = append(w.b, obj[1:len(obj)-1]...)
}

// Bytes closes the object and returns it; the writer may be reused after Reset.
func (w *StateWriter) Bytes() []byte {
	if w.count == 0 {
		return append(w.b, '{', '}')
	}
	return append(w.b, '}')
}

// Reset empties the writer, keeping its buffer.
func (w *StateWriter) Reset() { w.b, w.count = w.b[:0], 0 }

// EncodeState returns node's canonical JSON.
func EncodeState(n Node) []byte {
	var w StateWriter
	n.Encode(&w)
	return w.Bytes()
}

func appendInts(b []byte, v []int) []byte {
	b = append(b, '[')
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(x), 10)
	}
	return append(b, ']')
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
