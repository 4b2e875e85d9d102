package sim

// This file reads a Spec's text: what a page shows of an algorithm, kept in a file
// beside its code (its spec.txt, embedded) so that a teacher reads the rules as they
// are written, and one parser serves every algorithm. The Go side adds what must be
// code: params, the node, and cost values that need the params.
//
// The format, one item a line; a line whose first non-blank character is '#' is a
// comment, blank lines are ignored:
//
//	slug: lamport
//	title: Lamport's distributed mutual exclusion
//	family: mutex                        (or election)
//	summary: one line, what it teaches
//	defaults: nodes=5 delay=1..3 fifo=false cs=2 until=500   (firstid=1 optional)
//
//	rule LA-1: Asking for the CS         (the label, then the group it sits under)
//	notes: 000                           (the notes that give this label, if any)
//	| clock := clock + 1; T := clock     (a line of pseudocode, as it is after "| ")
//	says: stamps a request ...           (the narration's sentence)
//	differs: ...                         (where it departs from the notes' rule)
//	why held: defers {from}'s request    (one sentence per case of Context.RuleWhy)
//
//	var clock: Lamport clock
//	message REQUEST REQ ts=ts: asks for the CS   (name, label, payload slots, doc)
//
//	cost messages per CS entry
//	note 002 004 = 3*(n-1): 3(N-1)       (the notes, the value, the formula as written)
//	formula = 3*(n-1): 3(N-1): N-1 REQUEST, ...   (the project's own figure)
//	initiators: 1
//
// A value ("= ...") is an expression in n (the number of processes): numbers, + - * /
// and parentheses, sqrt(x). "= LOW to HIGH" gives a range (Cost.Low, Cost.High), and
// an expression in k as well as n a figure for k initiators (Cost.ValueK). A value that
// needs more (the params) is set in Go on the cost that Spec.Cost finds by its name.

import (
	"fmt"
	"strconv"
	"strings"
)

// BuildSpec returns the Spec that text describes, completed with the fields code sets (the
// node, params, stage, ...; a field the text gives is taken from the text). It panics
// on an error: the text is embedded in the binary, and every algorithm's tests build
// its Spec, so a malformed file never gets past them.
func BuildSpec(text string, code Spec) *Spec {
	t, err := ParseSpec(text)
	if err != nil {
		panic(fmt.Sprintf("sim: a spec's text: %v", err))
	}
	s := code
	s.Slug, s.Title, s.Family, s.Summary = t.Slug, t.Title, t.Family, t.Summary
	s.Rules, s.Vars, s.Messages, s.Costs, s.Defaults = t.Rules, t.Vars, t.Messages, t.Costs, t.Defaults
	return &s
}

// Cost returns the cost of s named name, for the Go side to add what the text cannot
// say; it panics when there is none, a mistake every test of the algorithm meets.
func (s *Spec) Cost(name string) *Cost {
	for i := range s.Costs {
		if s.Costs[i].Name == name {
			return &s.Costs[i]
		}
	}
	panic(fmt.Sprintf("sim: %s has no cost %q", s.Slug, name))
}

// specParser holds what a line may add to: the rule or cost it belongs to.
type specParser struct {
	spec *Spec
	rule *Rule // the last rule, for its notes, lines, says, differs and why
	cost *Cost // the last cost, for its notes, formula and initiators
}

// ParseSpec reads a Spec's text; an error names the line it is about.
func ParseSpec(text string) (*Spec, error) {
	p := &specParser{spec: &Spec{}}
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if err := p.line(line); err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
	}
	return p.spec, nil
}

// line reads one line that is not blank or a comment.
func (p *specParser) line(line string) error {
	if code, ok := strings.CutPrefix(line, "|"); ok {
		if p.rule == nil {
			return fmt.Errorf("a line of pseudocode before any rule")
		}
		p.rule.Lines = append(p.rule.Lines, strings.TrimPrefix(code, " "))
		return nil
	}
	word, rest, _ := strings.Cut(line, " ")
	if key, ok := strings.CutSuffix(word, ":"); ok {
		return p.field(key, strings.TrimSpace(rest))
	}
	head, body, ok := strings.Cut(rest, ": ")
	switch word {
	case "rule":
		return p.addRule(head, body, ok)
	case "why":
		if p.rule == nil || !ok || head == "" {
			return fmt.Errorf("want \"why CASE: sentence\" after a rule")
		}
		if p.rule.Why == nil {
			p.rule.Why = map[string]string{}
		}
		p.rule.Why[head] = body
		return nil
	case "var":
		if !ok || head == "" || strings.Contains(head, " ") {
			return fmt.Errorf("want \"var NAME: doc\"")
		}
		p.spec.Vars = append(p.spec.Vars, Var{Name: head, Doc: body})
		p.rule = nil
		return nil
	case "message":
		return p.addMessage(head, body, ok)
	case "cost":
		if rest == "" {
			return fmt.Errorf("a cost needs a name")
		}
		p.spec.Costs = append(p.spec.Costs, Cost{Name: rest})
		p.cost, p.rule = &p.spec.Costs[len(p.spec.Costs)-1], nil
		return nil
	case "note":
		return p.addNote(head, body, ok)
	case "formula":
		return p.addFormula(line)
	}
	return fmt.Errorf("unknown line %q", line)
}

