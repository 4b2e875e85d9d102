package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// axeSource is axe-core's script, as npm ci installs it at the version that
// package-lock.json pins: read from node_modules and evaluated in the page under test.
// The server never serves it and nothing is fetched when a test runs.
var axeSource = sync.OnceValues(func() (string, error) {
	b, err := os.ReadFile(filepath.Join("..", "..", "node_modules", "axe-core", "axe.min.js"))
	return string(b), err
})

// axeTags are the rules the conformance report claims: WCAG 2.0 and 2.1, levels A and AA.
const axeTags = `["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]`

type axeNode struct {
	Target  []any  `json:"target"`
	HTML    string `json:"html"`
	Summary string `json:"failureSummary"`
}

type axeViolation struct {
	ID    string    `json:"id"`
	Help  string    `json:"help"`
	Nodes []axeNode `json:"nodes"`
}

// axeViolations runs axe-core over the page as it is now and returns its violations.
func axeViolations(t *testing.T, ctx context.Context) []axeViolation {
	t.Helper()
	src, err := axeSource()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("axe-core is not installed (npm ci): %v", err)
		}
		t.Skipf("axe-core is not installed (run npm ci): %v", err)
	}
	if !eval[bool](t, ctx, `typeof window.axe === "object"`) {
		eval[bool](t, ctx, src+"\n;true")
	}
	js := `axe.run(document, {runOnly: {type: "tag", values: ` + axeTags + `}, resultTypes: ["violations"]})
		.then((r) => JSON.stringify(r.violations.map((v) => ({id: v.id, help: v.help,
			nodes: v.nodes.map((n) => ({target: n.target, html: n.html.slice(0, 160), failureSummary: n.failureSummary}))}))))`
	raw := eval[string](t, ctx, js, chromedp.EvalAwaitPromise)
	var vs []axeViolation
	if err := json.Unmarshal([]byte(raw), &vs); err != nil {
		t.Fatal(err)
	}
	return vs
}

// wantNoAxeViolations fails the test with every violation axe-core finds on the page,
// named by the state it is in.
func wantNoAxeViolations(t *testing.T, ctx context.Context, state string) {
	t.Helper()
	for _, v := range axeViolations(t, ctx) {
		var b strings.Builder
		for _, n := range v.Nodes {
			fmt.Fprintf(&b, "\n    %v %s\n      %s", n.Target, n.HTML, strings.ReplaceAll(n.Summary, "\n", "\n      "))
		}
		t.Errorf("%s: axe %s (%s), %d nodes:%s", state, v.ID, v.Help, len(v.Nodes), b.String())
	}
	// Parsing (WCAG 4.1.1): no id is given twice, so every reference by id (labels,
	// aria-labelledby, aria-controls) names one element.
	if dup := eval[[]string](t, ctx, `(() => { const seen = new Set(), dup = []; for (const e of document.querySelectorAll("[id]")) { if (seen.has(e.id)) dup.push(e.id); seen.add(e.id); } return dup; })()`); len(dup) > 0 {
		t.Errorf("%s: ids given twice: %v", state, dup)
	}
	// No image of text (WCAG 1.4.5): the only raster or SVG image a page shows is the
	// lecture's QR code; every text is text.
	if imgs := eval[[]string](t, ctx, `[...document.querySelectorAll("img, [style*='background-image']")].filter((e) => e.id !== "lecture-qr").map((e) => e.outerHTML.slice(0, 80))`); len(imgs) > 0 {
		t.Errorf("%s: images that may hold text: %v", state, imgs)
	}
}

