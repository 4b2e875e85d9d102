package lecture

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
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
