package ratelimit

import (
	"testing"
	"time"
)

// Fuzzed like every parser that reads what a visitor sends (docs/operations.md,
// "Fuzzing"); the seed corpus is testdata/fuzz/FuzzParseRate.

// FuzzParseRate: the serve flags' rates never panic the parser and read back.
func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"20/s:600", "120/m:300", "5/10s", "off", "0", "1/1ns", "9223372036854775807/h", "3/-1s:2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRate(s)
		if err != nil {
			return
		}
		if r.Per > 0 && (r.Burst < 1 || r.Every/time.Duration(r.Per) <= 0) {
			t.Fatalf("%q: accepted %+v, which cannot refill", s, r)
		}
		back, err := ParseRate(r.String())
		if err != nil || back != r {
			t.Fatalf("%q: %+v writes as %q, which reads %+v, %v", s, r, r.String(), back, err)
		}
	})
}
