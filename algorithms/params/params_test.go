package params

import (
	"testing"
)

type inner struct {
	Period *int `json:"period"`
}

type Embedded struct {
	Ack *bool `json:"ack"`
}

type raw struct {
	Holder *int    `json:"holder"`
	Poll   *int    `json:"poll"`
	Nested *inner  `json:"nested"`
	Note   *string `json:"note"`
	Embedded
}

var fields = []Field{
	{Name: "holder", Want: "a node id (an integer)"},
	{Name: "poll", Must: "a positive integer"},
	{Name: "nested", Want: `{"period": T}`},
	{Name: "nested.period", Must: "a positive integer"},
	{Name: "note"}, // neither Want nor Must: the object-level message
	{Name: "ack", Want: "true or false"},
}

func TestDecode(t *testing.T) {
	one := 1
	for _, tc := range []struct {
		name    string
		spec    Spec
		in      string
		given   bool
		holder  *int
		wantErr string // the whole message; "" means success
	}{
		{"nil is not given", Spec{Fields: fields}, "", false, nil, ""},
		{"blank is not given", Spec{Fields: fields}, " \n\t", false, nil, ""},
		{"null is not given", Spec{Fields: fields}, " null ", false, nil, ""},
		{"empty object is given", Spec{Fields: fields}, "{}", true, nil, ""},
		{"field decoded", Spec{Fields: fields}, ` {"holder": 1} `, true, &one, ""},
		{"trailing newline", Spec{Fields: fields}, "{\"holder\": 1}\n", true, &one, ""},
		{"want form", Spec{Fields: fields}, `{"holder": "1"}`, true, nil, "params.holder: got string, want a node id (an integer)"},
		{"want form keeps the value", Spec{Fields: fields}, `{"holder": 1.5}`, true, nil, "params.holder: got number 1.5, want a node id (an integer)"},
		{"must form", Spec{Fields: fields}, `{"poll": true}`, true, nil, "params.poll: must be a positive integer, got bool"},
		{"nested object", Spec{Fields: fields}, `{"nested": 3}`, true, nil, `params.nested: got number, want {"period": T}`},
		{"nested field by path", Spec{Fields: fields}, `{"nested": {"period": "x"}}`, true, nil, "params.nested.period: must be a positive integer, got string"},
		{"embedded field by its json name", Spec{Fields: fields}, `{"ack": "on"}`, true, nil, "params.ack: got string, want true or false"},
		{"field without want falls back", Spec{Fields: fields}, `{"note": 1}`, true, nil, "params: got number, want an object with holder, poll, nested, nested.period, note, ack"},
		{"not an object", Spec{Fields: fields[:2]}, `[1]`, true, nil, "params: got array, want an object with holder, poll"},
		{"object text overridden", Spec{Fields: fields[:2], Object: "holder and poll"}, `"x"`, true, nil, "params: got string, want an object with holder and poll"},
		{"unknown field", Spec{Fields: fields[:2]}, `{"hop": 1}`, true, nil, "params.hop: unknown field (allowed: holder, poll)"},
		{"unknown field quoted", Spec{Fields: fields[:2], QuoteUnknown: true}, `{"hop": 1}`, true, nil, `params: unknown field "hop" (allowed: holder, poll)`},
		{"allowed text overridden", Spec{Fields: fields[:2], Allowed: "holder, poll with seconds"}, `{"hop": 1}`, true, nil, "params.hop: unknown field (allowed: holder, poll with seconds)"},
		{"second object", Spec{Fields: fields}, `{"holder": 1} {}`, true, nil, "params: must be a single JSON object"},
		{"trailing number", Spec{Fields: fields}, `{} 2`, true, nil, "params: must be a single JSON object"},
		{"trailing comma", Spec{Fields: fields}, `{},`, true, nil, "params: must be a single JSON object"},
		{"outer unicode space trimmed", Spec{Fields: fields}, "\u00a0{}\f", true, nil, ""},
		{"syntax error", Spec{Fields: fields}, `{"holder":`, true, nil, "params: unexpected EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r raw
			given, err := Decode([]byte(tc.in), &r, tc.spec)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("Decode(%q) error = %v, want %q", tc.in, err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatalf("Decode(%q): %v", tc.in, err)
			}
			if given != tc.given {
				t.Errorf("Decode(%q) given = %t, want %t", tc.in, given, tc.given)
			}
			if tc.wantErr != "" {
				return
			}
			if (tc.holder == nil) != (r.Holder == nil) || tc.holder != nil && *tc.holder != *r.Holder {
				t.Errorf("Decode(%q) holder = %v, want %v", tc.in, r.Holder, tc.holder)
			}
		})
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
