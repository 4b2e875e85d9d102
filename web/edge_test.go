package web

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/teach-dist/playground/web/ratelimit"
)

// HEAD is answered as GET without the body: link checkers and uptime probes get the
// page's status and headers, not 405.
func TestHeadAnswersLikeGet(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	for _, path := range []string{"/", "/play/bully", "/healthz"} {
		t.Run(path, func(t *testing.T) {
			resp, err := http.Head(ts.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK || len(body) != 0 {
				t.Fatalf("HEAD %s: %d %q, %d bytes of body", path, resp.StatusCode, resp.Header.Get("Content-Type"), len(body))
			}
		})
	}
}

// Cookies get Secure behind a TLS proxy that says X-Forwarded-Proto: https, and only
// when the proxy is one --trusted-proxy names: anyone else's header is ignored.
func TestSecureCookiesBehindATrustedProxyOnly(t *testing.T) {
	tests := []struct {
		name, trusted, proto string
		secure               bool
	}{
		{"trusted proxy says https", "127.0.0.0/8", "https", true},
		{"trusted proxy, list ends in https", "127.0.0.1", "http, https", true},
		{"trusted proxy says http", "127.0.0.0/8", "http", false},
		{"untrusted peer says https", "10.0.0.0/8", "https", false},
		{"no proxy configured", "", "https", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clientIP, err := ratelimit.ClientIP(tt.trusted)
			if err != nil {
				t.Fatal(err)
			}
			_, ts := newTestServer(t, Options{ClientIP: clientIP})
			req, _ := http.NewRequest(http.MethodGet, ts.URL+"/play/bully", nil)
			req.Header.Set("X-Forwarded-Proto", tt.proto)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			cookies := resp.Cookies()
			if len(cookies) == 0 {
				t.Fatalf("no cookie (status %d)", resp.StatusCode)
			}
			for _, c := range cookies {
				if c.Secure != tt.secure {
					t.Errorf("cookie %s: Secure %v, want %v", c.Name, c.Secure, tt.secure)
				}
			}
		})
	}
}

// A Host header no URL can hold is refused with 400, not a 500 from the QR encoder.
func TestQRRefusesAHostThatCannotBeAURL(t *testing.T) {
	rig := startLecture(t, Options{AllowedHosts: []string{"*"}}, "/play/ricart-agrawala?n=3")
	tests := []struct {
		host string
		want int
	}{
		{"", http.StatusOK}, // the test server's own
		{"class.example.edu:8443", http.StatusOK},
		{strings.Repeat("a", 2900) + ".example", http.StatusBadRequest},
		{"a_b.example", http.StatusOK},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(http.MethodGet, rig.ts.URL+"/l/"+rig.code+"/qr.svg", nil)
		if tt.host != "" {
			req.Host = tt.host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("Host of %d bytes: %d, want %d", len(tt.host), resp.StatusCode, tt.want)
		}
	}
}
