package lecture

import (
	"fmt"
	"strings"
	"testing"

	"rsc.io/qr"
)

func TestNewCodeUsesOnlyTheAlphabet(t *testing.T) {
	seen := map[string]bool{}
	for range 2000 {
		c := newCode()
		if len(c) != CodeLen || strings.Trim(c, CodeAlphabet) != "" {
			t.Fatalf("code %q", c)
		}
		seen[c] = true
	}
	// Random codes, not counted ones: 2000 draws from 47 million almost never repeat.
	if len(seen) < 1990 {
		t.Fatalf("only %d distinct codes in 2000", len(seen))
	}
}

func TestAlphabetHasNoLookAlikes(t *testing.T) {
	for _, r := range "0O1IL2Z5S8B6GUVQD" {
		if strings.ContainsRune(CodeAlphabet, r) {
			t.Errorf("the alphabet has %q, which reads like another character", r)
		}
	}
}

func TestNormalizeCode(t *testing.T) {
	cases := []struct {
		in   string
		want string
		ok   bool
	}{
		{"KXT49P", "KXT49P", true},
		{"kxt 49p", "KXT49P", true},
		{" kxt-49p ", "KXT49P", true},
		{"KXT49", "", false},   // too short
		{"KXT49PP", "", false}, // too long
		{"KXT40P", "", false},  // 0 is not in the alphabet
		{"KXT49É", "", false},  // not ASCII
		{"../../x", "", false}, // not a code at all
		{"", "", false},
	}
	for _, c := range cases {
		got, ok := NormalizeCode(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("NormalizeCode(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
	if DisplayCode("KXT49P") != "KXT 49P" {
		t.Errorf("DisplayCode: %q", DisplayCode("KXT49P"))
	}
}

func TestTokensAreDistinctAndKeyedByHash(t *testing.T) {
	a, b := newToken(), newToken()
	if a == b || len(a) < 22 {
		t.Fatalf("tokens %q %q", a, b)
	}
	if tokenKey(a) == tokenKey(b) || tokenKey(a) != tokenKey(string([]byte(a))) {
		t.Fatal("token keys")
	}
}

// The SVG has one dark square per dark module of the QR code, inside a white quiet zone.
func TestQRSVGDrawsTheCode(t *testing.T) {
	const url = "https://playground.example/l/KXT49P"
	svg, err := QRSVG(url)
	if err != nil {
		t.Fatal(err)
	}
	code, _ := qr.Encode(url, qr.M)
	dark := 0
	for y := range code.Size {
		for x := range code.Size {
			if code.Black(x, y) {
				dark++
			}
		}
	}
	s := string(svg)
	if !strings.HasPrefix(s, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 `) || !strings.Contains(s, `fill="#fff"`) {
		t.Fatalf("not an SVG: %.120s", s)
	}
	// Each segment "Mx yhNv1h-Nz" covers N dark modules.
	covered := 0
	for _, seg := range strings.Split(s, "M")[1:] {
		var x, y, n int
		if _, err := fmtSscanf(seg, &x, &y, &n); err != nil {
			t.Fatalf("segment %q: %v", seg, err)
		}
		if x < 4 || y < 4 || x+n > code.Size+4 || y >= code.Size+4 {
			t.Fatalf("segment %q outside the code", seg)
		}
		covered += n
	}
	if covered != dark {
		t.Fatalf("the SVG covers %d modules, the code has %d dark", covered, dark)
	}
}

func fmtSscanf(seg string, x, y, n *int) (int, error) {
	return fmt.Sscanf(seg, "%d %dh%dv1h", x, y, n)
}

func TestCodeProblemNamesTheCharactersCodesNeverUse(t *testing.T) {
	for typed, want := range map[string]string{
		"YNX4W0":   "codes never use “0”:",
		"ABC123":   "codes never use “B”, “1” and “2”:",
		"KXT 49":   "a code has 6 characters; this has 5",
		"kxt-49p1": "codes never use “1”:",
	} {
		if got := CodeProblem(typed); !strings.HasPrefix(got, want) {
			t.Errorf("CodeProblem(%q) = %q, want it to start %q", typed, got, want)
		}
	}
}
