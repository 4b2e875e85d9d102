package e2e

import (
	"fmt"
	"net"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/teach-dist/playground/internal/testwait"
	"github.com/teach-dist/playground/runtime/lecture/natsbroker"
	"github.com/teach-dist/playground/web"
)

// startNATS runs Debian's nats-server on a free loopback port for one test and returns
// its URL; without it the test is skipped (as runtime/lecture/natsbroker's tests are).
func startNATS(t *testing.T) string {
	t.Helper()
	bin := ""
	for _, p := range []string{"nats-server", "/usr/sbin/nats-server", "/usr/bin/nats-server"} {
		if path, err := exec.LookPath(p); err == nil {
			bin = path
			break
		}
	}
	if bin == "" {
		t.Skip("nats-server is not installed (Debian: apt-get install nats-server)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "-a", "127.0.0.1", "-p", strconv.Itoa(port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	testwait.For(t, "nats-server taking connections on "+addr, func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return "nats://" + addr
}

// clusterServer is a playground server of a cluster behind the NATS at url.
func clusterServer(t *testing.T, url string) *httptest.Server {
	t.Helper()
	b, err := natsbroker.Connect(natsbroker.Options{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close) // after the server's: cleanups run last first
	srv := web.New(web.Options{Broker: b})
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Close()
		ts.Close()
	})
	return ts
}

// A lecture runs rules edited in the presenter's page on server A; a follower who
// joins through server B, which does not have the run, sees those rules in the
// pseudocode panel, not the Go algorithm's: the lecture's hello carries them.
func TestLectureFollowerOnAnotherServerSeesTheEditedRules(t *testing.T) {
	needBrowser(t)
	url := startNATS(t)
	a, b := clusterServer(t, url), clusterServer(t, url)

	pres := tab(t, a.URL, 1280, 720)
	run(t, pres, chromedp.Navigate(a.URL+"/play/ricart-agrawala?fresh=1"))
	ready(t, pres)
	run(t, pres, chromedp.Click(chromedp.CSS(`#rules-edit`)))
	waitFor(t, pres, `document.getElementById("rules-source").value.includes("def on_request(")`)
	run(t, pres, chromedp.Evaluate[chromedp.Void](`(() => {
		const ta = document.getElementById("rules-source");
		ta.value = ta.value
			.replace('rule("RA1", notes = "000", group = "Asking for the CS",\n         lines = ["state := REQUESTED", "T := clock   // the timestamp of this request"],',
				'rule("AS-1", group = "Asking for the CS",\n         lines = ["state := REQUESTED   // the lecture\'s own rule"],')
			.replace('ctx.rule("RA1")', 'ctx.rule("AS-1")');
		ta.dispatchEvent(new Event("input"));
	})()`))
	run(t, pres, chromedp.Click(chromedp.CSS(`#rules-run`)))
	waitFor(t, pres, `document.getElementById("rules-status").textContent === "Running your rules."`)
	run(t, pres, chromedp.Click(chromedp.CSS("#lecture-start")), chromedp.WaitVisible(chromedp.CSS("#lecture-code")))
	waitFor(t, pres, `location.pathname.startsWith("/lecture/present/") && document.getElementById("main")?.dataset.ready === "true"`)
	waitFor(t, pres, `/^[A-Z0-9]{3} [A-Z0-9]{3}$/.test(document.getElementById("lecture-code")?.textContent || "")`)
	code := strings.ReplaceAll(eval[string](t, pres, `document.getElementById("lecture-code").textContent`), " ", "")

	f := tab(t, b.URL, 1000, 700)
	run(t, f, chromedp.Navigate(b.URL+"/l/"+code))
	ready(t, f)
	waitFor(t, f, `document.querySelector('#code-scroll .rule[data-rule="AS-1"]') !== null`)
	got := eval[map[string]any](t, f, `(() => {
		const p = document.getElementById("code-scroll");
		return {
			lines: [...p.querySelectorAll('.rule[data-rule="AS-1"] .ln')].map((l) => l.textContent).join("|"),
			ra1: p.querySelectorAll('.rule[data-rule="RA1"]').length,
			rh1: p.querySelectorAll('.rule[data-rule="RH1"]').length,
			editor: document.getElementById("rules-edit") !== null,
		};
	})()`)
	if got["lines"] != "state := REQUESTED   // the lecture's own rule" || got["ra1"].(float64) != 0 || got["rh1"].(float64) != 1 || got["editor"] != false {
		t.Fatalf("the follower's panel on B: %v", got)
	}
	// The presenter asks for the CS: the follower on B sees the edited rule lit.
	run(t, pres, chromedp.Evaluate[chromedp.Void](`document.dispatchEvent(new CustomEvent("pg:command", {detail: {type: "act", do: "request", node: 0}}))`))
	waitFor(t, f, `document.querySelector('#code-scroll .rule[data-rule="AS-1"]').classList.contains("lit")`)
}
