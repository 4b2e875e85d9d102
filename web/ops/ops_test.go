package ops

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestCheckLoopback(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:6060": "127.0.0.1:6060", "[::1]:6060": "[::1]:6060", "localhost:6060": "127.0.0.1:6060", "127.0.0.2:0": "127.0.0.2:0",
	} {
		if got, err := CheckLoopback(in); err != nil || got != want {
			t.Errorf("%q: %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{":6060", "0.0.0.0:6060", "[::]:6060", "192.0.2.1:6060", "example.com:6060", "6060", "127.0.0.1"} {
		if _, err := CheckLoopback(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := CheckLoopback(":6060"); err == nil || !strings.Contains(err.Error(), "not a loopback address") {
		t.Errorf("the error does not say why: %v", err)
	}
}

// pprof answers on its loopback listener and stops with its context.
func TestPprofServesOnLoopbackAndStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	errc := make(chan error, 1)
	go func() { errc <- ServePprof(ctx, "127.0.0.1:0", func(a string) { addrc <- a }) }()
	addr := <-addrc
	tr := &http.Transport{}
	resp, err := (&http.Client{Transport: tr}).Get("http://" + addr + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	tr.CloseIdleConnections()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "goroutine profile") {
		t.Fatalf("pprof: %d %.80s", resp.StatusCode, b)
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if err := ServePprof(context.Background(), "0.0.0.0:0", nil); err == nil {
		t.Fatal("pprof listened on every interface")
	}
}
