package shiviz_test

// ShiViz's parsing expressions are JavaScript regular expressions, made by its
// NamedRegExp (js/util/regexp.js) with the flags "gm". This file rebuilds them in Go:
// NamedRegExp's own rewriting of the expression (named groups, unnamed groups made
// non-capturing), then JavaScript's syntax and meaning of each piece in Go's (RE2), so
// that the reader finds the matches, and captures the text, that ShiViz would.
//
// What RE2 cannot say is refused with an error rather than read differently:
// lookarounds and back-references, and a "^" or "$" on a text holding a line
// terminator other than \n (JavaScript's multi-line "^" also matches after \r, U+2028
// and U+2029, Go's only after \n). Matching itself agrees: for an expression without
// those, RE2's leftmost-first matches and submatches are those of a backtracking
// engine (JavaScript's); Go works on code points and JavaScript on UTF-16 units, which
// only tells apart an expression that counts single characters outside the BMP.

import (
	"fmt"
	"maps"
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf16"
)

// jsSpace is JavaScript's white space and line terminators (\s; what trim removes):
// tab, VT, FF, CR, LF, every Unicode space separator (Zs), U+2028 (Zl), U+2029 (Zp)
// and the BOM. As a bracket expression's inside, in Go's syntax.
const jsSpace = `\t\n\v\f\r\p{Z}\x{feff}`

// jsDot is JavaScript's "." without the s flag: anything but a line terminator.
const jsDot = `[^\n\r\x{2028}\x{2029}]`

func isJSSpace(r rune) bool {
	return strings.ContainsRune("\t\n\v\f\r\u2028\u2029\ufeff", r) || unicode.Is(unicode.Zs, r)
}

// jsTrim is String.prototype.trim.
func jsTrim(s string) string { return strings.TrimFunc(s, isJSSpace) }

// namedRegExp is ShiViz's NamedRegExp: no is the expression with its named groups made
// non-capturing (whose matches ShiViz reports), reg the one whose groups, in order, are
// the names (whose captures fill the named fields).
type namedRegExp struct {
	no, reg   *regexp.Regexp
	names     []string
	multiline bool
	anchored  bool // "^" or "$" outside a bracket expression
}

var (
	namedGroup      = regexp.MustCompile(`\(\?<\w+?>`)
	namedGroupFirst = regexp.MustCompile(`\(\?<(\w+?)>` + jsDot + `+\)`)
)

// newNamedRegExp follows NamedRegExp's constructor, with flags "m" as ShiViz passes
// them (it always adds "g": the matches are found one after another).
func newNamedRegExp(pattern, flags string) (*namedRegExp, error) {
	n := &namedRegExp{multiline: strings.Contains(flags, "m")}
	// this.no: every "(?<name>" becomes "(?:".
	no := namedGroup.ReplaceAllLiteralString(pattern, "(?:")
	// this.reg: every "(" not followed by "?=", "?!", "?<" or "?:" becomes "(?:" (so
	// unnamed groups capture nothing) ...
	var b strings.Builder
	for i := 0; i < len(pattern); i++ {
		b.WriteByte(pattern[i])
		if pattern[i] == '(' && !(i+2 < len(pattern) && pattern[i+1] == '?' && strings.IndexByte("=!<:", pattern[i+2]) >= 0) {
			b.WriteString("?:")
		}
	}
	reg := b.String()
	// ... then, while a "(?<name>...)" is left, its name is the next one and the first
	// "(?<name>" becomes a plain capturing "(".
	for {
		m := namedGroupFirst.FindStringSubmatch(reg)
		if m == nil {
			break
		}
		for _, name := range n.names {
			if name == m[1] {
				return nil, fmt.Errorf("the regular expression you entered was invalid: there are multiple capture groups named %s", name)
			}
		}
		n.names = append(n.names, m[1])
		loc := namedGroup.FindStringIndex(reg)
		reg = reg[:loc[0]] + "(" + reg[loc[1]:]
	}
	var err error
	if n.no, err = n.compile(no); err == nil {
		n.reg, err = n.compile(reg)
	}
	if err != nil {
		return nil, fmt.Errorf("the following regular expression entered was invalid: %s: %v", pattern, err)
	}
	return n, nil
}

