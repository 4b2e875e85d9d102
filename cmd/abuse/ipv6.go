package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"time"
)

func init() { attacks["ipv6"] = ipv6Attack }

// ipv6Attack: one IPv6 subscriber (one /64) loads N playground pages, each from
// another address of its /64 and with no cookie (each a new run), behind the target's
// trusted proxy; then an address of another /64 loads one (rate
// limits keyed by the exact address would give one /64 2^64 buckets).
func ipv6Attack(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("ipv6", flag.ContinueOnError)
	n := fs.Int("n", 400, "page loads, each from its own address of one /64")
	if err := fs.Parse(args); err != nil {
		return err
	}
	t, err := startTarget()
	if err != nil {
		return err
	}
	defer t.close()
	load := func(addr string) (int, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, t.base+"/play/bully?n=3", nil)
		req.Header.Set("X-Forwarded-For", addr)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, nil
	}
	counts := map[int]int{}
	start := time.Now()
	for k := range *n {
		status, err := load(fmt.Sprintf("2001:db8:1:2:%x:%x::1", k/65536, k%65536))
		if err != nil {
			return err
		}
		counts[status]++
	}
	fmt.Printf("ipv6: %d page loads from %d addresses of 2001:db8:1:2::/64 in %v: %v (sessions of the whole server: %d)\n",
		*n, *n, time.Since(start).Round(time.Millisecond), counts, t.srv.Sessions().Len())
	status, err := load("2001:db8:1:3::1")
	if err != nil {
		return err
	}
	fmt.Printf("ipv6: an address of another /64 (2001:db8:1:3::1): %d\n", status)
	return nil
}
