package named

import "testing"

// The tests UntestedRules reads in simtest's own test: AB-1 and AB-10 are named, AB-2
// only seems to be (a helper, a method, a longer label).

func TestAB1_Named(t *testing.T) {}

func TestAB10(t *testing.T) {}

func TestAB2helper(t *testing.T) {}

type suite struct{}

func (suite) TestAB2_AMethod(t *testing.T) {}

func helperAB3(t *testing.T) {}