// compile translates a JavaScript expression (no u flag, with the web's extensions of
// Annex B: a "{" or "}" that is no quantifier, a lone "]", are literal) into Go's.
func (n *namedRegExp) compile(js string) (*regexp.Regexp, error) {
	var b strings.Builder
	if n.multiline {
		b.WriteString("(?m)")
	}
	src := []rune(js)
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch c {
		case '\\':
			if i+1 >= len(src) {
				return nil, fmt.Errorf("\\ at end of pattern")
			}
			i++
			s, err := escape(src, &i, false)
			if err != nil {
				return nil, err
			}
			b.WriteString(s)
		case '.':
			b.WriteString(jsDot)
		case '^', '$':
			n.anchored = true
			b.WriteRune(c)
		case '[':
			s, err := class(src, &i)
			if err != nil {
				return nil, err
			}
			b.WriteString(s)
		case '(':
			rest := string(src[i+1:])
			switch {
			case strings.HasPrefix(rest, "?:"):
				b.WriteString("(?:")
				i += 2
			case strings.HasPrefix(rest, "?"):
				// Lookarounds, and a named group NamedRegExp left as it is.
				return nil, fmt.Errorf("%q is beyond this reader", string(src[i:min(i+4, len(src))]))
			default:
				b.WriteByte('(')
			}
		case '{':
			if q := quantifier.FindString(string(src[i:])); q != "" {
				b.WriteString(q)
				i += len(q) - 1
			} else {
				b.WriteString(`\{`)
			}
		case '}', ']':
			b.WriteString(`\` + string(c))
		case ')', '|', '*', '+', '?':
			b.WriteRune(c)
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return regexp.Compile(b.String())
}

var quantifier = regexp.MustCompile(`^\{[0-9]+(,[0-9]*)?\}`)

// escape translates the escape after a backslash at src[*i], leaving *i on its last
// character; inClass: inside a bracket expression, where \b is a backspace.
func escape(src []rune, i *int, inClass bool) (string, error) {
	c := src[*i]
	hex := func(n int) (string, bool) {
		if *i+n >= len(src) {
			return "", false
		}
		h := string(src[*i+1 : *i+1+n])
		for _, d := range h {
			if !strings.ContainsRune("0123456789abcdefABCDEF", d) {
				return "", false
			}
		}
		*i += n
		return `\x{` + h + `}`, true
	}
	switch {
	case c == 's':
		if inClass {
			return jsSpace, nil
		}
		return "[" + jsSpace + "]", nil
	case c == 'S':
		if inClass {
			return "", fmt.Errorf(`\S inside [...] is beyond this reader`)
		}
		return "[^" + jsSpace + "]", nil
	case c == 'b' && inClass:
		return `\x08`, nil
	case strings.ContainsRune("dDwWbBtnrvf", c):
		return `\` + string(c), nil
	case c == '0' && (*i+1 >= len(src) || src[*i+1] < '0' || src[*i+1] > '9'):
		return `\x00`, nil
	case c >= '0' && c <= '9':
		return "", fmt.Errorf(`\%c (a back-reference or an octal escape) is beyond this reader`, c)
	case c == 'x':
		if s, ok := hex(2); ok {
			return s, nil
		}
	case c == 'u':
		if s, ok := hex(4); ok {
			return s, nil
		}
	case c == 'c':
		if *i+1 < len(src) && src[*i+1]|0x20 >= 'a' && src[*i+1]|0x20 <= 'z' {
			*i++
			return fmt.Sprintf(`\x{%x}`, src[*i]%32), nil
		}
		return `\\c`, nil // no control letter: the backslash itself, then c
	}
	// An identity escape: the character itself.
	return regexp.QuoteMeta(string(c)), nil
}

// class translates the bracket expression that starts at src[*i], leaving *i on its "]".
// In JavaScript "[]" matches nothing and "[^]" anything, "[" inside is literal, and a
// "-" next to a class escape (\d-z) is literal too.
func class(src []rune, i *int) (string, error) {
	var items []string // one per character or class escape, "-" for a range's dash
	k := *i + 1
	negated := k < len(src) && src[k] == '^'
	if negated {
		k++
	}
	isSet := map[int]bool{} // items that are class escapes
	for ; k < len(src) && src[k] != ']'; k++ {
		switch c := src[k]; c {
		case '\\':
			if k+1 >= len(src) {
				return "", fmt.Errorf("\\ at end of pattern")
			}
			k++
			s, err := escape(src, &k, true)
			if err != nil {
				return "", err
			}
			isSet[len(items)] = strings.Contains("dDwWsS", string(src[k])) && src[k-1] == '\\'
			items = append(items, s)
		case '-':
			items = append(items, "-")
		default:
			items = append(items, regexp.QuoteMeta(string(c)))
		}
	}
	if k >= len(src) {
		return "", fmt.Errorf("missing terminating ] for character class")
	}
	*i = k
	switch {
	case len(items) == 0 && negated:
		return `[\x00-\x{10FFFF}]`, nil
	case len(items) == 0:
		return `[^\x00-\x{10FFFF}]`, nil
	}
	var b strings.Builder
	b.WriteByte('[')
	if negated {
		b.WriteByte('^')
	}
	for j, it := range items {
		switch {
		case it != "-":
			b.WriteString(it) // QuoteMeta has escaped "[" and "^"
		case j > 0 && j+1 < len(items) && items[j-1] != "-" && !isSet[j-1] && !isSet[j+1]:
			b.WriteByte('-') // a range between two characters, the same in Go
		default:
			b.WriteString(`\-`)
		}
	}
	b.WriteByte(']')
	return b.String(), nil
}

// match is one match as NamedRegExp.exec returns it: where the whole matched (from
// no) and each name's capture (from reg; none where reg found no match).
type match struct {
	index int // match.index: where it starts, in UTF-16 units as JavaScript counts
	at    int // the same in bytes
	named map[string]string
}

// execAll runs ShiViz's loop "while (match = regexp.exec(text))": with the g flag,
// each exec searches on from where the last match ended, no and reg each keeping its
// own position. A match of nothing leaves the position where it is, so ShiViz's loop
// never ends: the reader says so instead.
func (n *namedRegExp) execAll(text string) ([]match, error) {
	if n.anchored && n.multiline && strings.ContainsAny(text, "\r\u2028\u2029") {
		return nil, fmt.Errorf("the text has a line terminator other than \\n, where JavaScript's ^ and $ match and Go's do not")
	}
	nos := n.no.FindAllStringIndex(text, -1)
	regs := n.reg.FindAllStringSubmatchIndex(text, -1)
	var out []match
	for k, m := range nos {
		if m[0] == m[1] {
			return nil, fmt.Errorf("the expression matches nothing at byte %d: ShiViz's exec loop would never end", m[0])
		}
		mt := match{index: len(utf16.Encode([]rune(text[:m[0]]))), at: m[0], named: map[string]string{}}
		if k < len(regs) {
			for g, name := range n.names {
				if s := regs[k][2*(g+1)]; s >= 0 {
					mt.named[name] = text[s:regs[k][2*(g+1)+1]]
				}
			}
		}
		out = append(out, mt)
	}
	return out, nil
}

// The expressions as ShiViz reads them, on texts where JavaScript and a plain Go
// translation part ways. Each want is what ShiViz's NamedRegExp (js/util/regexp.js,
// flags "m") returned for it in Node: where each match starts and its named captures.
func TestNamedRegExpMatchesAsJavaScript(t *testing.T) {
	type m = map[string]string
	for _, c := range []struct {
		name, pattern, text string
		starts              []int
		want                []m
		err                 string
	}{
		{"a no-break space is white space, so \\S stops at it", defaultParser, "x\nP\u00a00 {\"P\":1}", nil, nil, ""},
		{"\".\" stops at U+2028, a line terminator", defaultParser, "a\u2028b\nP0 {}", []int{2}, []m{{"event": "b", "host": "P0", "clock": "{}"}}, ""},
		{"\".\" takes a tab; matches follow one another", defaultParser, "a\tb\nP0 {\"P0\":1}\nc\nP1 {\"P1\":1}", []int{0, 16},
			[]m{{"event": "a\tb", "host": "P0", "clock": `{"P0":1}`}, {"event": "c", "host": "P1", "clock": `{"P1":1}`}}, ""},
		{"an unnamed group captures nothing", `(a|b)(?<event>x)\n(?<host>\S*) (?<clock>{.*})`, "bx\nP0 {}", []int{0}, []m{{"event": "x", "host": "P0", "clock": "{}"}}, ""},
		{"[^] is any character", `(?<event>[^]*?)\n(?<host>\S*) (?<clock>{.*})`, "a\nb\nP0 {}", []int{0}, []m{{"event": "a\nb", "host": "P0", "clock": "{}"}}, ""},
		{"[] is no character", `(?<event>[]|x)\n(?<host>\S*) (?<clock>{.*})`, "x\nP0 {}", []int{0}, []m{{"event": "x", "host": "P0", "clock": "{}"}}, ""},
		{"a { that is no quantifier, a - after \\d", `(?<event>a{2}{)\n(?<host>[\d-z]+) (?<clock>.*)`, "aa{\n1-z {}", []int{0}, []m{{"event": "aa{", "host": "1-z", "clock": "{}"}}, ""},
		{"the uploaded ^...$ holds to whole lines", "^" + defaultParser + "$", "junk t=0\nP0 {}\nt=1\nP0 {} junk\nt=2\nP0 {}", []int{0, 30},
			[]m{{"event": "junk t=0", "host": "P0", "clock": "{}"}, {"event": "t=2", "host": "P0", "clock": "{}"}}, ""},
		{"escapes", `(?<host>\w+)\cJ(?<event>\x41\u0042) (?<clock>\{.*\})`, "P0\nAB {}", []int{0}, []m{{"host": "P0", "event": "AB", "clock": "{}"}}, ""},
		{"a name twice", `(?<event>.*)(?<event>.*)`, "x", nil, nil, "multiple capture groups named event"},
		{"a lookbehind, which ShiViz reads and this reader does not", `(?<=x)(?<event>.*)\n(?<host>\S*) (?<clock>{.*})`, "x\nP0 {}", nil, nil, "beyond this reader"},
	} {
		t.Run(c.name, func(t *testing.T) {
			re, err := newNamedRegExp(c.pattern, "m")
			var got []match
			if err == nil {
				got, err = re.execAll(c.text)
			}
			if c.err != "" || err != nil {
				if err == nil || c.err == "" || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v; want one saying %q", err, c.err)
				}
				return
			}
			if len(got) != len(c.want) {
				t.Fatalf("%d matches %+v; want %d", len(got), got, len(c.want))
			}
			for k := range got {
				if got[k].index != c.starts[k] || !maps.Equal(got[k].named, c.want[k]) {
					t.Errorf("match %d: at %d %q; want at %d %q", k, got[k].index, got[k].named, c.starts[k], c.want[k])
				}
			}
		})
	}
}
