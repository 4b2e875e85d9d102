package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/teach-dist/playground/algorithms/starlarkalg"
	"github.com/teach-dist/playground/internal/testwait"
	"github.com/teach-dist/playground/runtime/sandbox"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/scenarios"
	"github.com/teach-dist/playground/web/export"
	"github.com/teach-dist/playground/web/gate"
	"github.com/teach-dist/playground/web/ratelimit"
)

// The attacks of students' sources on the server (docs/security.md, "Students'
// sources"), at CI scale: real HTTP and WebSocket clients over loopback, a sandbox
// with small limits so that each bound is reached quickly. The server runs in this
// process, so its resident memory is the test process's.

// abuseSource is the smallest source that loads, with extra appended: its top level
// runs at load time, in whatever loads it.
func abuseSource(extra string) string {
	return `title = "Abuse"
family = "mutex"
rules = [rule("A-1", lines = ["do it"], says = "does it")]
messages = [message("PING", "PING")]

def init(setup):
    return {}
` + extra
}

// The bombs of the issue, each at the top level of a source, so that loading the
// source runs it: a link's GET, a reset frame (the page's or a follower's) all load.
var sourceBombs = []struct{ name, code string }{
	// One builtin call asks for about 105 GB.
	{"zip", "z = zip(*([range(65536)] * 100000))\n"},
	// 3,500 lists of 65,536 elements: 3.8 GB, each list one uncharged call.
	{"lists", "keep = [list(range(65536)) for i in range(3500)]\n"},
	// max() over a million elements, 50,000 times: minutes of CPU.
	{"max over a range", "big = list(range(65536)) * 15\nspin = [max(big) for i in range(50000)]\n"},
}

// cpuHandler makes a process's request (resetWithSource's events) take minutes of
// CPU, unless something stops it; the source loads at once.
const cpuHandler = `
def on_request(ctx, s):
    big = list(range(65536)) * 15
    for i in range(50000):
        max(big)
`

// boundRE is how the server words a bound a source hit: the sandbox's ("it used more
// than the 256 MiB of memory the sandbox allows", "the sandbox stopped it after 1s")
// or the interpreter's own ("more than 200000 steps", "... more than the 65536
// allowed").
var boundRE = regexp.MustCompile(`more than|stopped it`)

// smallSandbox is a pool sized for CI: a worker may hold 256 MiB and a call may take
// limit. Its workers run at the test's own priority: at a lower one, a machine busy
// with other work could starve an ordinary load past its deadline. It is closed after
// the test's server.
func smallSandbox(t *testing.T, limit time.Duration) *sandbox.Pool {
	t.Helper()
	return newSandbox(t, sandbox.Options{Workers: 2, Share: 1, Memory: 256 << 20, CallTimeout: limit, Nice: -1})
}

func newSandbox(t *testing.T, opts sandbox.Options) *sandbox.Pool {
	t.Helper()
	box := sandbox.New(opts)
	t.Cleanup(func() {
		box.Close()
		scenarios.UseSourceLoader(sandbox.Default()) // as any other test's server leaves it
	})
	return box
}

