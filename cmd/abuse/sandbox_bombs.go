package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/cmd/internal/procfs"
)

func init() {
	attacks["sandbox-bombs"] = sandboxBombsAttack
	attacks["sandbox-keep"] = sandboxKeepAttack
}

// sandboxBombsAttack: each bomb of the issue (zip, lists, max) by each route a source
// reaches the server (a link's GET, the page's reset frame, a lecture follower's
// reset frame), against a `playground serve` with the default flags. It prints how
// long the attacker waited for its error and what it said, the server's resident
// memory before and after (its sandbox workers apart), and whether a fresh visitor
// still gets a page, a socket and a snapshot.
func sandboxBombsAttack(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("sandbox-bombs", flag.ContinueOnError)
	bin := fs.String("server", "playground", "the playground binary to attack (started on 127.0.0.1 with the default flags)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	srv, err := startServer(ctx, *bin, 0)
	if err != nil {
		return err
	}
	defer srv.stop()
	attacker := newFairClient("127.0.0.1")
	_, page, err := playSource(attacker, srv.url, abuseSource("# a harmless start\n"))
	if err != nil {
		return err
	}
	defer page.Close()
	code, presenter, err := startLectureAs(newFairClient("127.0.0.3"), srv.url)
	if err != nil {
		return err
	}
	defer presenter.Close()
	follower, err := attacker.socketAt(srv.url, "/ws/lecture/"+code)
	if err != nil {
		return err
	}
	defer follower.Close()
	before, _ := srv.memory()
	fmt.Printf("server %s: %d MiB resident before the bombs\n", srv.url, before)

	byFrame := func(conn *websocket.Conn, source string) (string, error) {
		if err := conn.WriteMessage(websocket.TextMessage, resetFrame(source)); err != nil {
			return "", err
		}
		f, err := readFrame(conn, 5*time.Minute, "hello", "error")
		if err != nil {
			return "", err
		}
		return f.Type + " " + f.Code + ": " + f.Error, nil
	}
	routes := []struct {
		name   string
		attack func(source string) (string, error)
	}{
		{"link GET", func(source string) (string, error) {
			resp, err := attacker.http.Get(srv.url + sourceLink(source))
			if err != nil {
				return "", err
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%d: %s", resp.StatusCode, linkReason(string(body))), nil
		}},
		{"page's reset", func(source string) (string, error) { return byFrame(page, source) }},
		{"follower's reset", func(source string) (string, error) { return byFrame(follower, source) }},
	}
	for _, bomb := range sandboxBombs {
		for _, route := range routes {
			source := abuseSource(bomb.code + fmt.Sprintf("# %s by %s, %d\n", bomb.name, route.name, time.Now().UnixNano()))
			t0 := time.Now()
			told, err := route.attack(source)
			took := time.Since(t0)
			if err != nil {
				told = "failed: " + err.Error()
			}
			rss, peak := srv.memory()
			fmt.Printf("%-5s by %-17s %-8v %s; server %d MiB (peak %d MiB)\n", bomb.name, route.name, took.Round(time.Millisecond), short(told), rss, peak)
			if !srv.alive() {
				return fmt.Errorf("the server died: %s", srv.lastLines())
			}
		}
	}
	after, peak := srv.memory()
	fmt.Printf("server alive: %d MiB resident before, %d MiB after, peak %d MiB; a fresh visitor (127.0.0.2): %s\n", before, after, peak, visit(srv.url, "127.0.0.2"))
	return nil
}

// sandboxKeepAttack: five distinct links whose sources keep 100 MiB of lists each in a
// global (the issue's: 20 MiB to 521 MiB in the server). It prints what each link
// answered, the server's resident memory and its sandbox workers'.
func sandboxKeepAttack(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("sandbox-keep", flag.ContinueOnError)
	bin := fs.String("server", "playground", "the playground binary to attack (started on 127.0.0.1 with the default flags)")
	links := fs.Int("links", 5, "distinct links")
	lists := fs.Int("lists", 100, "lists of 65,536 elements (1 MiB each) each source keeps")
	if err := fs.Parse(args); err != nil {
		return err
	}
	srv, err := startServer(ctx, *bin, 0)
	if err != nil {
		return err
	}
	defer srv.stop()
	before, _ := srv.memory()
	fmt.Printf("server %s: %d MiB resident before the links\n", srv.url, before)
	c := newFairClient("127.0.0.1")
	for k := range *links {
		source := abuseSource(fmt.Sprintf("keep = [list(range(65536)) for i in range(%d)]\n# link %d, %d\n", *lists, k, time.Now().UnixNano()))
		t0 := time.Now()
		resp, err := c.http.Get(srv.url + sourceLink(source))
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		said := "the run's page"
		if resp.StatusCode != http.StatusOK {
			said = linkReason(string(body))
		}
		rss, _ := srv.memory()
		fmt.Printf("link %d: %d in %v, %s; server %d MiB, its sandbox workers %d MiB\n", k+1, resp.StatusCode,
			time.Since(t0).Round(time.Millisecond), short(said), rss, rssOf(procfs.Children(srv.cmd.Process.Pid)))
	}
	after, peak := srv.memory()
	fmt.Printf("server alive %v: %d MiB resident before, %d MiB after, peak %d MiB; a fresh visitor (127.0.0.2): %s\n",
		srv.alive(), before, after, peak, visit(srv.url, "127.0.0.2"))
	return nil
}
