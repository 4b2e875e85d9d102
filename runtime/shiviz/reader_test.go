package shiviz_test

// A reader of ShiViz logs that follows ShiViz's own rules (DistributedClocks/shiviz:
// the file upload in js/shiviz.js, LogParser and ExecutionParser in js/model/parser.js,
// VectorTimestamp, and ModelGraph in js/model/modelGraph.js, which builds the hosts'
// lines and the arrows). The tests read every export through it.

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// defaultParser is the expression in ShiViz's "log parsing" box unless a file says
// otherwise (js/shiviz.js defaultParser).
const defaultParser = `(?<event>.*)\n(?<host>\S*) (?<clock>{.*})`

// upload splits a file as ShiViz's file input does: a non-blank first line is the
// expression, anchored with ^ and $; a non-blank second line the delimiter; the log
// is what follows the second line.
func upload(file string) (parser, delimiter, log string, err error) {
	lines := strings.SplitN(file, "\n", 3)
	if len(lines) < 3 {
		return "", "", "", fmt.Errorf("a file of %d lines: ShiViz reads two lines before the log", len(lines))
	}
	parser = defaultParser
	if strings.TrimSpace(lines[0]) != "" {
		parser = "^" + lines[0] + "$"
	}
	if strings.TrimSpace(lines[1]) != "" {
		delimiter = "^" + strings.TrimSpace(lines[1]) + "$"
	}
	return parser, delimiter, lines[2], nil
}

// logEvent is one event as ShiViz parsed it.
type logEvent struct {
	text  string
	host  string
	clock map[string]int // zero entries removed, as VectorTimestamp does
	line  int
}

func (e *logEvent) own() int { return e.clock[e.host] }

// compile turns ShiViz's expression into Go's, with the multi-line flag ShiViz sets
// ("m"). JavaScript and Go agree on this expression's pieces (., \S, ^, $ under m, a
// literal {) as long as the text has no line terminator but \n and no white space but
// the space and \n, which sameSyntax checks first.
func compile(parser string) (*regexp.Regexp, error) {
	re, err := regexp.Compile("(?m)" + parser)
	if err != nil {
		return nil, err
	}
	for _, name := range []string{"clock", "host", "event"} {
		if re.SubexpIndex(name) < 0 {
			return nil, fmt.Errorf("the parser RegExp has no %q capture group", name)
		}
	}
	return re, nil
}

func sameSyntax(text string) error {
	for i, r := range text {
		if r != ' ' && r != '\n' && (unicode.IsSpace(r) || r == '\u2028' || r == '\u2029' || r == '\ufeff') {
			return fmt.Errorf("byte %d: %U, on which JavaScript's and Go's expressions differ", i, r)
		}
	}
	return nil
}

// parse reads the log of one execution (no delimiter) as LogParser and ExecutionParser
// do: the log trimmed, the expression applied again and again over the whole text.
func parse(log, parser string) ([]logEvent, error) {
	if err := sameSyntax(log); err != nil {
		return nil, err
	}
	re, err := compile(parser)
	if err != nil {
		return nil, err
	}
	log = strings.TrimSpace(log)
	var out []logEvent
	for _, m := range re.FindAllStringSubmatchIndex(log, -1) {
		group := func(name string) string {
			k := re.SubexpIndex(name)
			return log[m[2*k]:m[2*k+1]]
		}
		e := logEvent{text: group("event"), host: group("host"), line: strings.Count(log[:m[0]], "\n") + 1}
		var clock map[string]json.Number
		if err := json.Unmarshal([]byte(group("clock")), &clock); err != nil {
			return nil, fmt.Errorf("line %d: the vector timestamp does not parse: %v", e.line+1, err)
		}
		if _, ok := clock[e.host]; !ok {
			return nil, fmt.Errorf("line %d: local host %q is missing from timestamp", e.line+1, e.host)
		}
		e.clock = map[string]int{}
		for h, v := range clock {
			n, err := strconv.Atoi(v.String())
			if err != nil {
				return nil, fmt.Errorf("line %d: host %q: %v is not a count", e.line+1, h, v)
			}
			if n != 0 {
				e.clock[h] = n
			}
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the parser RegExp you entered does not capture any events for the execution")
	}
	return out, nil
}

// graph is what ShiViz draws: the hosts in the order they first appear, each host's
// events in clock order, and the arrows (from, to) as indexes into the parsed events.
type graph struct {
	hosts  []string
	lines  map[string][]int
	arrows map[[2]int]bool
}

// model builds the graph as ModelGraph does and fails where it throws.
func model(events []logEvent) (*graph, error) {
	g := &graph{lines: map[string][]int{}, arrows: map[[2]int]bool{}}
	for i, e := range events {
		if _, ok := g.lines[e.host]; !ok {
			g.hosts = append(g.hosts, e.host)
		}
		g.lines[e.host] = append(g.lines[e.host], i)
	}
	for _, h := range g.hosts {
		line := g.lines[h]
		slices.SortStableFunc(line, func(a, b int) int { return events[a].own() - events[b].own() })
		for k, i := range line {
			if own := events[i].own(); own != k+1 {
				if k == 0 {
					return nil, fmt.Errorf("logical clock values for each host must start at 1; the clock value for the first event for host %q is %d", h, own)
				}
				return nil, fmt.Errorf("clock values for a host must increase monotonically by 1; the clock for host %q goes from %d to %d (line %d)", h, k, own, events[i].line)
			}
		}
	}
	// An arrow comes into an event from each host whose entry grew since the host's
	// previous event, from that host's event of that count, unless another such
	// event already knew of it (initParentChild).
	for _, h := range g.hosts {
		known := map[string]int{}
		for _, i := range g.lines[h] {
			e := events[i]
			known[h] = e.own()
			var candidates []int
			for other, v := range e.clock {
				if k, ok := known[other]; ok && k >= v {
					continue
				}
				known[other] = v
				line, ok := g.lines[other]
				if !ok {
					return nil, fmt.Errorf("line %d: the vector clock contains an entry for an unrecognized host %q", e.line, other)
				}
				if v < 1 || v > len(line) {
					return nil, fmt.Errorf("line %d: the vector clock contains an invalid clock value %d for host %q", e.line, v, other)
				}
				candidates = append(candidates, line[v-1])
			}
			for _, c := range candidates {
				implied := false
				for _, d := range candidates {
					if d != c && events[d].clock[events[c].host] == events[c].own() {
						implied = true
					}
				}
				if !implied {
					g.arrows[[2]int{c, i}] = true
				}
			}
		}
	}
	return g, nil
}
