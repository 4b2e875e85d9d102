package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// What each algorithm declares of itself is
// drawn on the stage (Raymond's tree and holder pointers, the central coordinator, the
// ring's direction), token and leader marks read from the back of a hall, the highest
// process does not look crashed, a deadlock draws its wait-for cycle and says it in
// the status pill, and the legend lists only what the algorithm has. Each viewport
// gets its screenshots.

var glanceViewports = []struct{ w, h int64 }{{1280, 720}, {1920, 1080}}

// isolatedTab is a tab of its own browser context: a run opened in another viewport's
// tab (same cookie, same session) is not resumed here.
func isolatedTab(t *testing.T, base string, w, h int64) context.Context {
	t.Helper()
	return openTab(t, base, w, h, chromedp.WithNewBrowserContext())
}

// stepUntil clicks Step, one step at a time, until cond holds after a step is shown.
func stepUntil(t *testing.T, ctx context.Context, cond string) {
	t.Helper()
	ok := eval[bool](t, ctx, `(async () => {
	  const app = document.getElementById("main");
	  const frame = () => new Promise((r) => requestAnimationFrame(r));
	  for (let k = 0; k < 400; k++) {
	    await frame();
	    if (`+cond+`) return true;
	    const before = app.dataset.step;
	    document.getElementById("btn-step").click();
	    for (let w = 0; w < 600 && app.dataset.step === before; w++) await new Promise((r) => setTimeout(r, 10));
	    if (app.dataset.step === before) return false;
	  }
	  return false;
	})()`, chromedp.EvalAwaitPromise)
	if !ok {
		t.Fatalf("stepping never reached %s", cond)
	}
}

// cmd sends a command frame as a panel would.
func cmd(t *testing.T, ctx context.Context, frame string) {
	t.Helper()
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`document.dispatchEvent(new CustomEvent("pg:command", { detail: `+frame+` }))`))
}

// playFast plays the run at full speed.
func playFast(t *testing.T, ctx context.Context) {
	t.Helper()
	cmd(t, ctx, `{ type: "speed", speed: 16 }`)
	cmd(t, ctx, `{ type: "play" }`)
}

// legendKeys lists the legend's keys by their data-key.
func legendKeys(t *testing.T, ctx context.Context) []string {
	t.Helper()
	return eval[[]string](t, ctx, `[...document.querySelectorAll(".legend .key[data-key]")].map((e) => e.dataset.key)`)
}

func wantLegend(t *testing.T, ctx context.Context, slug string, want ...string) {
	t.Helper()
	if got := legendKeys(t, ctx); !slices.Equal(got, want) {
		t.Errorf("%s: legend keys %v, want %v", slug, got, want)
	}
}

// pairs lists the from->to ids of the elements matching sel, sorted.
func pairs(t *testing.T, ctx context.Context, sel string) []string {
	t.Helper()
	got := eval[[]string](t, ctx, `[...document.querySelectorAll(`+fmt.Sprintf("%q", sel)+`)].map((e) => e.dataset.from + ">" + e.dataset.to)`)
	slices.Sort(got)
	return got
}

type box struct{ W, H float64 }

// markBox is the rendered size of a process's mark (leader or token), 0 when hidden.
func markBox(t *testing.T, ctx context.Context, id int, mark string) box {
	t.Helper()
	return eval[box](t, ctx, fmt.Sprintf(`(() => {
	  const e = document.querySelector('#view g.node[data-id="%d"] .mark.%s');
	  if (!e || getComputedStyle(e).display === "none") return { W: 0, H: 0 };
	  const b = e.getBoundingClientRect();
	  return { W: b.width, H: b.height };
	})()`, id, mark))
}