// Every page and state a student or an instructor meets, checked by axe-core against
// WCAG 2.1 A and AA: none may have a violation.
func TestAxeEveryPageAndState(t *testing.T) {
	needBrowser(t)
	if _, err := axeSource(); err != nil && os.Getenv("CI") == "" {
		t.Skipf("axe-core is not installed (run npm ci): %v", err)
	}
	ts := server(t)

	t.Run("catalogue, join, compare", func(t *testing.T) {
		ctx := tab(t, ts.URL, 1280, 800)
		run(t, ctx, chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`a[href="/compare"]`)))
		wantNoAxeViolations(t, ctx, "catalogue")
		run(t, ctx, chromedp.Navigate(ts.URL+"/join"), chromedp.WaitVisible(chromedp.CSS("#join-code")))
		wantNoAxeViolations(t, ctx, "join")
		run(t, ctx, chromedp.Navigate(ts.URL+"/compare?alg=ricart-agrawala&n=3-5&workload=light&seeds=1"), chromedp.WaitVisible(chromedp.CSS(`svg.chart`)))
		wantNoAxeViolations(t, ctx, "compare")
	})

	t.Run("play", func(t *testing.T) {
		ctx := tab(t, ts.URL, 1280, 800)
		run(t, ctx, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?n=4"))
		ready(t, ctx)
		wantNoAxeViolations(t, ctx, "play, idle")
		run(t, ctx, chromedp.KeyEvent("?"))
		waitFor(t, ctx, `document.getElementById("help").open && document.getElementById("sc-settings") !== null`)
		wantNoAxeViolations(t, ctx, "play, keyboard help and shortcut settings open")
		run(t, ctx, chromedp.KeyEvent(kb.Escape))
		waitFor(t, ctx, `!document.getElementById("help").open`)
		clickProcessAction(t, ctx, 0, "request")
		clickProcessAction(t, ctx, 2, "request")
		for range 4 {
			run(t, ctx, chromedp.Click(chromedp.CSS("#btn-step")))
		}
		waitFor(t, ctx, `Number(document.getElementById("main").dataset.step) >= 4 && document.querySelectorAll("#msgs .msg").length > 0`)
		wantNoAxeViolations(t, ctx, "play, mid-run")
		run(t, ctx, chromedp.Click(chromedp.CSS(`#view .node[data-index="1"]`)))
		waitFor(t, ctx, `!document.getElementById("menu").hidden`)
		wantNoAxeViolations(t, ctx, "play, a process's menu open")
		run(t, ctx, chromedp.KeyEvent(kb.Escape))
		run(t, ctx, chromedp.Click(chromedp.CSS("#theme-toggle")))
		waitFor(t, ctx, `document.documentElement.dataset.theme === "dark"`)
		wantNoAxeViolations(t, ctx, "play, mid-run, dark theme")
		run(t, ctx, chromedp.Click(chromedp.CSS("#theme-toggle")))
		waitFor(t, ctx, `document.documentElement.dataset.theme !== "dark"`)
		run(t, ctx, chromedp.Click(chromedp.CSS("#st-toggle")))
		waitFor(t, ctx, `document.getElementById("spacetime").dataset.state === "ready"`)
		wantNoAxeViolations(t, ctx, "play, space-time diagram open")
		run(t, ctx, chromedp.Click(chromedp.CSS("#rules-edit")))
		waitFor(t, ctx, `!document.getElementById("rules-editor").hidden`)
		wantNoAxeViolations(t, ctx, "play, editor open")
	})

	t.Run("curated scenario and challenge", func(t *testing.T) {
		ctx := tab(t, ts.URL, 1280, 800)
		run(t, ctx, chromedp.Navigate(ts.URL+"/s/bully-best-case"))
		ready(t, ctx)
		for range 40 {
			if eval[bool](t, ctx, `!document.getElementById("caption").hidden`) {
				break
			}
			before := eval[int](t, ctx, `Number(document.getElementById("main").dataset.step)`)
			run(t, ctx, chromedp.Click(chromedp.CSS("#btn-step")))
			waitFor(t, ctx, fmt.Sprintf(`Number(document.getElementById("main").dataset.step) > %d`, before))
		}
		waitFor(t, ctx, `!document.getElementById("caption").hidden`)
		wantNoAxeViolations(t, ctx, "curated scenario with a caption")
		run(t, ctx, chromedp.Navigate(ts.URL+"/s/challenge-ra-tie-break"))
		ready(t, ctx)
		waitFor(t, ctx, `!document.getElementById("challenge").hidden`)
		wantNoAxeViolations(t, ctx, "challenge")
	})

	t.Run("lecture", func(t *testing.T) {
		pres := tab(t, ts.URL, 1280, 800)
		run(t, pres, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?n=4"))
		ready(t, pres)
		run(t, pres, chromedp.Click(chromedp.CSS("#lecture-start")), chromedp.WaitVisible(chromedp.CSS("#lecture-code")))
		waitFor(t, pres, `location.pathname.startsWith("/lecture/present/") && document.getElementById("main")?.dataset.ready === "true"`)
		waitFor(t, pres, `/^[A-Z0-9]{3} [A-Z0-9]{3}$/.test(document.getElementById("lecture-code")?.textContent || "")`)
		code := strings.ReplaceAll(eval[string](t, pres, `document.getElementById("lecture-code").textContent`), " ", "")
		wide := tab(t, ts.URL, 1280, 800)
		run(t, wide, chromedp.Navigate(ts.URL+"/l/"+code))
		ready(t, wide)
		phone := freshTab(t, 390, 844)
		run(t, phone, chromedp.Navigate(ts.URL+"/l/"+code))
		ready(t, phone)
		run(t, pres, chromedp.KeyEvent("q"))
		waitFor(t, pres, `document.getElementById("lecture-pick")?.open && document.querySelectorAll(".lecture-pick-item").length > 0`)
		wantNoAxeViolations(t, pres, "presenter, question list")
		run(t, pres, chromedp.KeyEvent("1"))
		waitFor(t, pres, `document.getElementById("lecture-q")?.dataset.state === "open"`)
		wantNoAxeViolations(t, pres, "presenter, question open")
		for _, f := range []struct {
			ctx  context.Context
			name string
		}{{wide, "follower at 1280x800"}, {phone, "follower at 390x844"}} {
			waitFor(t, f.ctx, `document.getElementById("lecture-q")?.dataset.state === "open" && document.querySelectorAll(".lecture-choice-btn").length >= 2`)
			wantNoAxeViolations(t, f.ctx, f.name+", question open")
		}
	})

	t.Run("320 CSS px wide", func(t *testing.T) {
		ctx := tab(t, ts.URL, 320, 640)
		run(t, ctx, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?n=4"))
		ready(t, ctx)
		wantNoAxeViolations(t, ctx, "play at 320 px")
		run(t, ctx, chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`a[href="/compare"]`)))
		wantNoAxeViolations(t, ctx, "catalogue at 320 px")
	})
}

