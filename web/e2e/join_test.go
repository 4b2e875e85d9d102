package e2e

import (
	"net"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/teach-dist/playground/web"
)

// A presenter who opened the playground at a loopback address (the
// README's http://localhost:8080; here the test server's 127.0.0.1) is told plainly
// that students' phones cannot reach it, and is given this machine's network
// addresses instead: the join line, the big join view and the QR code all use the
// one chosen.
func TestLectureJoinWarnsOnLocalhostAndOffersNetworkAddresses(t *testing.T) {
	needBrowser(t)
	srv := web.New(web.Options{Interfaces: func() ([]net.Addr, error) {
		var out []net.Addr
		for _, c := range []string{"127.0.0.1/8", "192.168.1.20/24", "10.8.0.5/24"} {
			ip, n, _ := net.ParseCIDR(c)
			n.IP = ip
			out = append(out, n)
		}
		return out, nil
	}})
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Close()
		ts.Close()
	})
	port := ts.URL[strings.LastIndex(ts.URL, ":")+1:]
	pres := tab(t, ts.URL, 1280, 720)
	run(t, pres, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?n=3"))
	ready(t, pres)
	run(t, pres, chromedp.Click(chromedp.CSS("#lecture-start")), chromedp.WaitVisible(chromedp.CSS("#lecture-code")))
	waitFor(t, pres, `/^[A-Z0-9]{3} [A-Z0-9]{3}$/.test(document.getElementById("lecture-code")?.textContent || "")`)

	// The warning is on screen, above the run, and says why.
	warn := eval[string](t, pres, `(() => {
		const w = document.getElementById("lecture-join-warn");
		const r = w.getBoundingClientRect();
		return r.height > 0 && r.bottom <= innerHeight ? w.textContent : "not visible";
	})()`)
	if !strings.Contains(warn, "Students' phones cannot reach localhost") || !strings.Contains(warn, "--public-url") {
		t.Fatalf("the warning says %q", warn)
	}
	if got := eval[string](t, pres, `document.getElementById("lecture-join-host").textContent`); got != "10.8.0.5:"+port+"/join" {
		t.Fatalf("the join line says %q, want the first network address", got)
	}
	screenshot(t, pres, "lecture-join-warning.png")
	// It covers neither the stage nor the rule strip (a line of the bar), and OK puts it away.
	if covered := eval[string](t, pres, `(() => {
		const w = document.getElementById("lecture-join-warn").getBoundingClientRect();
		const meet = (r) => w.left < r.right && r.left < w.right && w.top < r.bottom && r.top < w.bottom;
		return [["the stage", "svg-wrap"], ["the rule strip", "rulestrip"]].filter(([, id]) => document.getElementById(id) && meet(document.getElementById(id).getBoundingClientRect())).map(([n]) => n).join(", ");
	})()`); covered != "" {
		t.Errorf("the warning covers %s", covered)
	}

	// Choosing the other address changes the join line and the QR code, which the server
	// draws for that address.
	run(t, pres, chromedp.SetValue(chromedp.CSS("#lecture-join-base"), "http://192.168.1.20:"+port),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("lecture-join-base").dispatchEvent(new Event("change"))`))
	waitFor(t, pres, `document.getElementById("lecture-join-host").textContent === "192.168.1.20:`+port+`/join"`)
	run(t, pres, chromedp.Click(chromedp.CSS("#lecture-join-btn")), chromedp.WaitVisible(chromedp.CSS("#lecture-qr")))
	waitFor(t, pres, `document.getElementById("lecture-qr").complete && document.getElementById("lecture-qr").naturalWidth > 0`)
	src := eval[string](t, pres, `document.getElementById("lecture-qr").getAttribute("src")`)
	if u, err := url.Parse(src); err != nil || u.Query().Get("base") != "http://192.168.1.20:"+port {
		t.Fatalf("the QR code is asked for %q", src)
	}
	if got := eval[string](t, pres, `document.querySelector(".lecture-big-url").textContent`); got != "http://192.168.1.20:"+port+"/join" {
		t.Fatalf("the big join view says %q", got)
	}
	screenshot(t, pres, "lecture-join-qr.png")
	run(t, pres, chromedp.KeyEvent(kb.Escape))
	waitFor(t, pres, `!document.getElementById("lecture-big").open`)
	run(t, pres, chromedp.Click(chromedp.CSS("#lecture-join-ok")))
	waitFor(t, pres, `document.getElementById("lecture-join-warn").getBoundingClientRect().height === 0`)
	if got := eval[string](t, pres, `document.getElementById("lecture-join-host").textContent`); got != "192.168.1.20:"+port+"/join" {
		t.Fatalf("after OK the join line says %q", got)
	}
}
