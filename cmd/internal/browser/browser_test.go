package browser

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/teach-dist/playground/web"
	"github.com/teach-dist/playground/web/ratelimit"
)

// The server knows an At client by the address its connections leave from, and a
// Forwarded one by what it says in X-Forwarded-For.
func TestTheServerSeesTheClientsAddress(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		io.WriteString(w, host+" "+r.Header.Get("X-Forwarded-For"))
	}))
	defer ts.Close()
	for _, tc := range []struct {
		c    *Client
		want string
	}{
		{At(ts.URL, "127.0.0.2"), "127.0.0.2 "},
		{At(ts.URL, "127.0.0.3"), "127.0.0.3 "},
		{Forwarded(ts.URL, "2001:db8::1"), "127.0.0.1 2001:db8::1"},
	} {
		resp, err := tc.c.Get(context.Background(), "/")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != tc.want {
			t.Errorf("client %s: the server saw %q, want %q", tc.c.Addr, b, tc.want)
		}
	}
}

// Against a real playground, both kinds of client open a run and its socket up to the
// snapshot, start a lecture and join it as a follower.
func TestRunsSocketsAndLectures(t *testing.T) {
	proxy, err := ratelimit.ClientIP("127.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		opts   web.Options
		client func(base string) *Client
	}{
		{"at its address", web.Options{}, func(base string) *Client { return At(base, "127.0.0.2") }},
		{"forwarded", web.Options{ClientIP: proxy}, func(base string) *Client { return Forwarded(base, "198.51.100.7") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := web.New(tc.opts)
			ts := httptest.NewServer(srv)
			defer srv.Close()
			defer ts.Close()
			c := tc.client(ts.URL)
			id, err := c.Run("/play/bully?n=3")
			if err != nil {
				t.Fatal(err)
			}
			conn, err := c.Socket("/ws/" + id)
			if err != nil {
				t.Fatalf("socket of run %s: %v", id, err)
			}
			conn.Close()
			if again, err := c.Run("/play/bully?n=3"); err != nil || again == id {
				t.Errorf("a second Run gave %q (%v): want a new run, not %q resumed", again, err, id)
			}
			if _, err := c.Run("/play/no-such-algorithm"); err == nil || !strings.Contains(err.Error(), "404") {
				t.Errorf("Run of an unknown algorithm: %v, want its 404", err)
			}
			presenter, code, err := c.Lecture("/play/ricart-agrawala?n=3")
			if err != nil {
				t.Fatal(err)
			}
			defer presenter.Close()
			if code == "" {
				t.Fatal("Lecture gave no join code")
			}
			follower, err := c.DialStalled("/ws/lecture/"+code, 4096)
			if err != nil {
				t.Fatalf("joining lecture %s: %v", code, err)
			}
			follower.Close()
			if status, token, err := c.PostLecture("no-such-session"); err != nil || token != "" || status == http.StatusSeeOther {
				t.Errorf("PostLecture of no session: %d %q %v, want a refusal", status, token, err)
			}
		})
	}
}
