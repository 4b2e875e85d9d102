package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/teach-dist/playground/cmd/internal/procfs"
	"github.com/teach-dist/playground/web"
)

func init() { attacks["explorer"] = explorerAttack }

// exploreOnce runs the Explore action of a new session of path from c and returns
// the highest queue position it was told, how long until its search started, and
// the result's bound or verdict.
func exploreOnce(ctx context.Context, c *fairClient, base, path string) (pos int, wait time.Duration, verdict string, err error) {
	c.fresh()
	code, id, err := c.page(base + path)
	if err != nil || code != http.StatusOK {
		return 0, 0, "", fmt.Errorf("page %s: %d %v", path, code, err)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/sessions/"+id+"/explore", nil)
	t0 := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, 0, "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, 0, "", fmt.Errorf("explore: %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l struct {
			Type     string
			Position int
			Error    string
			Result   *struct{ Result, Bound string }
		}
		_ = json.Unmarshal(sc.Bytes(), &l)
		switch l.Type {
		case "queued":
			pos = max(pos, l.Position)
		case "start":
			wait = time.Since(t0)
		case "result":
			return pos, wait, l.Result.Result + " " + l.Result.Bound, nil
		case "error":
			return pos, wait, "", fmt.Errorf("explore: %s", l.Error)
		}
	}
	return pos, wait, "", fmt.Errorf("the stream ended early: %v", sc.Err())
}

// explorerAttack: -loops loops of heavy searches from 127.0.0.1 keep the explorer's
// slots busy while 127.0.0.2 explores -tries times: the second address must still get its searches.
func explorerAttack(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("explorer", flag.ContinueOnError)
	loops := fs.Int("loops", 2, "looping attackers at 127.0.0.1")
	tries := fs.Int("tries", 8, "searches of the second address, one after another")
	if err := fs.Parse(args); err != nil {
		return err
	}
	base, stop, err := fairServer(ctx, web.Options{})
	if err != nil {
		return err
	}
	defer stop()
	before := procfs.Status(os.Getpid(), "VmRSS")
	actx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var mu sync.Mutex
	heavy := map[string]int{}
	for range *loops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := newFairClient("127.0.0.1")
			for actx.Err() == nil {
				_, _, v, err := exploreOnce(actx, c, base, "/play/lamport?n=4")
				mu.Lock()
				if err != nil {
					v = "refused or cancelled"
				}
				heavy[v]++
				mu.Unlock()
			}
		}()
	}
	time.Sleep(time.Second) // the loops hold both slots
	victim := newFairClient("127.0.0.2")
	served := 0
	for i := range *tries {
		pos, wait, v, err := exploreOnce(ctx, victim, base, "/play/ricart-agrawala?n=3")
		if err != nil {
			fmt.Printf("second address, try %d: %v\n", i+1, err)
			continue
		}
		served++
		fmt.Printf("second address, try %d: highest queue position %d, started after %v, %s\n", i+1, pos, wait.Round(time.Millisecond), v)
	}
	cancel()
	wg.Wait()
	fmt.Printf("second address served %d of %d; attacker's searches: %v; RSS of the process (server and clients) before the searches %s, at its peak %s (the searches' bound: 256 MiB)\n", served, *tries, heavy, before, procfs.Status(os.Getpid(), "VmHWM"))
	return nil
}