func TestStageDecorationsFromTheSpec(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	for _, vp := range glanceViewports {
		t.Run(fmt.Sprintf("%dx%d", vp.w, vp.h), func(t *testing.T) {
			ctx := isolatedTab(t, ts.URL, vp.w, vp.h)
			size := fmt.Sprintf("-%dx%d.png", vp.w, vp.h)

			// Raymond: the balanced tree over P0..P6 and every holder pointing up to the
			// root P0, which holds the token.
			run(t, ctx, chromedp.Navigate(ts.URL+"/play/raymond"))
			ready(t, ctx)
			tree := []string{"1>0", "2>0", "3>1", "4>1", "5>2", "6>2"}
			if got := pairs(t, ctx, "#view .tree-edge"); !slices.Equal(got, tree) {
				t.Fatalf("raymond: tree edges %v, want %v", got, tree)
			}
			if got := pairs(t, ctx, "#view .pointer"); !slices.Equal(got, tree) {
				t.Fatalf("raymond: holder arrows %v, want %v (all towards the root)", got, tree)
			}
			if m := markBox(t, ctx, 0, "token"); m.W < 30 || m.H < 30 {
				t.Errorf("raymond: the token mark is %.0fx%.0f px, want at least 30 px", m.W, m.H)
			}
			wantLegend(t, ctx, "raymond", "cs", "token", "edges", "pointer")
			// P6 asks: the token comes down to it, and the pointers on its way turn round
			// (P0 -> P2 -> P6) as the holder variables change.
			cmd(t, ctx, `{ type: "act", do: "request", node: 6 }`)
			playFast(t, ctx)
			waitFor(t, ctx, `!!document.querySelector('#view g.node[data-id="6"].token')`)
			want := []string{"0>2", "1>0", "2>6", "3>1", "4>1", "5>2"}
			waitFor(t, ctx, `[...document.querySelectorAll("#view .pointer")].some((e) => e.dataset.from === "2" && e.dataset.to === "6")`)
			if got := pairs(t, ctx, "#view .pointer"); !slices.Equal(got, want) {
				t.Fatalf("raymond: after P6 took the token, holder arrows %v, want %v", got, want)
			}
			if m := markBox(t, ctx, 6, "token"); m.W < 30 || m.H < 30 {
				t.Errorf("raymond: P6's token mark is %.0fx%.0f px, want at least 30 px", m.W, m.H)
			}
			screenshot(t, ctx, "glance-raymond"+size)

			// Central: the coordinator (by default the highest id, here P2 as asked) is
			// marked, and only it; no token in the legend.
			run(t, ctx, chromedp.Navigate(ts.URL+"/play/central?p.coordinator=2"))
			ready(t, ctx)
			marked := eval[[]string](t, ctx, `[...document.querySelectorAll("#view g.node.role-marked")].map((e) => e.dataset.id + ":" + e.querySelector(".role text").textContent + ":" + (e.querySelector(".role").getBoundingClientRect().width > 0))`)
			if !slices.Equal(marked, []string{"2:coordinator:true"}) {
				t.Fatalf("central: marked processes %v, want P2 shown as coordinator", marked)
			}
			wantLegend(t, ctx, "central", "cs", "mark")
			screenshot(t, ctx, "glance-central"+size)

			// Maekawa: a selected process shows its voting set (the notes' V2 = {2, 4, 6}
			// for N=7); no token, a key for the set.
			run(t, ctx, chromedp.Navigate(ts.URL+"/play/maekawa"))
			ready(t, ctx)
			wantLegend(t, ctx, "maekawa", "cs", "group")
			run(t, ctx, chromedp.Click(chromedp.CSS(`#view g.node[data-id="2"]`)))
			waitFor(t, ctx, `document.getElementById("view").dataset.group === "2"`)
			if got := eval[[]string](t, ctx, `[...document.querySelectorAll("#view g.node.in-group")].map((e) => e.dataset.id)`); !slices.Equal(got, []string{"2", "4", "6"}) {
				t.Fatalf("maekawa: P2's voting set shown as %v, want P2 P4 P6", got)
			}
			screenshot(t, ctx, "glance-maekawa"+size)

			// Token ring: an arrow from each process to the next in ring order.
			run(t, ctx, chromedp.Navigate(ts.URL+"/play/token-ring?n=5"))
			ready(t, ctx)
			ids := eval[[]string](t, ctx, `[...document.querySelectorAll("#view g.node")].map((e) => e.dataset.id)`)
			var ring []string
			for i, id := range ids {
				ring = append(ring, id+">"+ids[(i+1)%len(ids)])
			}
			slices.Sort(ring)
			if got := pairs(t, ctx, "#view .edge.ring"); len(ids) != 5 || !slices.Equal(got, ring) {
				t.Fatalf("token-ring: ring arrows %v, want %v", got, ring)
			}
			wantLegend(t, ctx, "token-ring", "cs", "token", "ring")

			// Bully: the highest process is black (white in the dark theme), not the grey
			// of a crashed one; its leader star reads from afar; the narration says it is
			// now the leader.
			run(t, ctx, chromedp.Navigate(ts.URL+"/play/bully"))
			ready(t, ctx)
			wantLegend(t, ctx, "bully", "leader")
			top := eval[int](t, ctx, `Math.max(...[...document.querySelectorAll("#view g.node")].map((e) => Number(e.dataset.id)))`)
			cmd(t, ctx, `{ type: "act", do: "crash", node: 0 }`)
			waitFor(t, ctx, `!!document.querySelector('#view g.node[data-id="0"].crashed')`)
			cmd(t, ctx, `{ type: "act", do: "elect", node: 1 }`)
			playFast(t, ctx)
			waitFor(t, ctx, fmt.Sprintf(`!!document.querySelector('#view g.node[data-id="%d"].leader') && document.getElementById("log").textContent.includes("P%d is now the leader")`, top, top))
			if strings.Contains(eval[string](t, ctx, `document.getElementById("log").textContent`), fmt.Sprintf("P%d now takes P%d as leader", top, top)) {
				t.Error("bully: the narration still says a process takes itself as leader")
			}
			type look struct{ Stroke, Dash, Fill string }
			style := func(id int) look {
				return eval[look](t, ctx, fmt.Sprintf(`(() => { const s = getComputedStyle(document.querySelector('#view g.node[data-id="%d"] .body')); return { Stroke: s.stroke, Dash: s.strokeDasharray, Fill: s.fill }; })()`, id))
			}
			high, crashed := style(top), style(0)
			if high.Stroke == crashed.Stroke || high.Fill == crashed.Fill || high.Dash != "none" || crashed.Dash == "none" {
				t.Errorf("bully: the highest process P%d looks like the crashed P0: %+v vs %+v", top, high, crashed)
			}
			if m := markBox(t, ctx, top, "leader"); m.W < 30 || m.H < 30 {
				t.Errorf("bully: the leader mark is %.0fx%.0f px, want at least 30 px", m.W, m.H)
			}
			screenshot(t, ctx, "glance-bully"+size)
		})
	}
}

