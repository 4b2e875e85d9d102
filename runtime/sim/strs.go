package sim

// Strs writes an array of strings (never null), such as messages a node keeps.
func (w *StateWriter) Strs(k string, v []string) {
	w.key(k)
	w.b = append(w.b, '[')
	for i, s := range v {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.b = appendString(w.b, s)
	}
	w.b = append(w.b, ']')
}