// vmRSS is this process's resident memory in bytes (/proc/self/status VmRSS).
func vmRSS(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("VmRSS %q: %v", v, err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// rssGrowth fails t if this process's resident memory grew by more than bound since
// before.
func rssGrowth(t *testing.T, before, bound int64, what string) {
	t.Helper()
	after := vmRSS(t)
	t.Logf("%s: RSS %d MiB before, %d MiB after", what, before>>20, after>>20)
	if after-before > bound {
		t.Errorf("%s: RSS grew by %d MiB (from %d MiB), more than %d MiB", what, (after-before)>>20, before>>20, bound>>20)
	}
}

// linkOfSource is a link to a run of source at step 3, made without loading the
// source in this process (Link.Path validates, so loads).
func linkOfSource(t *testing.T, source string) string {
	t.Helper()
	doc, err := json.Marshal(map[string]any{"scenario": map[string]any{"version": 1, "algorithm": "ricart-agrawala",
		"nodes": 3, "seed": 1, "source": source}, "step": 3, "defaults": sim.DefaultsEpoch})
	if err != nil {
		t.Fatal(err)
	}
	return "/r/" + deflatedCode(3, "ricart-agrawala", string(doc))
}

// stillServes checks the server after an attack: a Go algorithm's page, socket,
// snapshot and steps, and a template's rules run on a page (the sandbox serves again).
func stillServes(t *testing.T, rig *lectureRig) {
	t.Helper()
	c := dial(t, rig.ts, openSession(t, rig.ts, "/play/bully?n=3"))
	c.next("snapshot")
	c.send(`{"type":"step"}`)
	if f := c.next("events", "state", "error"); f.Type == "error" {
		t.Fatalf("a Go algorithm's step after the attack: %s", f.raw)
	}
	template, _ := starlarkalg.Template("ricart-agrawala")
	c = dial(t, rig.ts, openSession(t, rig.ts, "/play/ricart-agrawala?n=3"))
	c.next("snapshot")
	c.send(resetWithSource(t, template+"\n# "+t.Name()+" after the attack\n"))
	if f := c.next("hello", "error"); f.Type != "hello" {
		t.Fatalf("a template's rules after the attack: %s", f.raw)
	}
	c.next("snapshot")
	c.send(`{"type":"step"}`)
	if f := c.next("events", "state", "error"); f.Type == "error" {
		t.Fatalf("a template's step after the attack: %s", f.raw)
	}
}

// Each bomb of the issue, by each of the three routes a source reaches the server
// (a link's GET, the page's reset frame after Edit rules → Run, a lecture follower's
// reset frame with only the public join code): the attacker is told the bound its
// source hit, the server's memory stays put and it serves pages, Go algorithms and
// templates afterwards. Before the sandbox the zip bomb killed the process (fatal out
// of memory), the lists took it past 3 GB, and the max loop held it for minutes.
func TestSourceBombsLeaveTheServerUp(t *testing.T) {
	box := smallSandbox(t, time.Second)
	rig := startLecture(t, Options{Sandbox: box}, "/play/ricart-agrawala?n=3")
	follower := rig.follow(t, 0)
	newStream(t, follower).catchUp()
	page := dial(t, rig.ts, openSession(t, rig.ts, "/play/ricart-agrawala?n=3"))
	page.next("snapshot")
	before := vmRSS(t)

	routes := []struct {
		name   string
		attack func(t *testing.T, source string) string // what the attacker is told
	}{
		{"link", func(t *testing.T, source string) string {
			p := get(t, browser(t), rig.ts.URL+linkOfSource(t, source))
			if p.status != http.StatusBadRequest {
				t.Errorf("status %d, want 400", p.status)
			}
			return p.body
		}},
		{"page's reset", func(t *testing.T, source string) string {
			page.send(resetWithSource(t, source))
			f := page.next("hello", "error")
			if f.Code != "bad-scenario" {
				t.Errorf("frame %.300s, want a bad-scenario error", f.raw)
			}
			return f.Error
		}},
		{"follower's reset", func(t *testing.T, source string) string {
			follower.send(resetWithSource(t, source))
			f := follower.next("error")
			if f.Code != "bad-scenario" {
				t.Errorf("frame %.300s, want a bad-scenario error", f.raw)
			}
			return f.Error
		}},
	}
	for _, bomb := range sourceBombs {
		for _, route := range routes {
			t.Run(bomb.name+" by "+route.name, func(t *testing.T) {
				// A comment makes each source new to the server's cache of loads.
				told := route.attack(t, abuseSource(bomb.code+"# "+t.Name()+"\n"))
				loc := boundRE.FindStringIndex(told)
				if loc == nil {
					t.Fatalf("the attacker was told %.400q, not the bound its source hit", told)
				}
				t.Logf("told: …%s…", told[max(loc[0]-120, 0):min(loc[1]+80, len(told))])
			})
		}
	}
	rssGrowth(t, before, 300<<20, "nine bombs")
	stillServes(t, rig)
}

// Five links whose sources keep 100 MiB each in a global: each opens or says the
// memory bound, and the server's memory stays put (before the sandbox the loads' cache
// held them all: 20 MiB to 521 MiB).
func TestSourcesKeepingMemoryStayOutOfTheServer(t *testing.T) {
	box := smallSandbox(t, 2*time.Second)
	rig := startLecture(t, Options{Sandbox: box}, "/play/ricart-agrawala?n=3")
	before := vmRSS(t)
	for k := range 5 {
		src := abuseSource(fmt.Sprintf("keep = [list(range(65536)) for i in range(100)]\n# %s %d\n", t.Name(), k))
		p := get(t, browser(t), rig.ts.URL+linkOfSource(t, src))
		if p.status != http.StatusOK && (p.status != http.StatusBadRequest || !boundRE.MatchString(p.body)) {
			t.Errorf("link %d: status %d, want the page or the bound: %.300s", k, p.status, p.body)
		}
	}
	rssGrowth(t, before, 300<<20, "five links keeping 100 MiB each")
	stillServes(t, rig)
}

// Sessions whose source takes minutes of CPU a step keep the sandbox's workers busy
// while they are watched; once their sockets close, the workers are idle within 5 s
// (each call ends at the sandbox's deadline, and runs nobody watches do not step).
// Before the sandbox each step ran for about 100 s in the server and carried on after
// the attacker left.
func TestCPUHeavySourcesLeaveThePoolIdleWhenTheirSocketsClose(t *testing.T) {
	// The interpreter's own bounds (its units of work, the worker's CPU watchdog) would
	// end each call within milliseconds: lifted, so that the sandbox's deadline is
	// what ends them, as it must for whatever the interpreter does not count.
	box := newSandbox(t, sandbox.Options{Workers: 2, Share: 1, Memory: 256 << 20, CallTimeout: time.Second,
		Nice: -1, Steps: 1 << 50, CallCPU: time.Hour})
	_, ts := newTestServer(t, Options{Sandbox: box})
	var attackers []*wsClient
	for k := range 4 {
		c := dial(t, ts, openSession(t, ts, "/play/ricart-agrawala?n=3"))
		c.next("snapshot")
		c.send(resetWithSource(t, abuseSource(cpuHandler+fmt.Sprintf("# %s\n", t.Name()))))
		if f := c.next("hello", "error"); f.Type != "hello" {
			t.Fatalf("session %d: the source did not load: %s", k, f.raw)
		}
		c.next("snapshot")
		attackers = append(attackers, c)
	}
	// Four requests that take minutes each, for two workers: two run, two wait.
	for _, c := range attackers {
		c.send(`{"type":"play"}`)
	}
	testwait.For(t, "the workers running the attacker's steps", func() bool {
		_, busy := box.Workers()
		return busy > 0
	})
	for _, c := range attackers {
		c.conn.Close()
	}
	testwait.Within(t, 5*time.Second, "the sandbox idle after the attacker's sockets closed", func() bool {
		_, busy := box.Workers()
		return busy == 0
	})
}

// Two Checks of a source whose handler takes minutes, cancelled by their client (the
// dialog's Cancel aborts the request), free both explorer slots at once: a third
// client's Check of a Go algorithm, waiting for a slot, starts within 1 s of the
// cancel. Before the sandbox the cancelled searches ran on for 7 minutes, holding the
// slots.
func TestCancelledChecksOfASourceFreeTheirSlots(t *testing.T) {
	clientIP, err := ratelimit.ClientIP("X-Real-IP=127.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	box := smallSandbox(t, 2*time.Second)
	_, ts := newTestServer(t, Options{Sandbox: box, ClientIP: clientIP,
		Explore: ExploreLimits{AtOnce: 2, Share: 1, MaxStates: 1 << 40, Timeout: time.Hour}})
	template, _ := starlarkalg.Template("ricart-agrawala")
	slow := strings.Replace(template, "def on_request(ctx, s):\n", "def on_request(ctx, s):\n    burn()\n", 1)
	if slow == template {
		t.Fatal("the template has no on_request to slow down")
	}
	slow += "\ndef burn():\n    big = list(range(65536)) * 15\n    for i in range(50000):\n        max(big)\n# " + t.Name() + "\n"

	const attacker, student = "192.0.2.66", "198.51.100.7"
	var cancels []context.CancelFunc
	for range 2 {
		id := openSession(t, ts, "/play/ricart-agrawala?n=3")
		c := dial(t, ts, id)
		c.next("snapshot")
		c.send(resetWithSource(t, slow))
		if f := c.next("hello", "error"); f.Type != "hello" {
			t.Fatalf("the slow source did not load: %s", f.raw)
		}
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/api/sessions/"+id+"/explore", nil)
		req.Header.Set("X-Real-IP", attacker)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		var l exploreLine
		for dec := json.NewDecoder(resp.Body); l.Type != "start"; {
			if err := dec.Decode(&l); err != nil {
				t.Fatalf("the attacker's Check ended before it started: %v", err)
			}
		}
		cancels = append(cancels, cancel)
	}
	mine := streamExplore(t, ts, openSession(t, ts, "/play/ricart-agrawala?n=3"), student)
	if first := nextLine(t, mine, "queued", "start"); first.Type == "queued" {
		for _, cancel := range cancels {
			cancel()
		}
		deadline := time.Now().Add(time.Second)
		for l := (exploreLine{}); l.Type != "start"; {
			l = testwait.RecvWithin(t, time.Until(deadline), "the third client's Check starting after the cancel", mine)
			if l.Type == "" || l.Type == "result" || l.Type == "error" {
				t.Fatalf("the third client's Check before it started: %+v", l)
			}
		}
	} else {
		t.Log("the attacker's searches had ended by themselves: no slot was held")
	}
	if l := nextLine(t, mine, "result", "error"); l.Type != "result" || l.Result.Result != "ok" {
		t.Fatalf("the third client's Check: %+v", l)
	}
}

// Opening a link replays its run to the link's step, each step of a source one call to
// a sandbox worker; the replay stops at the exports' time limit (--export-timeout) or
// when the client goes away, so a long link of a slow source cannot keep the workers
// busy after its visitor has given up. Here the limit has passed before the first step:
// the page says the run cannot be replayed, and the same link with a limit opens.
func TestLinkReplayOfASourceStopsAtItsDeadline(t *testing.T) {
	template, _ := starlarkalg.Template("ricart-agrawala")
	source := template + "\n# " + t.Name() + "\n"
	zero, one := 0, 1
	sc := &scenarios.Scenario{Version: 1, Algorithm: "ricart-agrawala", Nodes: 3, Seed: 1, Source: source,
		Events: []scenarios.Event{{At: 1, Do: "request", Node: &zero}, {At: 1, Do: "request", Node: &one}}}
	for _, c := range []struct {
		name    string
		timeout time.Duration
		status  int
		says    string
	}{
		{"past its deadline", time.Nanosecond, http.StatusBadRequest, "cannot be replayed"},
		{"within its deadline", time.Minute, http.StatusOK, `id="rules-edit"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			box := smallSandbox(t, 2*time.Second)
			_, ts := newTestServer(t, Options{Sandbox: box, Exports: export.Options{Gate: gate.Limits{Timeout: c.timeout}}})
			p, err := (scenarios.Link{Scenario: sc, Step: 20}).Path()
			if err != nil {
				t.Fatal(err)
			}
			page := get(t, browser(t), ts.URL+p)
			if page.status != c.status || !strings.Contains(page.body, c.says) {
				t.Fatalf("status %d, want %d saying %q: %.400s", page.status, c.status, c.says, page.body)
			}
			if _, busy := box.Workers(); busy != 0 {
				t.Fatalf("%d workers still busy after the page", busy)
			}
		})
	}
}