// statusJS is the status pill's state and words, and the wait-for arrows on the stage.
const statusJS = `(() => {
  const s = document.getElementById("status");
  return { State: s.dataset.violation || "", Text: s.textContent,
    Waits: [...document.querySelectorAll("#view .wait-edge")].map((e) => e.dataset.from + ">" + e.dataset.to).sort() };
})()`

type status struct {
	State, Text string
	Waits       []string
}

// wantDeadlock waits for the stage to show Maekawa's deadlock of the notes: the cycle
// drawn and named in the pill.
func wantDeadlock(t *testing.T, ctx context.Context, who string) {
	t.Helper()
	waitFor(t, ctx, `!!document.getElementById("status").dataset.violation`)
	got := eval[status](t, ctx, statusJS)
	if got.State != "deadlock" || got.Text != "Deadlock: P1 -> P2 -> P3 -> P1" || !slices.Equal(got.Waits, []string{"1>2", "2>3", "3>1"}) {
		t.Fatalf("%s: status %q, wait-for arrows %v; want the cycle P1 -> P2 -> P3 -> P1 in both", who, got.Text, got.Waits)
	}
}

// A deadlock: the presenter and a follower both see the cycle drawn and the pill say
// it; stepping back before it clears both. Two in the CS: the pill names them.
func TestViolationsShowOnTheStageAndInThePill(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	for _, vp := range glanceViewports {
		t.Run(fmt.Sprintf("%dx%d", vp.w, vp.h), func(t *testing.T) {
			size := fmt.Sprintf("-%dx%d.png", vp.w, vp.h)
			pres := isolatedTab(t, ts.URL, vp.w, vp.h)
			run(t, pres, chromedp.Navigate(ts.URL+"/s/maekawa-deadlock"))
			ready(t, pres)
			run(t, pres, chromedp.Click(chromedp.CSS("#lecture-start")), chromedp.WaitVisible(chromedp.CSS("#lecture-code")))
			waitFor(t, pres, `location.pathname.startsWith("/lecture/present/") && document.getElementById("main")?.dataset.ready === "true"`)
			waitFor(t, pres, `/^[A-Z0-9]{3} [A-Z0-9]{3}$/.test(document.getElementById("lecture-code")?.textContent || "")`)
			code := strings.ReplaceAll(eval[string](t, pres, `document.getElementById("lecture-code").textContent`), " ", "")
			follower := tab(t, ts.URL, vp.w, vp.h)
			run(t, follower, chromedp.Navigate(ts.URL+"/l/"+code))
			ready(t, follower)

			playFast(t, pres)
			wantDeadlock(t, pres, "presenter")
			wantDeadlock(t, follower, "follower")
			// Under the violation's words (its title), the run's state: still playing, and only
			// the presenter can act.
			for who, want := range map[string]string{"presenter": "Nothing more will happen by itself: click a process and choose Request the CS", "follower": "Waiting for the presenter"} {
				ctx := pres
				if who == "follower" {
					ctx = follower
				}
				if got := eval[string](t, ctx, `document.getElementById("status").title`); got != want {
					t.Errorf("%s: the pill's title %q, want %q", who, got, want)
				}
			}
			screenshot(t, pres, "glance-deadlock-presenter"+size)
			screenshot(t, follower, "glance-deadlock-follower"+size)
			// One step back, the run is not stuck yet: no cycle, no violation.
			cmd(t, pres, `{ type: "back" }`)
			for _, ctx := range []context.Context{pres, follower} {
				waitFor(t, ctx, `!document.getElementById("status").dataset.violation && !document.querySelector("#view .wait-edge")`)
			}

			// Lamport's algorithm on a reordering channel lets P0 in beside P1.
			run(t, pres, chromedp.Navigate(ts.URL+"/s/lamport-non-fifo"))
			ready(t, pres)
			stepUntil(t, pres, `document.getElementById("status").dataset.violation`)
			got := eval[status](t, pres, statusJS)
			if got.State != "mutual-exclusion" || got.Text != "Two in the CS: P0 and P1" || len(got.Waits) != 0 {
				t.Fatalf("lamport-non-fifo: status %q, wait-for arrows %v", got.Text, got.Waits)
			}
			if n := eval[int](t, pres, `document.querySelectorAll("#view g.node.violating.in-cs").length`); n != 2 {
				t.Fatalf("lamport-non-fifo: %d processes in the CS are marked as the violation, want 2", n)
			}
			screenshot(t, pres, "glance-mutex"+size)
		})
	}
}