// field reads "key: value" of the algorithm or of its last rule or cost.
func (p *specParser) field(key, value string) error {
	target := map[string]*string{
		"slug": &p.spec.Slug, "title": &p.spec.Title, "summary": &p.spec.Summary,
		"family": (*string)(&p.spec.Family),
	}
	if p.rule != nil {
		target["notes"], target["says"], target["differs"] = &p.rule.Notes, &p.rule.Says, &p.rule.Differs
	}
	if key == "defaults" {
		return p.defaults(value)
	}
	if key == "formula" {
		return p.addFormula("formula: " + value)
	}
	if key == "initiators" {
		if p.cost == nil {
			return fmt.Errorf("initiators outside a cost")
		}
		n, err := strconv.Atoi(value)
		if err != nil || n < 0 {
			return fmt.Errorf("initiators: want a whole number, got %q", value)
		}
		p.cost.Initiators = n
		return nil
	}
	dst, ok := target[key]
	if !ok {
		return fmt.Errorf("unknown field %q here", key)
	}
	if *dst != "" {
		return fmt.Errorf("%s given twice", key)
	}
	if key == "family" && value != string(Mutex) && value != string(Election) {
		return fmt.Errorf("family: want %s or %s, got %q", Mutex, Election, value)
	}
	*dst = value
	return nil
}

// defaults reads "nodes=5 delay=1..3 fifo=false cs=2 until=500 [firstid=1]".
func (p *specParser) defaults(value string) error {
	d := &p.spec.Defaults
	ints := map[string]*int{"nodes": &d.Nodes, "cs": &d.CS, "until": &d.Until, "firstid": &d.FirstID}
	seen := map[string]bool{}
	for _, w := range strings.Fields(value) {
		key, v, _ := strings.Cut(w, "=")
		if seen[key] {
			return fmt.Errorf("defaults: %s given twice", key)
		}
		seen[key] = true
		var err error
		switch key {
		case "delay":
			lo, hi, ok := strings.Cut(v, "..")
			d.Delay[0], err = strconv.Atoi(lo)
			if err == nil {
				d.Delay[1], err = strconv.Atoi(hi)
			}
			if !ok {
				err = fmt.Errorf("want MIN..MAX")
			}
		case "fifo":
			d.FIFO, err = strconv.ParseBool(v)
		default:
			dst, ok := ints[key]
			if !ok {
				return fmt.Errorf("defaults: unknown field %q", key)
			}
			*dst, err = strconv.Atoi(v)
		}
		if err != nil {
			return fmt.Errorf("defaults: %s=%s: %v", key, v, err)
		}
	}
	for _, key := range []string{"nodes", "delay", "fifo", "cs", "until"} {
		if !seen[key] {
			return fmt.Errorf("defaults: %s missing", key)
		}
	}
	return nil
}

// addRule reads "rule LABEL: Group".
func (p *specParser) addRule(label, group string, ok bool) error {
	if !ok || label == "" || strings.Contains(label, " ") || group == "" {
		return fmt.Errorf("want \"rule LABEL: group\"")
	}
	p.spec.Rules = append(p.spec.Rules, Rule{Label: label, Group: group})
	p.rule = &p.spec.Rules[len(p.spec.Rules)-1]
	p.cost = nil
	return nil
}

// messageSlots are the message payload slots a message line may name, by their key there.
var messageSlots = map[string]func(m *MessageType) *string{
	"ts":    func(m *MessageType) *string { return &m.TS },
	"arg":   func(m *MessageType) *string { return &m.Arg },
	"vec":   func(m *MessageType) *string { return &m.Vec },
	"queue": func(m *MessageType) *string { return &m.Queue },
}

// addMessage reads "message NAME LABEL slot=key ...: doc".
func (p *specParser) addMessage(head, doc string, ok bool) error {
	words := strings.Fields(head)
	if !ok || len(words) < 2 {
		return fmt.Errorf("want \"message NAME LABEL [slot=key ...]: doc\"")
	}
	m := MessageType{Name: words[0], Label: words[1], Doc: doc}
	for _, w := range words[2:] {
		slot, key, _ := strings.Cut(w, "=")
		at, known := messageSlots[slot]
		if !known || key == "" {
			return fmt.Errorf("message %s: want ts=, arg=, vec= or queue= with a key, got %q", m.Name, w)
		}
		*at(&m) = key
	}
	p.spec.Messages = append(p.spec.Messages, m)
	p.rule = nil
	return nil
}

// addNote reads "note NOTES [= VALUE]: formula as the notes write it".
func (p *specParser) addNote(head, formula string, ok bool) error {
	if p.cost == nil || !ok {
		return fmt.Errorf("want \"note NOTES [= value]: formula\" after a cost")
	}
	notes, value, _ := strings.Cut(head, "=")
	in := strings.Fields(notes)
	if len(in) == 0 {
		return fmt.Errorf("a note names the notes that give it")
	}
	f := NoteFormula{In: in, Formula: formula}
	if strings.TrimSpace(value) != "" {
		v, err := parseCostValue(value)
		if err != nil {
			return err
		}
		if v.low != nil || v.k != nil {
			return fmt.Errorf("a note's value is one number of n")
		}
		f.Value = v.n
	}
	p.cost.Notes = append(p.cost.Notes, f)
	return nil
}

// addFormula reads "formula [= VALUE]: the project's figure".
func (p *specParser) addFormula(line string) error {
	head, formula, ok := strings.Cut(line, ": ")
	if p.cost == nil || !ok || p.cost.Formula != "" {
		return fmt.Errorf("want one \"formula [= value]: figure\" after a cost")
	}
	p.cost.Formula = formula
	_, value, _ := strings.Cut(head, "=")
	if strings.TrimSpace(value) == "" {
		return nil
	}
	v, err := parseCostValue(value)
	if err != nil {
		return err
	}
	p.cost.Value, p.cost.Low, p.cost.High, p.cost.ValueK = v.n, v.low, v.high, v.k
	return nil
}
