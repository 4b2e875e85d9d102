package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/scenarios"
)

func init() { attacks["viewers"] = viewersAttack }

// viewersAttack: N viewers of a 128-process Bakery run never read their socket while
// another viewer of the same run seeks R times a second; it prints the server's heap
// (the server runs in this process) and the slow clients it dropped.
func viewersAttack(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("viewers", flag.ContinueOnError)
	idle := fs.Int("idle", 2, "viewers that never read")
	perSec := fs.Float64("rate", 12, "seeks per second of the reading viewer")
	dur := fs.Duration("d", 20*time.Second, "how long")
	if err := fs.Parse(args); err != nil {
		return err
	}
	t, err := startTarget()
	if err != nil {
		return err
	}
	defer t.close()
	doc := []byte(`{"version":2,"algorithm":"bakery","nodes":128,"seed":1,"cs":2}`)
	sc, err := scenarios.Parse(doc)
	if err != nil {
		return err
	}
	cfg, err := sc.Config()
	if err != nil {
		return err
	}
	var ivs []sim.Intervention // every process asks at once: thousands of messages
	for i := range cfg.IDs {
		ivs = append(ivs, sim.Intervention{Action: sim.Action{Do: sim.ActRequest, Node: i, From: -1, To: -1}})
	}
	link, err := scenarios.LinkFromRun(doc, cfg, ivs, 400)
	if err != nil {
		return err
	}
	path, err := link.Path()
	if err != nil {
		return err
	}
	id, _, err := t.session("198.51.100.20", path)
	if err != nil {
		return err
	}
	// Non-readers with a small receive buffer, as a phone on a stalled network.
	small := websocket.Dialer{NetDial: func(network, addr string) (net.Conn, error) {
		c, err := net.Dial(network, addr)
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetReadBuffer(4096)
		}
		return c, err
	}}
	for k := range *idle {
		h := http.Header{"Origin": {t.base}, "X-Forwarded-For": {fmt.Sprintf("198.51.100.%d", 30+k)}}
		c, _, err := small.Dial("ws"+strings.TrimPrefix(t.base, "http")+"/ws/"+id, h)
		if err != nil {
			return err
		}
		defer c.Close()
	}
	seeker, err := t.dial("198.51.100.20", "/ws/"+id)
	if err != nil {
		return err
	}
	defer seeker.Close()
	drain(seeker)
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	start, peak := heap(), uint64(0)
	tick := time.NewTicker(time.Duration(float64(time.Second) / *perSec))
	defer tick.Stop()
	end := time.Now().Add(*dur)
	for k := 0; time.Now().Before(end) && ctx.Err() == nil; k++ {
		<-tick.C
		_ = seeker.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `{"type":"seek","step":%d}`, 400-k%2))
		if k%12 == 0 {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapInuse)
		}
	}
	resp, err := http.Get(t.base + "/metrics")
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	dropped := "?"
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, "playground_slow_clients_dropped_total "); ok {
			dropped = v
		}
	}
	fmt.Printf("viewers: %d non-reading viewers of a 128-process Bakery, one seeking %.0f/s for %v\n", *idle, *perSec, *dur)
	fmt.Printf("viewers: heap in use %d MB at the start, %d MB at the peak; slow clients dropped: %s\n", start>>20, peak>>20, dropped)
	return nil
}
