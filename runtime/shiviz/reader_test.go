package shiviz_test

// A reader of ShiViz logs that follows ShiViz's own code (DistributedClocks/shiviz):
// the file upload and Shiviz.prototype.visualize in js/shiviz.js, NamedRegExp in
// js/util/regexp.js (jsregexp_test.go), LogParser and ExecutionParser in
// js/model/parser.js, VectorTimestamp in js/model/vectorTimestamp.js, and ModelGraph in
// js/model/modelGraph.js with AbstractNode's family rules (js/graph/abstractNode.js),
// which make the hosts' lines and the arrows. The tests read every export through it;
// where ShiViz throws, it returns ShiViz's message.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// defaultParser is the expression ShiViz puts in its "log parsing" box when an uploaded
// file's first line is blank (js/shiviz.js: var defaultParser).
const defaultParser = `(?<event>.*)\n(?<host>\S*) (?<clock>{.*})`

// upload splits a file as ShiViz's file input does: text.split("\n", 2) gives the first
// two lines; a first line that is not blank becomes the expression "^" + line + "$", a
// second line that is not blank the delimiter "^" + trimmed line + "$"; the log is
// what follows the second "\n" (the whole text when there is none).
func upload(file string) (parser, delimiter, log string, err error) {
	lines := strings.SplitN(file, "\n", 3)
	if len(lines) < 2 {
		return "", "", "", fmt.Errorf("a file of one line: ShiViz fails reading its second line")
	}
	parser = defaultParser
	if jsTrim(lines[0]) != "" {
		parser = "^" + lines[0] + "$"
	}
	if d := jsTrim(lines[1]); d != "" {
		delimiter = "^" + d + "$"
	}
	log = file
	if len(lines) == 3 {
		log = lines[2]
	}
	return parser, delimiter, log, nil
}

// logEvent is one event as ShiViz parsed it.
type logEvent struct {
	text  string
	host  string
	own   int            // the clock's value for host, before zeros are removed
	keys  []string       // the clock's hosts in JavaScript's property order, zeros removed
	line  int            // ShiViz's line number: of the match's first line, from 1
	clock map[string]int // the clock, zero entries removed, as VectorTimestamp does
}

// parse reads the log of one execution (no delimiter: ShiViz's LogParser gives the whole
// trimmed text to one ExecutionParser) with the expression as the "log parsing" box
// holds it (visualize trims it and builds NamedRegExp(parser, "m")).
func parse(log, parser string) ([]logEvent, error) {
	parser = jsTrim(parser)
	if parser == "" {
		return nil, fmt.Errorf("the parser regexp field must not be empty")
	}
	re, err := newNamedRegExp(parser, "m")
	if err != nil {
		return nil, err
	}
	for _, name := range []string{"clock", "host", "event"} {
		if !slices.Contains(re.names, name) {
			return nil, fmt.Errorf("the parser RegExp you entered does not have the necessary named capture groups")
		}
	}
	raw := jsTrim(log)
	matches, err := re.execAll(raw)
	if err != nil {
		return nil, err
	}
	var out []logEvent
	for _, m := range matches {
		e := logEvent{text: m.named["event"], host: m.named["host"], line: strings.Count(raw[:m.at], "\n") + 1}
		clock, ok := m.named["clock"]
		if !ok {
			return nil, fmt.Errorf("line %d: no clock captured: ShiViz's JSON.parse(undefined) throws", e.line)
		}
		if err := e.timestamp(clock); err != nil {
			return nil, fmt.Errorf("an error occured while trying to parse the vector timestamp on line %d: %v", e.line+1, err)
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the parser RegExp you entered does not capture any events for the execution")
	}
	return out, nil
}

// timestamp reads the clock as ExecutionParser's parseTimestamp does (JSON.parse, and
// once more with \" read as " when that fails), then VectorTimestamp's checks.
func (e *logEvent) timestamp(text string) error {
	keys, values, isObject, err := jsonParse(text)
	if err != nil {
		keys, values, isObject, err = jsonParse(strings.ReplaceAll(text, `\"`, `"`))
		if err != nil {
			return err
		}
	}
	own, ok := values[e.host]
	if !isObject || !ok {
		return fmt.Errorf("local host %q is missing from timestamp: %s", e.host, text)
	}
	e.own = own
	e.clock = map[string]int{}
	for _, k := range keys {
		if values[k] != 0 {
			e.keys = append(e.keys, k)
			e.clock[k] = values[k]
		}
	}
	return nil
}

// jsonParse reads a JSON text as JSON.parse does, keeping an object's keys in the
// order JavaScript lists them (jsOrder; a repeated key keeps its first place and its
// last value). The values must be whole numbers: JavaScript would coerce anything else
// in ways this reader does not follow, so it refuses them.
func jsonParse(text string) (keys []string, values map[string]int, isObject bool, err error) {
	if !json.Valid([]byte(text)) {
		return nil, nil, false, fmt.Errorf("JSON.parse fails on %s", text)
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	if tok, _ := dec.Token(); tok != json.Delim('{') {
		return nil, nil, false, nil
	}
	values = map[string]int{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, false, err
		}
		key := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, false, err
		}
		var n json.Number
		if bytes.HasPrefix(raw, []byte(`"`)) || json.Unmarshal(raw, &n) != nil {
			return nil, nil, false, fmt.Errorf("host %q: %s is not a number", key, raw)
		}
		f, err := n.Float64()
		if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			return nil, nil, false, fmt.Errorf("host %q: %s is not a whole number", key, raw)
		}
		if _, seen := values[key]; !seen {
			keys = append(keys, key)
		}
		values[key] = int(f)
	}
	return jsOrder(keys), values, true, nil
}

