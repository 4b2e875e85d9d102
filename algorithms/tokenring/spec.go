package tokenring

import (
	_ "embed"
	"github.com/teach-dist/playground/algorithms/params"
	"github.com/teach-dist/playground/runtime/sim"
)

// text is what the pages show of the algorithm, in a file a teacher can read beside
// this code.
//
//go:embed spec.txt
var text string

// Spec describes the algorithm for the registry (algorithms.All): spec.txt, then what
// is code. Each call builds a new one: no caller can change what another sees.
func Spec() *sim.Spec {
	return sim.BuildSpec(text, sim.Spec{
		Params:      paramList,
		Stage:       sim.Stage{Ring: true},
		ParseParams: ParseParams,
		New:         newNode,
	})
}

// Params are the algorithm's settings.
type Params struct {
	Holder     int `param:"holder"`     // id of the initial token holder
	Hop        int `param:"hop"`        // time an unwanted token stays before it is passed on (>= 1)
	Regenerate int `param:"regenerate"` // lost time-out; 0 turns regeneration off
	AckTimeout int `param:"ackTimeout"` // how long a sender waits for an ACK; 0 derives 2*max delay + 1
}

// holderParam gives the token to the first id in ring order by default.
var holderParam = sim.Param{Name: "holder", Kind: sim.ParamNode, Default: sim.FirstID,
	Doc: "the process that starts with the token"}

// paramList: by default a hop of 1 and no regeneration (the notes' plain algorithm).
var paramList = []sim.Param{
	holderParam,
	// 0 would let the token spin round the ring without time passing.
	{Name: "hop", Kind: sim.ParamInt, Min: 1, Default: "1",
		Doc: "time an unwanted token stays before it is passed on"},
	{Name: "regenerate", Kind: sim.ParamInt, Min: 0, Zero: "off", Default: "0",
		Doc: "no token seen for this long calls an election that regenerates it"},
	{Name: "ackTimeout", Kind: sim.ParamInt, Min: 1,
		Doc: "how long an election message waits for its ACK before the successor is skipped; left out, 2 × the largest delay + 1"},
}

// DefaultParams are the settings of a scenario that gives none.
func DefaultParams(ids []int) Params {
	return Params{Holder: params.DefaultID(holderParam, ids), Hop: 1}
}

// ParseParams decodes {"holder": id, "hop": t, "regenerate": t, "ackTimeout": t}; nil,
// empty or null gives the defaults. Errors name the field.
var ParseParams = params.Parser(paramList, DefaultParams)
