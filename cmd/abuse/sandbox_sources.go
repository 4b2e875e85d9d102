package main

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/cmd/internal/procfs"
	"github.com/teach-dist/playground/runtime/protocol"
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

// sourceScenario is a three-process Ricart-Agrawala run of source in which P0 and P1
// ask for the CS at the first step.
func sourceScenario(source string) map[string]any {
	return map[string]any{"version": 1, "algorithm": "ricart-agrawala", "nodes": 3, "seed": 1, "source": source,
		"events": []map[string]any{{"at": 1, "do": "request", "node": 0}, {"at": 1, "do": "request", "node": 1}}}
}

// resetFrame is the page's Run with source.
func resetFrame(source string) []byte {
	b, _ := json.Marshal(map[string]any{"type": "reset", "ref": 1, "scenario": sourceScenario(source)})
	return b
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

// frame is what the sandbox attacks read of a server frame.
type frame struct {
	Type, Code, Error, Stopped string
	Ref                        int64
	raw                        []byte
}

// readFrame reads conn until a frame of one of types, within d.
func readFrame(conn *websocket.Conn, d time.Duration, types ...string) (frame, error) {
	_ = conn.SetReadDeadline(time.Now().Add(d))
	defer conn.SetReadDeadline(time.Time{})
	for {
		_, b, err := conn.ReadMessage()
		if err != nil {
			return frame{}, err
		}
		var f frame
		_ = json.Unmarshal(b, &f)
		f.raw = b
		if slices.Contains(types, f.Type) {
			return f, nil
		}
	}
}

// playSource opens a new run as c (without its cookies: a reload would resume the
// last one), makes it run source (the page's Edit rules → Run) and
// returns its session id and socket, read up to the new run's snapshot.
func playSource(c *fairClient, base, source string) (string, *websocket.Conn, error) {
	c.fresh()
	code, id, err := c.page(base + "/play/ricart-agrawala?n=3")
	if err != nil || code != http.StatusOK {
		return "", nil, fmt.Errorf("page: %d %v", code, err)
	}
	conn, err := c.socket(base, id)
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
	if err := conn.WriteMessage(websocket.TextMessage, resetFrame(source)); err != nil {
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

// startLectureAs starts a lecture from a new run as c and returns its join code and
// the presenter's socket.
func startLectureAs(c *fairClient, base string) (string, *websocket.Conn, error) {
	c.fresh()
	code, id, err := c.page(base + "/play/ricart-agrawala?n=3")
	if err != nil || code != http.StatusOK {
		return "", nil, fmt.Errorf("page: %d %v", code, err)
	}
	nc := *c.http
	nc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := nc.PostForm(base+"/lecture", url.Values{"session": {id}})
	if err != nil {
		return "", nil, err
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if !strings.HasPrefix(loc, "/lecture/present/") {
		return "", nil, fmt.Errorf("POST /lecture: %d %q", resp.StatusCode, loc)
	}
	p, _, err := c.ws.Dial("ws"+strings.TrimPrefix(base, "http")+"/ws/present/"+strings.TrimPrefix(loc, "/lecture/present/"), http.Header{"Origin": {base}})
	if err != nil {
		return "", nil, err
	}
	for {
		_ = p.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, b, err := p.ReadMessage()
		if err != nil {
			p.Close()
			return "", nil, err
		}
		if fr, err := protocol.Decode(b); err == nil {
			if l, ok := fr.(*protocol.PresenterLecture); ok && l.Code != "" {
				_ = p.SetReadDeadline(time.Time{})
				drain(p)
				return l.Code, p, nil
			}
		}
	}
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
