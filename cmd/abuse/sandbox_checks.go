package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/teach-dist/playground/cmd/internal/procfs"
)

func init() { attacks["sandbox-checks"] = sandboxChecksAttack }

// checkLine is a line of a Check's stream, stamped when it came.
type checkLine struct {
	Type     string
	Position int
	Error    string
	Result   *struct{ Result, Bound string }
	at       time.Time
}

// checkStream posts the Check (the explorer) of session id as c; its lines come on
// the channel, which closes when the stream ends (ctx's end cancels the request, as
// the dialog's Cancel does).
func checkStream(ctx context.Context, c *fairClient, base, id string) (<-chan checkLine, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/sessions/"+id+"/explore", nil)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("explore: %d", resp.StatusCode)
	}
	lines := make(chan checkLine, 64)
	go func() {
		defer resp.Body.Close()
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var l checkLine
			if json.Unmarshal(sc.Bytes(), &l) == nil {
				l.at = time.Now()
				lines <- l
			}
		}
	}()
	return lines, nil
}

// checkUntil runs a Check until a line of type typ (or the stream's end).
func checkUntil(ctx context.Context, c *fairClient, base, id, typ string) (checkLine, error) {
	lines, err := checkStream(ctx, c, base, id)
	if err != nil {
		return checkLine{}, err
	}
	return waitLine(lines, typ)
}

// waitLine reads lines until one of type typ, or an error line, or the end.
func waitLine(lines <-chan checkLine, typ string) (checkLine, error) {
	for l := range lines {
		if l.Type == typ {
			return l, nil
		}
		if l.Type == "error" {
			return l, fmt.Errorf("explore: %s", l.Error)
		}
	}
	return checkLine{}, fmt.Errorf("the stream ended before a %s line", typ)
}

// sandboxChecksAttack: one address starts two Checks of a source whose request
// handler takes minutes, holding both explorer slots, and cancels them after -hold
// (the issue: cancelled after 10 s, they ran for 7 minutes and held both slots). A
// second address's Check of a Go algorithm waits meanwhile; the tool prints how long
// after the cancel it started and ended, and how long the cancelled searches' worker
// processes lived on.
func sandboxChecksAttack(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("sandbox-checks", flag.ContinueOnError)
	bin := fs.String("server", "playground", "the playground binary to attack (started on 127.0.0.1 with the default flags)")
	hold := fs.Duration("hold", 10*time.Second, "how long the attacker's Checks run before it cancels them")
	if err := fs.Parse(args); err != nil {
		return err
	}
	srv, err := startServer(ctx, *bin, 0)
	if err != nil {
		return err
	}
	defer srv.stop()
	pid := srv.cmd.Process.Pid
	attacker := newFairClient("127.0.0.1")
	var ids []string
	for k := range 2 {
		slow, err := slowTemplate(fmt.Sprintf("checks attacker %d %d", k, time.Now().UnixNano()))
		if err != nil {
			return err
		}
		id, conn, err := playSource(attacker, srv.url, slow)
		if err != nil {
			return err
		}
		defer conn.Close()
		ids = append(ids, id)
	}
	stepWorkers := procfs.Children(pid)
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	for _, id := range ids {
		lines, err := checkStream(actx, attacker, srv.url, id)
		if err != nil {
			return err
		}
		if _, err := waitLine(lines, "start"); err != nil {
			return err
		}
		go func() {
			for range lines {
			}
		}()
	}
	var searches []int
	for _, w := range procfs.Children(pid) {
		if !slices.Contains(stepWorkers, w) {
			searches = append(searches, w)
		}
	}
	fmt.Printf("server %s: the attacker's two Checks hold both explorer slots (%d search processes)\n", srv.url, len(searches))
	victim := newFairClient("127.0.0.2")
	code, id, err := victim.page(srv.url + "/play/ricart-agrawala?n=3")
	if err != nil || code != http.StatusOK {
		return fmt.Errorf("second address's page: %d %v", code, err)
	}
	lines, err := checkStream(ctx, victim, srv.url, id)
	if err != nil {
		return err
	}
	first, err := waitLine(lines, "queued")
	if err != nil {
		return err
	}
	fmt.Printf("second address 127.0.0.2: its Check of the Go Ricart-Agrawala waits at position %d\n", first.Position)
	time.Sleep(*hold)
	cancel()
	cancelled := time.Now()
	start, err := waitLine(lines, "start")
	if err != nil {
		return err
	}
	result, err := waitLine(lines, "result")
	if err != nil {
		return err
	}
	gone := time.Duration(0)
	for _, w := range searches {
		for !procfs.Ended(w) && time.Since(cancelled) < 10*time.Minute {
			time.Sleep(time.Millisecond)
		}
		gone = max(gone, time.Since(cancelled))
	}
	if start.at.Before(cancelled) {
		// The interpreter's bound ended the attacker's searches before the cancel.
		fmt.Printf("the attacker's searches ended by themselves: the second address's Check started %v after it asked, before the attacker cancelled (%v); it ended %s %s\n",
			start.at.Sub(first.at).Round(time.Millisecond), *hold, result.Result.Result, result.Result.Bound)
		return nil
	}
	fmt.Printf("the attacker cancelled after %v: the search processes ended within %v; the second address's Check started %v and ended %v after the cancel (%s %s)\n",
		*hold, gone.Round(time.Millisecond), start.at.Sub(cancelled).Round(time.Millisecond), result.at.Sub(cancelled).Round(time.Millisecond),
		result.Result.Result, result.Result.Bound)
	return nil
}