// jsOrder lists an object's keys as JavaScript's for-in does: the array indexes
// ("0", "7", "12", below 2^32-1) in numeric order first, then the others in the order
// they were added.
func jsOrder(keys []string) []string {
	index := func(k string) (uint64, bool) {
		n, err := strconv.ParseUint(k, 10, 32)
		return n, err == nil && n < 1<<32-1 && strconv.FormatUint(n, 10) == k
	}
	var idx, rest []string
	for _, k := range keys {
		if _, ok := index(k); ok {
			idx = append(idx, k)
		} else {
			rest = append(rest, k)
		}
	}
	slices.SortStableFunc(idx, func(a, b string) int {
		x, _ := index(a)
		y, _ := index(b)
		return int(x) - int(y)
	})
	return append(idx, rest...)
}

// graph is what ShiViz's ModelGraph holds: the hosts in the order they first appear,
// each host's events in clock order, and the arrows (parent, child) as indexes into
// the parsed events.
type graph struct {
	hosts  []string
	lines  map[string][]int
	arrows map[[2]int]bool
}

// model builds the graph as ModelGraph does (initHosts, initPrevNext,
// initParentChild) and fails where it throws.
func model(events []logEvent) (*graph, error) {
	g := &graph{lines: map[string][]int{}, arrows: map[[2]int]bool{}}
	for i, e := range events {
		if _, ok := g.lines[e.host]; !ok {
			g.hosts = append(g.hosts, e.host)
		}
		g.lines[e.host] = append(g.lines[e.host], i)
	}
	// ModelGraph walks its hosts with for-in over objects keyed by host.
	order := jsOrder(g.hosts)
	for _, h := range order {
		line := g.lines[h]
		slices.SortStableFunc(line, func(a, b int) int { return events[a].own - events[b].own })
		for k, i := range line {
			if own := events[i].own; own != k+1 {
				if k == 0 {
					return nil, fmt.Errorf("logical clock values for each host must start at 1; the clock value for the first event for host %q is %d (line %d)", h, own, events[i].line)
				}
				return nil, fmt.Errorf("clock values for a host must increase monotonically by 1; the clock for host %q goes from %d to %d (line %d)", h, events[line[k-1]].own, own, events[i].line)
			}
		}
	}
	f := newFamily(events)
	// initParentChild: along each host's line, the hosts whose entry grew since the
	// line's earlier events give candidates (that host's event of that count); a
	// candidate that another candidate's clock names exactly is dropped; each one left
	// becomes a parent unless the event has a later parent on that host already.
	for _, h := range order {
		known := map[string]int{}
		for _, cur := range g.lines[h] {
			e := &events[cur]
			known[h] = e.own
			var candidates []int
			for _, other := range e.keys {
				v := e.clock[other]
				if k, ok := known[other]; ok && k >= v {
					continue
				}
				known[other] = v
				line, ok := g.lines[other]
				if !ok {
					return nil, fmt.Errorf("line %d: the event's vector clock contains an entry for an unrecognized host %q", e.line, other)
				}
				if v < 1 || v > len(line) {
					return nil, fmt.Errorf("line %d: the event's vector clock contains an invalid clock value %d for host %q", e.line, v, other)
				}
				candidates = append(candidates, line[v-1])
			}
			connections := map[string]int{}
			var ids []string // the connections' keys in insertion order (none is an index)
			id := func(host string, t int) string { return host + ":" + strconv.Itoa(t) }
			for _, c := range candidates {
				k := id(events[c].host, events[c].own)
				if _, ok := connections[k]; !ok {
					ids = append(ids, k)
				}
				connections[k] = c
			}
			for _, c := range candidates {
				for _, other := range events[c].keys {
					if other != events[c].host {
						delete(connections, id(other, events[c].clock[other]))
					}
				}
			}
			for _, k := range ids {
				p, ok := connections[k]
				if !ok {
					continue
				}
				if old, ok := f.parent[cur][events[p].host]; !ok || events[p].own > events[old].own {
					if err := f.addParent(cur, p); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	for c, ps := range f.parent {
		for _, p := range ps {
			g.arrows[[2]int{p, c}] = true
		}
	}
	return g, nil
}

// family is AbstractNode's parents and children: at most one parent and one child per
// host for each event, kept both ways.
type family struct {
	events        []logEvent
	parent, child []map[string]int // event -> host -> event
}

func newFamily(events []logEvent) *family {
	f := &family{events: events, parent: make([]map[string]int, len(events)), child: make([]map[string]int, len(events))}
	for i := range events {
		f.parent[i], f.child[i] = map[string]int{}, map[string]int{}
	}
	return f
}

// addParent is AbstractNode.prototype.addParent: the child's earlier parent on the
// parent's host, and the parent's earlier child on the child's host, are let go.
func (f *family) addParent(c, p int) error {
	ch, ph := f.events[c].host, f.events[p].host
	if ch == ph {
		return fmt.Errorf("a node cannot be the parent of another node who has the same host")
	}
	if old, ok := f.parent[c][ph]; ok {
		if old == p {
			return nil
		}
		delete(f.parent[c], ph)
		delete(f.child[old], ch)
	}
	f.parent[c][ph] = p
	if old, ok := f.child[p][ch]; ok {
		delete(f.child[p], ch)
		delete(f.parent[old], ph)
	}
	f.child[p][ch] = c
	return nil
}
