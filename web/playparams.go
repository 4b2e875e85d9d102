package web

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/teach-dist/playground/runtime/sim"
)

// paramPrefix starts a /play query parameter that sets one field of the algorithm's
// params: p.denied=true, p.variant=deadlock-free, p.tree={"1":0,"2":0} (docs/links.md).
const paramPrefix = "p."

// paramFromQuery reads the value of p.<name> as the JSON its declared kind takes, so
// the scenario's params decoder judges it as it would in a scenario file. The checks
// of range, choice and shape are the decoder's: here only what the URL's text cannot
// say as JSON.
func paramFromQuery(spec *sim.Spec, key, v string) (string, json.RawMessage, error) {
	name := strings.TrimPrefix(key, paramPrefix)
	var decl *sim.Param
	for i := range spec.Params {
		if spec.Params[i].Name == name {
			decl = &spec.Params[i]
		}
	}
	if decl == nil {
		return "", nil, fmt.Errorf("%s: %s has no param %q (%s)", key, spec.Slug, name, allowedParams(spec))
	}
	switch decl.Kind {
	case sim.ParamInt, sim.ParamNode:
		n, err := strconv.Atoi(v)
		if err != nil {
			return "", nil, fmt.Errorf("%s: %q is not a whole number", key, v)
		}
		return name, json.RawMessage(strconv.Itoa(n)), nil
	case sim.ParamBool:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return "", nil, fmt.Errorf("%s: %q is not true or false", key, v)
		}
		return name, json.RawMessage(strconv.FormatBool(b)), nil
	case sim.ParamChoice:
		raw, _ := json.Marshal(v)
		return name, raw, nil
	default: // an object, written as JSON
		if !json.Valid([]byte(v)) {
			return "", nil, fmt.Errorf("%s: %q is not JSON (%s)", key, v, decl.Doc)
		}
		return name, json.RawMessage(v), nil
	}
}

func allowedParams(spec *sim.Spec) string {
	if len(spec.Params) == 0 {
		return "it takes none"
	}
	names := make([]string, len(spec.Params))
	for i, p := range spec.Params {
		names[i] = paramPrefix + p.Name
	}
	return "allowed: " + strings.Join(names, ", ")
}
