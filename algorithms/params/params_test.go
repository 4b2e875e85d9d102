package params

import (
	"errors"
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
)

// Shared stands for settings several algorithms share: inlined untagged, with a rule
// between its fields.
type Shared struct {
	Ack     bool `param:"ack"`
	Timeout int  `param:"timeout"`
}

func (s Shared) Validate(field string) error {
	if s.Timeout != 0 && !s.Ack {
		return errors.New(field + `.timeout: only used with "ack": true`)
	}
	return nil
}

type nested struct {
	Period int `param:"period"`
}

type settings struct {
	Holder  int    `param:"holder"`
	Poll    int    `param:"poll"`
	Regen   int    `param:"regen"`
	Variant string `param:"variant"`
	Nested  nested `param:"nested"`
	Shape   []int  `param:"shape"`
	Shared
}

var holder = sim.Param{Name: "holder", Kind: sim.ParamNode, Default: sim.HighestID}

var fields = []sim.Param{
	holder,
	{Name: "poll", Kind: sim.ParamInt, Min: 1},
	{Name: "regen", Kind: sim.ParamInt, Min: 0, Zero: "off", Max: 50},
	{Name: "variant", Kind: sim.ParamChoice, Choices: []string{"list", "ids"}},
	{Name: "nested", Kind: sim.ParamObject, Fields: []sim.Param{{Name: "period", Kind: sim.ParamInt, Min: 1}}},
	{Name: "shape", Kind: sim.ParamObject},
	{Name: "ack", Kind: sim.ParamBool},
	{Name: "timeout", Kind: sim.ParamInt, Min: 1},
}

// shape is an Object hook: a list of its own, checked by the algorithm.
var shape = Object[settings]{Name: "shape", Decode: func(raw []byte, ids []int, p *settings) error {
	if !strings.HasPrefix(string(raw), "[") {
		return errors.New("params.shape: want a list")
	}
	p.Shape = []int{len(raw)}
	return nil
}}

func TestParse(t *testing.T) {
	ids := []int{3, 9, 1}
	def := settings{Holder: 9, Variant: "list"}
	for _, tc := range []struct {
		name    string
		in      string
		want    settings
		wantErr string // the whole message; "" means success
	}{
		{"nil keeps the defaults", "", def, ""},
		{"null keeps the defaults", " null ", def, ""},
		{"empty object", "{}", def, ""},
		{"outer unicode space trimmed", "\u00a0{}\f", def, ""},
		{"every kind", `{"holder": 1, "poll": 4, "regen": 0, "variant": "ids", "nested": {"period": 2}, "ack": true, "timeout": 7}`,
			settings{Holder: 1, Poll: 4, Variant: "ids", Nested: nested{Period: 2}, Shared: Shared{Ack: true, Timeout: 7}}, ""},
		{"a null field is left out", `{"holder": null, "poll": 2}`, settings{Holder: 9, Poll: 2, Variant: "list"}, ""},
		{"object hook", `{"shape": [1, 2]}`, settings{Holder: 9, Variant: "list", Shape: []int{6}}, ""},
		{"object hook error", `{"shape": 5}`, def, "params.shape: want a list"},
		{"not a node", `{"holder": 2}`, def, "params.holder: 2 is not a node id (ids: 3 9 1)"},
		{"node of the wrong type", `{"holder": "1"}`, def, "params.holder: got string, want a node id (an integer)"},
		{"int keeps the value", `{"poll": 1.5}`, def, "params.poll: got number 1.5, want a positive integer"},
		{"int below its range", `{"poll": 0}`, def, "params.poll: must be a positive integer (at most 1000000000), got 0"},
		{"int above its range", `{"regen": 51}`, def, "params.regen: must be 0 (off) or a positive integer (at most 50), got 51"},
		{"int over MaxTime", `{"poll": 2000000000}`, def, "params.poll: must be a positive integer (at most 1000000000), got 2000000000"},
		{"bool", `{"ack": "on"}`, def, "params.ack: got string, want true or false"},
		{"choice of the wrong type", `{"variant": 2}`, def, `params.variant: got number, want "list" or "ids"`},
		{"choice not allowed", `{"variant": "bully"}`, def, `params.variant: "bully" is unknown (allowed: "list", "ids")`},
		{"nested field by path", `{"nested": {"period": "x"}}`, def, "params.nested.period: got string, want a positive integer"},
		{"nested not an object", `{"nested": 3}`, def, "params.nested: got number, want an object with period"},
		{"nested unknown field", `{"nested": {"p": 1}}`, def, "params.nested.p: unknown field (allowed: period)"},
		{"rule between inlined fields", `{"timeout": 3}`, def, `params.timeout: only used with "ack": true`},
		{"unknown field", `{"hop": 1}`, def, "params.hop: unknown field (allowed: holder, poll, regen, variant, nested, shape, ack, timeout)"},
		{"field given twice", `{"poll": 1, "poll": 2}`, def, "params.poll: given twice"},
		{"not an object", `[1]`, def, "params: got array, want an object with holder, poll, regen, variant, nested, shape, ack, timeout"},
		{"second object", `{"holder": 1} {}`, def, "params: must be a single JSON object"},
		{"trailing number", `{} 2`, def, "params: must be a single JSON object"},
		{"trailing comma", `{},`, def, "params: must be a single JSON object"},
		{"syntax error", `{"holder":`, def, "params: unexpected EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse([]byte(tc.in), ids, fields, def, shape)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("Parse(%q) error = %v, want %q", tc.in, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.in, err)
			}
			if got.Holder != tc.want.Holder || got.Poll != tc.want.Poll || got.Regen != tc.want.Regen ||
				got.Variant != tc.want.Variant || got.Nested != tc.want.Nested || got.Shared != tc.want.Shared ||
				len(got.Shape) != len(tc.want.Shape) {
				t.Errorf("Parse(%q) = %+v, want %+v", tc.in, got, tc.want)
			}
		})
	}
}

