package socket

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// BenchmarkFanOut sends one small frame (a compact events frame's size) to every one
// of 500 clients over loopback WebSockets, or a burst of four (a lecture at 4x, or a
// writer that fell behind), and waits until every reader has read them: what a
// lecture's fan-out costs per follower, the readers' side included. "one write per
// frame" is the writer before batching (each frame its own system call); "batched"
// is Hub.Upgrade's connection (batch.go); "prepared" frames the shared frame once for
// all (prepared.go); "fast path" writes it from the sender's goroutine when the
// client is idle (batch.go, batchWriter.writeNow). cpu-ns/delivery is the process's user and system CPU per frame
// per client, which a busy machine disturbs less than the time.
//
//	go test -run '^$' -bench FanOut -count 3 ./web/socket/
func BenchmarkFanOut(b *testing.B) {
	modes := []struct {
		name                    string
		batched, prepared, fast bool
	}{
		{"one write per frame", false, false, false},
		{"batched", true, false, false},
		{"batched and prepared", true, true, false},
		{"fast path", true, true, true}, // what a lecture's follower does (SendShared)
	}
	for _, burst := range []int{1, 4} {
		for _, m := range modes {
			b.Run(fmt.Sprintf("clients=500/frames=%d/%s", burst, m.name), func(b *testing.B) { benchFanOut(b, 500, burst, m.batched, m.prepared, m.fast) })
		}
	}
}

func benchFanOut(b *testing.B, n, burst int, batched, prepared, fast bool) {
	h := NewHub(nil, Options{Logger: slog.New(slog.DiscardHandler)})
	h.upgrader.CheckOrigin = func(*http.Request) bool { return true }
	clients := make(chan *Client, n)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, ok := h.Upgrade(w, r)
		if !ok {
			return
		}
		c := newClient(conn, 1024, 0, time.Hour, 10*time.Second)
		if !batched {
			c.out = plainWriter{ws: conn}
		}
		if b := batchOf(c); !fast && b != nil {
			b.raw = nil // tryWrite declines: every frame goes through the writer
		}
		c.Start()
		clients <- c
		<-c.gone
	}))
	defer ts.Close()
	var read, want atomic.Int64
	done := make(chan struct{}, 1)
	var servers []*Client
	for range n {
		conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.URL, "http"), nil)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		servers = append(servers, <-clients)
		go func() {
			for {
				_, r, err := conn.NextReader()
				if err != nil {
					return
				}
				if _, err := io.Copy(io.Discard, r); err != nil {
					return
				}
				if read.Add(1) == want.Load() {
					done <- struct{}{}
				}
			}
		}()
	}
	defer func() {
		for _, c := range servers {
			c.CloseWith(websocket.CloseNormalClosure, "", false)
			<-c.gone
		}
	}()
	frame := stamped(1, 75)
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := range b.N {
		want.Store(int64((i + 1) * n * burst))
		for _, c := range servers {
			for range burst {
				if prepared {
					c.SendShared(frame)
				} else {
					c.Send(frame)
				}
			}
		}
		<-done
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N*n*burst), "cpu-ns/delivery")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n*burst), "ns/delivery")
}

// cpuTime is the process's user and system CPU so far, in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
