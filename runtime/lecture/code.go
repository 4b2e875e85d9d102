package lecture

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
)

// Join codes are read off a projector and typed on a phone: short, upper case, and
// drawn from characters that cannot be mistaken for one another (no 0/O/Q/D, 1/I/L,
// 2/Z, 5/S, 8/B, 6/G, U/V). They are random, not counted, so one code says nothing
// about the next: 19^6 = 47 million codes for a handful of live lectures.
const (
	CodeAlphabet = "ACEFHJKMNPRTWXY3479"
	CodeLen      = 6
)

// newCode draws a join code with crypto/rand, without modulo bias.
func newCode() string {
	var out [CodeLen]byte
	var buf [16]byte
	n := 0
	for n < CodeLen {
		_, _ = rand.Read(buf[:])
		for _, b := range buf {
			// Accept only bytes below the largest multiple of the alphabet's size.
			if int(b) >= 256-256%len(CodeAlphabet) {
				continue
			}
			out[n] = CodeAlphabet[int(b)%len(CodeAlphabet)]
			n++
			if n == CodeLen {
				break
			}
		}
	}
	return string(out[:])
}

// NormalizeCode turns what someone typed into a code: case, spaces and dashes do not
// matter. It reports false when the result cannot be a code at all.
func NormalizeCode(s string) (string, bool) {
	var b strings.Builder
	for _, r := range strings.ToUpper(s) {
		switch {
		case r == ' ' || r == '-' || r == '\t':
			continue
		case r < 128 && strings.IndexByte(CodeAlphabet, byte(r)) >= 0:
			b.WriteRune(r)
		default:
			return "", false
		}
	}
	if b.Len() != CodeLen {
		return "", false
	}
	return b.String(), true
}

// CodeProblem says why what someone typed is not a code (NormalizeCode said false):
// the characters codes never use, by name, or the wrong length. A code mistyped from
// the projector usually has a look-alike (0 for O, 1 for I) that the alphabet leaves
// out on purpose, and saying so sends the student back to the right character.
func CodeProblem(s string) string {
	var bad []string
	n := 0
	for _, r := range strings.ToUpper(s) {
		switch {
		case r == ' ' || r == '-' || r == '\t':
			continue
		case r < 128 && strings.IndexByte(CodeAlphabet, byte(r)) >= 0:
			n++
		default:
			q := "“" + string(r) + "”"
			if !slices.Contains(bad, q) {
				bad = append(bad, q)
			}
		}
	}
	if len(bad) > 0 {
		which := strings.Join(bad, ", ")
		if len(bad) > 1 {
			which = strings.Join(bad[:len(bad)-1], ", ") + " and " + bad[len(bad)-1]
		}
		return fmt.Sprintf("codes never use %s: they are made of %s only (no 0, O, Q or D, no 1, I or L, no 2 or Z, 5 or S, 6 or G, 8 or B, U or V: they look alike on a projector)",
			which, strings.Join(strings.Split(CodeAlphabet, ""), " "))
	}
	return fmt.Sprintf("a code has %d characters; this has %d", CodeLen, n)
}

// DisplayCode groups a code in two halves for reading aloud: "KXT 49P".
func DisplayCode(code string) string {
	if len(code) != CodeLen {
		return code
	}
	return code[:CodeLen/2] + " " + code[CodeLen/2:]
}

// newToken returns 128 random bits: the presenter's capability to drive the lecture.
func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// tokenKey is what the registry stores instead of the token: a lookup by hash does not
// leak the token through timing, and a dump of memory does not hold it.
func tokenKey(token string) [32]byte { return sha256.Sum256([]byte(token)) }
