package scenarios

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// DuplicateKey returns the path of the first object key that appears twice in one
// object of data ("algorithm", "events[2].node"), or "" when there is none or data is
// not JSON (the decoder reports that). encoding/json keeps the last of duplicates, so
// {"algorithm":"central","algorithm":"bully"} would run Bully while a reader of the
// document sees Central: scenarios, links and protocol frames refuse them instead.
func DuplicateKey(data []byte) string {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	path, _ := dupValue(dec, "")
	return path
}

// dupValue reads one value and returns the path of a duplicate key inside it.
func dupValue(dec *json.Decoder, path string) (string, error) {
	t, err := dec.Token()
	if err != nil {
		return "", err
	}
	switch t {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return "", err
			}
			key, _ := k.(string)
			field := key
			if path != "" {
				field = path + "." + key
			}
			if seen[key] {
				return field, nil
			}
			seen[key] = true
			if p, err := dupValue(dec, field); p != "" || err != nil {
				return p, err
			}
		}
		_, err = dec.Token()
		return "", err
	case json.Delim('['):
		for k := 0; dec.More(); k++ {
			if p, err := dupValue(dec, path+"["+strconv.Itoa(k)+"]"); p != "" || err != nil {
				return p, err
			}
		}
		_, err = dec.Token()
		return "", err
	}
	return "", nil
}

// errDuplicate is the error of a document with a key given twice.
func errDuplicate(field string) error {
	return fieldErr(field, "is given twice (each key once)")
}

// explicitZeros are the top-level fields whose zero value means "left out": written
// explicitly as 0 they are a mistake (0 nodes, until 0), not a request for the
// default, and are refused rather than silently replaced by it.
var explicitZeros = []struct{ field, reason string }{
	{"nodes", "0 is out of range: leave nodes out for the algorithm's default"},
	{"until", "0 is out of range: leave until out to run without a time limit"},
	{"monitors.pending", "0 is not a bound: leave pending out for the default"},
}

// explicitZero names the first field of explicitZeros written as 0 in data.
func explicitZero(data []byte) error {
	var doc struct {
		Nodes    json.RawMessage `json:"nodes"`
		Until    json.RawMessage `json:"until"`
		Monitors struct {
			Pending json.RawMessage `json:"pending"`
		} `json:"monitors"`
	}
	if json.Unmarshal(data, &doc) != nil {
		return nil // the strict decoder has said why
	}
	for k, raw := range []json.RawMessage{doc.Nodes, doc.Until, doc.Monitors.Pending} {
		if isZero(raw) {
			return fieldErr(explicitZeros[k].field, "%s", explicitZeros[k].reason)
		}
	}
	return nil
}

func isZero(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	f, err := strconv.ParseFloat(string(bytes.TrimSpace(raw)), 64)
	return err == nil && f == 0
}
