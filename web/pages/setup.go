package pages

import (
	"strconv"
	"strings"

	"github.com/teach-dist/playground/runtime/sim"
)

// paramControl is one control of Run setup, built from the algorithm's declaration of
// a params field (sim.Param), so that a new param needs no change to the page. The
// browser reads every control the same way (static/setup.js): a value equal to the
// declared default, or left empty, is left out of the scenario's params.
type paramControl struct {
	Name        string
	Kind        string // sim.ParamKind
	Input       string // the form field: p.<name>, as in a /play query
	Doc         string
	Default     string // the declared default, as JSON ("" when derived)
	Min, Max    string // bounds of an int ("" none)
	Choices     []string
	Placeholder string // what leaving the control empty gives
	DocID       string
	ErrID       string
}

// Checked says whether a bool control starts ticked (its default is true).
func (c paramControl) Checked() bool { return c.Default == "true" }

// Selected says whether a choice is the default one.
func (c paramControl) Selected(choice string) bool { return c.Default == strconv.Quote(choice) }

func paramControls(params []sim.Param) []paramControl {
	out := make([]paramControl, 0, len(params))
	for _, p := range params {
		c := paramControl{Name: p.Name, Kind: string(p.Kind), Input: "p." + p.Name, Doc: p.Doc,
			Default: p.Default, Choices: p.Choices, DocID: "param-doc-" + p.Name, ErrID: "param-error-" + p.Name}
		switch p.Kind {
		case sim.ParamInt:
			c.Min = strconv.Itoa(p.Min)
			if p.Max > 0 {
				c.Max = strconv.Itoa(p.Max)
			}
			c.Placeholder = "default"
			if p.Default != "" {
				c.Placeholder = "default " + p.Default
			}
			if p.Zero != "" {
				c.Placeholder += " · 0: " + p.Zero
			}
		case sim.ParamNode:
			c.Placeholder = "default: the " + nodeDefault(p.Default)
		case sim.ParamObject:
			c.Placeholder = "JSON; empty: the default"
			if len(p.Fields) > 0 {
				names := make([]string, len(p.Fields))
				for i, f := range p.Fields {
					names[i] = `"` + f.Name + `": ` + kindExample(f.Kind)
				}
				c.Placeholder = "{" + strings.Join(names, ", ") + "}; empty: the default"
			}
		}
		out = append(out, c)
	}
	return out
}

// nodeDefault says which id a node param's default is: sim.FirstID ("first") is the
// first id, and likewise the lowest and the highest.
func nodeDefault(d string) string {
	if d == sim.FirstID || d == sim.LowestID || d == sim.HighestID {
		return d + " id"
	}
	return d
}

// kindExample is a sample value of a kind, for the placeholder of an object's fields.
func kindExample(k sim.ParamKind) string {
	switch k {
	case sim.ParamBool:
		return "true"
	case sim.ParamChoice:
		return `"…"`
	case sim.ParamObject:
		return "{…}"
	}
	return "n"
}