func TestParseNeedsIDsForANodeField(t *testing.T) {
	_, err := Parse(nil, nil, fields, settings{}, shape)
	if err == nil || err.Error() != "params.holder: there are no node ids to choose from" {
		t.Errorf("Parse without ids = %v", err)
	}
}

func TestParserReturnsNilOnError(t *testing.T) {
	parse := Parser(fields, func(ids []int) settings { return settings{Holder: ids[0]} }, shape)
	if p, err := parse([]byte(`{"poll": 0}`), []int{4}); p != nil || err == nil {
		t.Errorf("parse(bad) = %v, %v; want nil and an error", p, err)
	}
	p, err := parse(nil, []int{4})
	if s, ok := p.(settings); err != nil || !ok || s.Holder != 4 {
		t.Errorf("parse(nil) = %#v, %v; want the defaults as a settings value", p, err)
	}
}

// Of is the nil guard every constructor needs, written once.
func TestOf(t *testing.T) {
	def := settings{Poll: 7}
	val := settings{Poll: 2}
	for _, tc := range []struct {
		name   string
		params any
		want   int
	}{
		{"value", val, 2},
		{"pointer", &val, 2},
		{"nil pointer", (*settings)(nil), 7},
		{"nothing", nil, 7},
		{"another type", 42, 7},
	} {
		if got := Of(&sim.Setup{Params: tc.params}, def); got.Poll != tc.want {
			t.Errorf("%s: Of = %+v, want poll %d", tc.name, got, tc.want)
		}
	}
}

func TestDefaultIDAndHolder(t *testing.T) {
	ids := []int{5, 2, 8}
	for _, tc := range []struct {
		def        string
		wantID     int
		stranger   int // Holder's index for an id not in ids
		knownIndex int // Holder's index for id 8
	}{
		{sim.FirstID, 5, 0, 2},
		{sim.LowestID, 2, 1, 2},
		{sim.HighestID, 8, 2, 2},
	} {
		f := sim.Param{Name: "holder", Kind: sim.ParamNode, Default: tc.def}
		if got := DefaultID(f, ids); got != tc.wantID {
			t.Errorf("DefaultID(%s) = %d, want %d", tc.def, got, tc.wantID)
		}
		if got := Holder(ids, 99, f); got != tc.stranger {
			t.Errorf("Holder(stranger, %s) = %d, want %d", tc.def, got, tc.stranger)
		}
		if got := Holder(ids, 8, f); got != tc.knownIndex {
			t.Errorf("Holder(8, %s) = %d, want %d", tc.def, got, tc.knownIndex)
		}
	}
	if got := DefaultID(holder, nil); got != -1 {
		t.Errorf("DefaultID without ids = %d, want -1", got)
	}
}

func TestNodeID(t *testing.T) {
	ids := []int{0, 1, 2, 3, 4}
	for _, tc := range []struct {
		field   string
		id      int
		ids     []int
		wantErr string // "" means the id is accepted
	}{
		{"coordinator", 3, ids, ""},
		{"coordinator", 0, ids, ""},
		{"coordinator", 9, ids, "params.coordinator: 9 is not a node id (ids: 0 1 2 3 4)"},
		{"holder", -1, []int{3, 9, 1}, "params.holder: -1 is not a node id (ids: 3 9 1)"},
		{"sets.10", 40, []int{10, 20, 30}, "params.sets.10: 40 is not a node id (ids: 10 20 30)"},
		{"holder", 0, nil, "params.holder: 0 is not a node id (ids: )"},
	} {
		err := NodeID(tc.field, tc.id, tc.ids)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("NodeID(%q, %d, %v) = %v, want nil", tc.field, tc.id, tc.ids, err)
		case tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr):
			t.Errorf("NodeID(%q, %d, %v) = %v, want %q", tc.field, tc.id, tc.ids, err, tc.wantErr)
		}
	}
}

func TestJoinInts(t *testing.T) {
	for _, tc := range []struct {
		in   []int
		want string
	}{
		{nil, ""},
		{[]int{7}, "7"},
		{[]int{0, 1, 2}, "0 1 2"},
		{[]int{3, -9, 10}, "3 -9 10"},
	} {
		if got := JoinInts(tc.in); got != tc.want {
			t.Errorf("JoinInts(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
