package e2e

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// Run setup reaches every variant of an algorithm without a curated link: its params'
// controls are generated from the algorithm's declaration. For each setup a teacher
// must be able to show, the test sets it in Run setup, runs, and checks the run used
// it: something only that variant does happens, and the address says the setup.
func TestRunSetupReachesEveryVariant(t *testing.T) {
	needBrowser(t)
	for _, tc := range []struct {
		name, slug string
		set        string // JS with f = the form's elements: set the controls
		param      string // the /play query parameter the address then has
		value      string
		act        func(t *testing.T, ctx context.Context)
		shows      string // JS condition: the run did what only this variant does
		// speed is the run's speed while it plays (default 16): a condition on the
		// messages in flight needs 1x, where the panel follows every step (at 4x and
		// faster it follows once a second, and a message can come and go between).
		speed string
	}{
		{
			name: "central with DENIED", slug: "central",
			set:   `f["p.denied"].checked = true;`,
			param: "p.denied", value: "true",
			act: func(t *testing.T, ctx context.Context) {
				clickProcessAction(t, ctx, 0, "request")
				clickProcessAction(t, ctx, 1, "request")
			},
			shows: logSays("DENIED"),
		},
		{
			name: "Maekawa deadlock-free", slug: "maekawa",
			set:   `f.nodes.value = "3"; f.seed.value = "1"; f.fifo.checked = true; f["p.variant"].value = "deadlock-free";`,
			param: "p.variant", value: "deadlock-free",
			act: func(t *testing.T, ctx context.Context) {
				for id := 1; id <= 3; id++ { // Maekawa numbers processes as the notes do, from 1
					clickProcessAction(t, ctx, id, "request")
				}
			},
			// FAILED and INQUIRE exist only in the deadlock-free variant; all three get in.
			shows: `(` + logSays("FAILED") + ` || ` + logSays("INQUIRE") + `) && ` +
				`[...document.querySelectorAll("#log li")].filter((li) => li.textContent.includes("enters the critical section")).length >= 3`,
		},
		{
			name: "token regeneration", slug: "token-ring",
			set:   `f.nodes.value = "4"; f["p.regenerate"].value = "20";`,
			param: "p.regenerate", value: "20",
			act: func(t *testing.T, ctx context.Context) {
				clickProcessAction(t, ctx, 0, "crash") // the first holder: the token dies with it
			},
			shows: logSays("ELECTION"),
		},
		{
			name: "Bully with a failure detector", slug: "bully",
			// 003's detector: beat every T = 5, suspect after T+D with D = 3.
			set:   `f.nodes.value = "4"; f["p.heartbeat"].value = '{"period": 5, "delay": 3}';`,
			param: "p.heartbeat", value: `{"period":5,"delay":3}`,
			act: func(t *testing.T, ctx context.Context) {
				clickProcessAction(t, ctx, 3, "crash") // the leader; nobody is told to elect
			},
			shows: logSays("HEARTBEAT") + ` && ` + logSays("ELECTION"),
		},
		{
			// How a crashed successor is found is the user's to pick.
			name: "a ring election with acknowledgements", slug: "ring",
			set:   `f.nodes.value = "4"; f["p.skip"].value = "ack";`,
			param: "p.skip", value: "ack",
			act: func(t *testing.T, ctx context.Context) {
				clickProcessAction(t, ctx, 3, "crash")
				clickProcessAction(t, ctx, 0, "elect")
			},
			// Only the ack variant sends ACK; P2's time-out skips the crashed P3.
			shows: logSays("ACK") + ` && ` + logSays("P2 is now the leader"),
		},
		{
			name: "a Raymond tree of one's choice", slug: "raymond",
			set:   `f.nodes.value = "4"; f["p.tree"].value = '{"1": 0, "2": 1, "3": 2}';`,
			param: "p.tree", value: `{"1":0,"2":1,"3":2}`,
			act: func(t *testing.T, ctx context.Context) {
				clickProcessAction(t, ctx, 3, "request")
			},
			// In the chain, P3's parent is P2 (in the default balanced tree, P1).
			shows: `document.getElementById("inflight").textContent.includes("REQUEST P3→P2")`,
			speed: "1",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := server(t)
			ctx := tab(t, ts.URL, 1280, 900)
			run(t, ctx, chromedp.Navigate(ts.URL+"/play/"+tc.slug))
			ready(t, ctx)
			submitSetup(t, ctx, tc.set)
			waitFor(t, ctx, fmt.Sprintf(`new URLSearchParams(location.search).get(%q) === %q && document.getElementById("setup-error").textContent === ""`, tc.param, tc.value))
			ready(t, ctx)
			tc.act(t, ctx)
			speed := cmp.Or(tc.speed, "16")
			run(t, ctx, chromedp.Evaluate[chromedp.Void](`(() => {
				const s = document.getElementById("speed");
				s.value = "`+speed+`";
				s.dispatchEvent(new Event("change"));
				if (document.getElementById("btn-play").getAttribute("aria-pressed") !== "true") document.getElementById("btn-play").click();
			})()`))
			waitFor(t, ctx, tc.shows)
			screenshot(t, ctx, tc.slug+"-setup.png")
		})
	}
}

// A param the server refuses is explained beside its control, naming the field, and
// the run is not changed; a reload of the address a setup gave runs that setup again.
func TestRunSetupParamErrorsAndAddress(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 900)
	run(t, ctx, chromedp.Navigate(ts.URL+"/play/raymond?n=4"))
	ready(t, ctx)
	submitSetup(t, ctx, `f["p.tree"].value = '{"1": 1}';`)
	waitFor(t, ctx, `document.getElementById("param-error-tree").textContent.includes("params.tree") && document.querySelector('[name="p.tree"]').getAttribute("aria-invalid") === "true"`)
	if q := eval[string](t, ctx, `location.search`); q != "?n=4" {
		t.Fatalf("a refused setup changed the address to %q", q)
	}
	submitSetup(t, ctx, `f["p.tree"].value = '{"1": 0,';`) // not even JSON: refused before sending
	waitFor(t, ctx, `document.getElementById("param-error-tree").textContent.startsWith("params.tree: not JSON")`)

	submitSetup(t, ctx, `f["p.tree"].value = '{"1": 0, "2": 0, "3": 0}';`)
	waitFor(t, ctx, `document.getElementById("param-error-tree").textContent === "" && location.search.includes("p.tree=")`)
	run(t, ctx, chromedp.Reload())
	ready(t, ctx)
	got := eval[string](t, ctx, `document.querySelector('[name="p.tree"]').value`)
	if strings.ReplaceAll(got, " ", "") != `{"1":0,"2":0,"3":0}` {
		t.Fatalf("after a reload the tree control shows %q", got)
	}
}

// submitSetup opens Run setup, sets its controls with js (f: the form's elements) and
// starts the run.
func submitSetup(t *testing.T, ctx context.Context, js string) {
	t.Helper()
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`(() => {
		document.querySelector(".setup details").open = true;
		const f = document.getElementById("setup-form").elements;
		`+js+`
		document.querySelector("#setup-form button[type=submit]").click();
	})()`))
}

// logSays is a JS condition: the narration has a line containing text.
func logSays(text string) string {
	return fmt.Sprintf(`document.getElementById("log").textContent.includes(%q)`, text)
}