// contrastJS lists every process and message colour, and every ring, pill and legend
// chip drawn, whose contrast with the stage's panel is under 3:1 (WCAG 1.4.11), and
// every text of the drawing under 4.5:1 on what it is drawn over (1.4.3: axe does not
// measure SVG text), in the theme the page is in.
const contrastJS = `(() => {
  const probe = document.createElement("span");
  document.body.append(probe);
  const rgb = (c) => { probe.style.color = c; const m = getComputedStyle(probe).color.match(/[\d.]+/g).map(Number); return m.slice(0, 3); };
  const lum = ([r, g, b]) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }; return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const ratio = (a, b) => { const [x, y] = [lum(rgb(a)), lum(rgb(b))].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  const panel = getComputedStyle(document.querySelector(".panel.stage")).backgroundColor;
  const root = getComputedStyle(document.documentElement);
  const low = [];
  const check = (what, c, against) => { const r = ratio(c, against); if (r < 3) low.push(what + " " + c + " on " + against + ": " + r.toFixed(2)); };
  for (const v of ["p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "m0", "m1", "m2", "m3", "m4", "m5", "m6"]) check("--" + v, root.getPropertyValue("--" + v).trim(), panel);
  for (const b of document.querySelectorAll("#view .node .body")) {
    const s = getComputedStyle(b);
    check("ring of P" + b.closest(".node").dataset.id, s.stroke, panel);
  }
  for (const r of document.querySelectorAll("#view .msg rect")) check("pill " + r.parentElement.dataset.type, getComputedStyle(r).fill, panel);
  for (const c of document.querySelectorAll(".legend .msg-chip:not(.app)")) check("legend chip", getComputedStyle(c).backgroundColor, panel);
  // The drawing's text, out of axe's reach: 4.5:1 on what it is drawn over.
  let texts = 0;
  for (const x of document.querySelectorAll("#view text")) {
    if (!x.textContent.trim() || x.getBBox().width === 0) continue;
    const s = getComputedStyle(x);
    if (s.display === "none" || s.visibility === "hidden" || Number(s.opacity) === 0) continue;
    const msg = x.closest(".msg"), node = x.closest(".node");
    const under = msg ? getComputedStyle(msg.querySelector("rect")).fill : node ? getComputedStyle(node.querySelector(".body")).fill : panel;
    const r = ratio(s.fill, under);
    texts++;
    if (r < 4.5) low.push("text " + JSON.stringify(x.textContent) + " " + s.fill + " on " + under + ": " + r.toFixed(2));
  }
  if (texts < 10) low.push("only " + texts + " texts of the drawing measured");
  // A text field's or a select's border is what shows it is one: 3:1 on what is behind.
  const behind = (e) => { for (let p = e.parentElement; p; p = p.parentElement) { const c = getComputedStyle(p).backgroundColor; if (!/rgba\(.*, 0\)$/.test(c) && c !== "transparent") return c; } return panel; };
  let fields = 0;
  for (const f of document.querySelectorAll("input:not([type=checkbox]):not([type=radio]):not([type=range]):not([type=hidden]), select, textarea:not(.code-input)")) {
    if (!f.getClientRects().length) continue;
    fields++;
    check("border of " + (f.id || f.name || f.tagName), getComputedStyle(f).borderTopColor, behind(f));
  }
  if (fields < 5) low.push("only " + fields + " fields measured");
  check("the focus outline", root.getPropertyValue("--accent").trim(), panel);
  check("the focus outline", root.getPropertyValue("--accent").trim(), root.getPropertyValue("--bg").trim());
  probe.remove();
  return low;
})()`

// Non-text contrast (WCAG 1.4.11): every process's ring, every message's pill and
// chip, and every colour they may take, has 3:1 against the stage, and every text
// field's and select's border 3:1 against what is behind it, in both themes.
func TestProcessAndMessageColoursContrast(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 800)
	run(t, ctx, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?n=8"))
	ready(t, ctx)
	clickProcessAction(t, ctx, 0, "request")
	clickProcessAction(t, ctx, 3, "request")
	waitFor(t, ctx, `document.querySelectorAll("#view .msg rect").length > 0`)
	eval[bool](t, ctx, `document.querySelector(".setup details").open = true, document.getElementById("net-toggle").click(), true`)
	waitFor(t, ctx, `!document.getElementById("net-body").hidden`)
	for _, theme := range []string{"light", "dark"} {
		eval[bool](t, ctx, `document.documentElement.dataset.theme = "`+theme+`", true`)
		for _, low := range eval[[]string](t, ctx, contrastJS) {
			t.Errorf("%s theme: %s", theme, low)
		}
	}
}
