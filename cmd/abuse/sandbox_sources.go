package main

import (
	"bytes"
	"compress/flate"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/algorithms/starlarkalg"
	"github.com/teach-dist/playground/cmd/internal/browser"
	"github.com/teach-dist/playground/cmd/internal/procfs"
	"github.com/teach-dist/playground/runtime/sim"
)

// The sources of the sandbox attacks (docs/security.md, "Students' sources"): the
// bombs of the issue, a source whose handler takes minutes of CPU, and one that keeps
// memory in a global.

// abuseSource is the smallest source that loads, with extra appended.
func abuseSource(extra string) string {
	return `title = "Abuse"
family = "mutex"
rules = [rule("A-1", lines = ["do it"], says = "does it")]
messages = [message("PING", "PING")]

def init(setup):
    return {}
` + extra
}

// sandboxBombs run at a source's top level, so loading the source runs them.
var sandboxBombs = []struct{ name, code string }{
	{"zip", "z = zip(*([range(65536)] * 100000))\n"},                                    // ~105 GB in one call
	{"lists", "keep = [list(range(65536)) for i in range(3500)]\n"},                     // 3.8 GB of lists
	{"max", "big = list(range(65536)) * 15\nspin = [max(big) for i in range(50000)]\n"}, // minutes of CPU
}

// burn takes minutes of CPU (max() over a million elements, again and again) unless
// something stops it: the body of a handler.
const burn = "    big = list(range(65536)) * 15\n    for i in range(50000):\n        max(big)\n"

// cpuSource's request handler burns.
func cpuSource(tag string) string {
	return abuseSource("\ndef on_request(ctx, s):\n" + burn + "# " + tag + "\n")
}

// playSlow opens a run as c of the Ricart-Agrawala template whose request handler
// burns first: a search of it holds its explorer slot until something stops it. It
// returns the run's session id and socket.
func playSlow(c *browser.Client, tag string) (string, *websocket.Conn, error) {
	src, _ := starlarkalg.Template("ricart-agrawala")
	slow := strings.Replace(src, "def on_request(ctx, s):\n", "def on_request(ctx, s):\n    burn()\n", 1)
	if slow == src {
		return "", nil, errors.New("the template has no on_request to slow down")
	}
	return playSource(c, slow+"\ndef burn():\n"+burn+fmt.Sprintf("# %s %d\n", tag, time.Now().UnixNano()))
}

// sourceScenario is a three-process Ricart-Agrawala run of source in which P0 and P1
// ask for the CS at the first step.
func sourceScenario(source string) map[string]any {
	return map[string]any{"version": 1, "algorithm": "ricart-agrawala", "nodes": 3, "seed": 1, "source": source,
		"events": []map[string]any{{"at": 1, "do": "request", "node": 0}, {"at": 1, "do": "request", "node": 1}}}
}

// resetFrame is the page's Run with source.
func resetFrame(source string) string {
	b, _ := json.Marshal(map[string]any{"type": "reset", "ref": 1, "scenario": sourceScenario(source)})
	return string(b)
}

// sourceLink is the path of a share link to a run of source at step 3, encoded here
// without loading the source (a link's own encoder validates it, so loads it).
func sourceLink(source string) string {
	doc, _ := json.Marshal(map[string]any{"scenario": sourceScenario(source), "step": 3, "defaults": sim.DefaultsEpoch})
	var buf bytes.Buffer
	zw, _ := flate.NewWriter(&buf, flate.BestCompression) // the level is valid
	_, _ = zw.Write(doc)
	_ = zw.Close()
	return "/r/v3.ricart-agrawala." + base64.RawURLEncoding.EncodeToString(buf.Bytes())
}

// playSource opens a new run as c (without its cookies: a reload would resume the last
// one), makes it run source (the page's Edit rules, then Run) and returns its session
// id and socket, read up to the new run's snapshot.
func playSource(c *browser.Client, source string) (string, *websocket.Conn, error) {
	id, err := c.Run("/play/ricart-agrawala?n=3")
	if err != nil {
		return "", nil, err
	}
	conn, err := c.Socket("/ws/" + id)
	if err != nil {
		return "", nil, err
	}
	if err := restart(conn, source); err != nil {
		conn.Close()
		return "", nil, err
	}
	return id, conn, nil
}

// restart sends the reset frame of source on conn and reads up to the new run's
// snapshot.
func restart(conn *websocket.Conn, source string) error {
	if err := send(conn, resetFrame(source)); err != nil {
		return err
	}
	for {
		f, err := readFrame(conn, time.Minute, "hello", "error")
		if err != nil {
			return fmt.Errorf("the source: %w", err)
		}
		if f.Type == "error" && f.Ref == 1 {
			return fmt.Errorf("the source: %s", f.Error)
		}
		if f.Type == "hello" {
			break
		}
		// an error of the run before (run-stopped), not the reset's answer
	}
	if _, err := readFrame(conn, time.Minute, "snapshot"); err != nil {
		return fmt.Errorf("the source: %w", err)
	}
	return nil
}

// openLink opens the share link of a run of source as c: its status, and what its page
// says is wrong with the link (when it is an error page).
func openLink(ctx context.Context, c *browser.Client, source string) (int, string, error) {
	resp, err := c.Get(ctx, sourceLink(source))
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, linkReason(string(body)), err
}

var reasonRE = regexp.MustCompile(`<p class="reason">([^<]*)</p>`)

// linkReason is what an error page says is wrong with a link.
func linkReason(body string) string {
	if m := reasonRE.FindStringSubmatch(body); m != nil {
		return html.UnescapeString(m[1])
	}
	return "(no reason on the page)"
}

// rssOf is the resident memory of pids together, in MiB (VmRSS).
func rssOf(pids []int) int {
	var total int64
	for _, pid := range pids {
		b, _ := procfs.Memory(pid, "VmRSS")
		total += b
	}
	return int(total >> 20)
}

// short cuts a message for a line of output.
func short(s string) string {
	if len(s) > 140 {
		return s[:140] + "…"
	}
	return s
}
