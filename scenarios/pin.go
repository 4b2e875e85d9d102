package scenarios

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/teach-dist/playground/runtime/sim"
)

// pinDefaults makes a scenario written under defaults epoch `epoch` say explicitly
// what it left to defaults that have changed since, so that it runs as it did then:
// for each of the algorithm's Earlier entries newer than epoch, oldest first, the
// entry's params fill what the scenario (or an older entry) left unset, and ids
// default to 0..N-1 where they did. A scenario of the current epoch is left alone.
func (s *Scenario) pinDefaults(epoch int) error {
	if epoch >= sim.DefaultsEpoch {
		return nil // before the Spec: a link's source is loaded by its validation only
	}
	spec := s.Spec()
	if spec == nil {
		return nil
	}
	changes := slices.Clone(spec.Earlier)
	slices.SortStableFunc(changes, func(a, b sim.EarlierDefaults) int { return a.Epoch - b.Epoch })
	for _, c := range changes {
		if c.Epoch <= epoch {
			continue
		}
		if c.IDsFrom0 && s.IDs == nil {
			s.IDs = make([]int, s.nodeCount(spec))
			for i := range s.IDs {
				s.IDs[i] = i
			}
		}
		if c.Params == "" {
			continue
		}
		merged, err := mergeUnset(s.Params, json.RawMessage(c.Params))
		if err != nil {
			return fmt.Errorf("%s's earlier defaults (epoch %d): %w", spec.Slug, c.Epoch, err)
		}
		s.Params = merged
	}
	return nil
}

// mergeUnset returns the object have with every field of earlier it does not set,
// recursively inside objects both have.
func mergeUnset(have, earlier json.RawMessage) (json.RawMessage, error) {
	var h, e map[string]json.RawMessage
	if t := bytes.TrimSpace(have); len(t) > 0 && string(t) != "null" {
		if err := json.Unmarshal(t, &h); err != nil {
			return nil, fmt.Errorf("params: %w", err)
		}
	}
	if err := json.Unmarshal(earlier, &e); err != nil {
		return nil, fmt.Errorf("earlier params: %w", err)
	}
	if h == nil {
		h = map[string]json.RawMessage{}
	}
	for k, ev := range e {
		hv, set := h[k]
		switch {
		case !set:
			h[k] = ev
		case isObject(hv) && isObject(ev):
			m, err := mergeUnset(hv, ev)
			if err != nil {
				return nil, err
			}
			h[k] = m
		}
	}
	return json.Marshal(h) // keys sorted: one form for one meaning
}

func isObject(v json.RawMessage) bool {
	t := bytes.TrimSpace(v)
	return len(t) > 0 && t[0] == '{'
}
