package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/runtime/lecture"
	"github.com/teach-dist/playground/web"
)

func init() { attacks["lecture-slots"] = lectureSlotsAttack }

// lectureSlotsAttack: one address opens N playground pages and starts a lecture from
// each (POST /lecture), keeping every presenter's socket open, on a server capped at
// -max lectures; then a second address starts a lecture and asks for its presenter's
// page, socket and snapshot (without the per-address share, 51 /play + POST /lecture
// took every lecture slot).
func lectureSlotsAttack(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("lecture-slots", flag.ContinueOnError)
	starts := fs.Int("starts", 51, "lectures the attacking address starts")
	maxLectures := fs.Int("max", 50, "the server's --max-lectures")
	if err := fs.Parse(args); err != nil {
		return err
	}
	base, stop, err := fairServer(ctx, web.Options{Lecture: lecture.Options{Max: *maxLectures}})
	if err != nil {
		return err
	}
	defer stop()
	attacker := newFairClient("127.0.0.1")
	codes := map[int]int{}
	var conns []*websocket.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	start := time.Now()
	for range *starts {
		attacker.fresh()
		code, token, err := attacker.startLecture(base)
		if err != nil {
			return err
		}
		codes[code]++
		if token != "" {
			if c, err := attacker.socketAt(base, "/ws/present/"+token); err == nil {
				conns = append(conns, c)
			}
		}
	}
	fmt.Printf("attacker 127.0.0.1: %d lectures asked in %v: status %v, %d presenter sockets open\n",
		*starts, time.Since(start).Round(time.Millisecond), codes, len(conns))
	victim := newFairClient("127.0.0.2")
	t0 := time.Now()
	code, token, err := victim.startLecture(base)
	if err != nil {
		return err
	}
	if token == "" {
		return fmt.Errorf("second address 127.0.0.2: POST /lecture %d (%v): no room for its lecture", code, time.Since(t0))
	}
	if code, _, err := victim.page(base + "/lecture/present/" + token); err != nil || code != http.StatusOK {
		return fmt.Errorf("second address 127.0.0.2: presenter's page %d %v", code, err)
	}
	c, err := victim.socketAt(base, "/ws/present/"+token)
	if err != nil {
		return fmt.Errorf("second address 127.0.0.2: presenter's socket: %w", err)
	}
	c.Close()
	fmt.Printf("second address 127.0.0.2: lecture started (303), presenter's page, socket and snapshot in %v\n", time.Since(t0).Round(time.Millisecond))
	ended := 0
	for _, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		for {
			_, b, err := c.ReadMessage()
			if err != nil {
				break
			}
			if strings.Contains(string(b), "more than its share") {
				ended++
				break
			}
		}
	}
	fmt.Printf("attacker's lectures told they ended for another client: %d\n", ended)
	return nil
}

// startLecture opens a playground page (a new run) and starts a lecture from it; it
// returns POST /lecture's status and, on 303, the presenter's token.
func (c *fairClient) startLecture(base string) (int, string, error) {
	code, id, err := c.page(base + "/play/bully?n=3")
	if err != nil {
		return 0, "", err
	}
	if code != http.StatusOK {
		return code, "", nil
	}
	noFollow := *c.http
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := noFollow.PostForm(base+"/lecture", url.Values{"session": {id}})
	if err != nil {
		return 0, "", err
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/lecture/present/") {
		return resp.StatusCode, "", nil
	}
	return resp.StatusCode, strings.TrimPrefix(loc, "/lecture/present/"), nil
}