// Every message on the stage carries the whole label its algorithm declares, inside
// its pill: none is cut to a stub that another type shares.
func TestMessageLabelsOnTheStageAreTheDeclaredOnes(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	for _, vp := range glanceViewports {
		t.Run(fmt.Sprintf("%dx%d", vp.w, vp.h), func(t *testing.T) {
			ctx := isolatedTab(t, ts.URL, vp.w, vp.h)
			for _, tc := range []struct {
				path  string
				types []string // message types the run must have shown
			}{
				{"/s/bakery-same-ticket", []string{"READ-NUMBER", "NUMBER", "READ-CHOOSING", "CHOOSING"}},
				{"/s/maekawa-deadlock-free", []string{"REQUEST", "REPLY", "RELEASE", "FAILED"}},
				{"/s/bully-worst-case", []string{"ELECTION", "ANSWER", "COORDINATOR"}},
			} {
				run(t, ctx, chromedp.Navigate(ts.URL+tc.path))
				ready(t, ctx)
				// Step through the run, recording after each step how each type's
				// message is drawn and whether its text fits its pill.
				done := eval[bool](t, ctx, fmt.Sprintf(`(async () => {
				  const types = %s, app = document.getElementById("main");
				  window.seenLabels = {};
				  const look = () => {
				    for (const g of document.querySelectorAll("#view g.msg")) {
				      const text = g.querySelector("text"), rect = g.querySelector("rect");
				      const fits = text.getBBox().width > 0 && text.getBBox().width <= rect.getBBox().width;
				      const seen = window.seenLabels[g.dataset.type];
				      window.seenLabels[g.dataset.type] = { Label: text.textContent, Fits: fits && (!seen || seen.Fits), Again: !!seen && (seen.Again || seen.Label !== text.textContent) };
				    }
				    return types.every((ty) => window.seenLabels[ty]);
				  };
				  const frame = () => new Promise((r) => requestAnimationFrame(r));
				  for (let k = 0; k < 400; k++) {
				    await frame();
				    if (look()) return true;
				    const before = app.dataset.step;
				    document.getElementById("btn-step").click();
				    for (let w = 0; w < 600 && app.dataset.step === before; w++) await new Promise((r) => setTimeout(r, 10));
				    if (app.dataset.step === before) return false;
				  }
				  return false;
				})()`, jsonOf(tc.types)), chromedp.EvalAwaitPromise)
				if !done {
					t.Fatalf("%s: stepping never showed every one of %v: %v", tc.path, tc.types, eval[any](t, ctx, `window.seenLabels`))
				}
				type seen struct {
					Label       string
					Fits, Again bool
				}
				got := eval[map[string]seen](t, ctx, `window.seenLabels`)
				declared := eval[map[string]string](t, ctx, `Object.fromEntries(JSON.parse(document.getElementById("spec").textContent).messages.map((m) => [m.name, m.label]))`)
				labels := map[string]string{}
				for ty, s := range got {
					if s.Label != declared[ty] || !s.Fits || s.Again {
						t.Errorf("%s: %s drawn as %+v, want its declared label %q whole inside its pill", tc.path, ty, s, declared[ty])
					}
					if other, ok := labels[s.Label]; ok {
						t.Errorf("%s: %s and %s both drawn as %q", tc.path, other, ty, s.Label)
					}
					labels[s.Label] = ty
				}
			}
			screenshot(t, ctx, fmt.Sprintf("glance-labels-%dx%d.png", vp.w, vp.h))
		})
	}
}
