package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/teach-dist/playground/internal/testwait"
	"github.com/teach-dist/playground/web"
)

// exploreFromPage clicks Explore and waits for the verdict.
func exploreFromPage(t *testing.T, path string) (string, context.Context) {
	t.Helper()
	ts := server(t)
	c := tab(t, ts.URL, 1280, 800)
	run(t, c, chromedp.Navigate(ts.URL+path))
	ready(t, c)
	waitFor(t, c, `!document.getElementById("explore-open").disabled`)
	run(t, c, chromedp.Click(chromedp.CSS(`#explore-open`)))
	waitFor(t, c, `document.getElementById("explore-dialog").open && document.getElementById("explore-dialog").dataset.state !== "running"`)
	return ts.URL, c
}

// Bakery's page, as a new visitor opens it (four processes): Explore says it checked
// three instead, and why, and that every property holds there.
func TestExploreBakeryAtItsDefaultsSaysItCheckedThree(t *testing.T) {
	needBrowser(t)
	_, ctx := exploreFromPage(t, "/play/bakery")
	state := eval[string](t, ctx, `document.getElementById("explore-dialog").dataset.state`)
	verdict := eval[string](t, ctx, `document.getElementById("explore-verdict").textContent`)
	resized := eval[string](t, ctx, `(() => { const r = document.getElementById("explore-resized"); return r.hidden ? "" : r.textContent; })()`)
	screenshot(t, ctx, "explore-bakery-defaults.png")
	if state != "ok" || !strings.HasPrefix(verdict, "Every property holds with 3 processes") {
		t.Fatalf("state %q, verdict %q", state, verdict)
	}
	if !strings.HasPrefix(resized, "Checked with 3 processes instead of 4: 4 processes would need about") {
		t.Fatalf("the dialog says %q", resized)
	}
}

func TestExploreShowsMaekawaDeadlockAndOpensIt(t *testing.T) {
	needBrowser(t)
	base, ctx := exploreFromPage(t, "/play/maekawa?n=3")
	state := eval[string](t, ctx, `document.getElementById("explore-dialog").dataset.state`)
	verdict := eval[string](t, ctx, `document.getElementById("explore-verdict").textContent`)
	if state != "violation" || !strings.Contains(verdict, "Deadlock freedom is broken") || !strings.Contains(verdict, "wait-for cycle") {
		t.Fatalf("state %q, verdict %q", state, verdict)
	}
	steps := eval[int](t, ctx, `document.querySelectorAll("#explore-path li").length`)
	href := eval[string](t, ctx, `(() => { const a = document.getElementById("explore-open-cx"); return a.hidden ? "" : a.getAttribute("href"); })()`)
	if steps != 6 || !strings.HasPrefix(href, "/r/") {
		t.Fatalf("%d steps, link %q", steps, href)
	}
	// The counterexample opens in the playground at the step where the monitor reports
	// the deadlock, with the violation in the narration.
	run(t, ctx, chromedp.Click(chromedp.CSS(`#explore-open-cx`)))
	waitFor(t, ctx, `location.pathname.startsWith("/r/")`)
	ready(t, ctx)
	if got := eval[string](t, ctx, `location.href`); !strings.HasPrefix(got, base+"/r/") {
		t.Fatalf("at %s", got)
	}
	waitFor(t, ctx, `[...document.querySelectorAll("#log li.violation")].some((li) => li.textContent.includes("deadlock") || li.textContent.includes("cycle"))`)
	step := eval[string](t, ctx, `document.getElementById("main").dataset.step`)
	if n, err := strconv.Atoi(step); err != nil || n < 6 {
		t.Fatalf("the counterexample opened at step %q", step)
	}
}

func TestExploreSaysRicartAgrawalaHolds(t *testing.T) {
	needBrowser(t)
	_, ctx := exploreFromPage(t, "/play/ricart-agrawala?n=3")
	state := eval[string](t, ctx, `document.getElementById("explore-dialog").dataset.state`)
	states := eval[string](t, ctx, `document.getElementById("explore-dialog").dataset.states`)
	text := eval[string](t, ctx, `document.getElementById("explore-dialog").textContent`)
	// 35: the reductions Ricart-Agrawala declares (3 074 states in full).
	if state != "ok" || states != "35" {
		t.Fatalf("state %q, states %q: %s", state, states, text)
	}
	for _, want := range []string{"Every property holds", "mutual exclusion", "35 states", "depth 18", "every process asks for the CS once"} {
		if !strings.Contains(text, want) {
			t.Errorf("the dialog does not say %q:\n%s", want, text)
		}
	}
	// Closing the dialog leaves the page as it was: no counterexample link.
	if eval[bool](t, ctx, `!document.getElementById("explore-open-cx").hidden`) {
		t.Error("a counterexample link for a property that holds")
	}
	run(t, ctx, chromedp.Click(chromedp.CSS(`#explore-cancel`)))
	waitFor(t, ctx, `!document.getElementById("explore-dialog").open`)
}

func TestExploreIsOffForLargeN(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 800)
	run(t, ctx, chromedp.Navigate(ts.URL+fmt.Sprintf("/play/ricart-agrawala?n=%d", web.ExploreNodes+1)))
	ready(t, ctx)
	waitFor(t, ctx, `document.getElementById("explore-open").dataset.reason === "too many processes"`)
	if !eval[bool](t, ctx, `document.getElementById("explore-open").disabled`) {
		t.Fatalf("Explore is on for %d processes", web.ExploreNodes+1)
	}
	if title := eval[string](t, ctx, `document.getElementById("explore-open").title`); !strings.Contains(title, fmt.Sprintf("at most %d", web.ExploreNodes)) {
		t.Fatalf("title %q does not say why", title)
	}
	// The reason is written beside the button too, not only in its tooltip.
	why := eval[string](t, ctx, `(() => {
		const w = document.getElementById("explore-why"), b = document.getElementById("explore-open").getBoundingClientRect();
		const r = w.getBoundingClientRect();
		return r.width > 0 && r.right <= innerWidth && Math.abs((r.top + r.bottom) / 2 - (b.top + b.bottom) / 2) < b.height ? w.textContent : "not beside the button";
	})()`)
	if why != fmt.Sprintf("at most %dprocesses", web.ExploreNodes) { // two lines: "at most 5", "processes"
		t.Fatalf("beside the button: %q", why)
	}
	screenshot(t, ctx, "explore-off-reason.png")
}

// On a five-process page of a mutual exclusion algorithm and of an election, Explore
// is on, the dialog states the server's budgets, shows the search's progress, and
// Cancel stops it: the dialog says so and stays open.
func TestExploreFiveProcessesShowsProgressAndCancels(t *testing.T) {
	needBrowser(t)
	// No bound the search can reach before the click: only Cancel ends it (a bound of
	// states or time would, on a slow machine, race the click).
	srv := web.New(web.Options{Explore: web.ExploreLimits{MaxStates: 1 << 40, MaxMemory: 1 << 30, Timeout: time.Hour, Progress: time.Millisecond, AsAsked: true}})
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Close()
		ts.Close()
	})
	// Bakery's search with five processes, searched as asked, runs for minutes; bully's,
	// a second or two.
	for _, path := range []string{"/play/bakery?n=5", "/play/bully?n=5"} {
		t.Run(path, func(t *testing.T) {
			c := tab(t, ts.URL, 1280, 800)
			run(t, c, chromedp.Navigate(ts.URL+path))
			ready(t, c)
			waitFor(t, c, `!document.getElementById("explore-open").disabled`)
			run(t, c, chromedp.Click(chromedp.CSS(`#explore-open`)))
			if budget := eval[string](t, c, `document.getElementById("explore-budget").textContent`); !strings.Contains(budget, "1,099,511,627,776 states, 1024 MiB of memory") || !strings.Contains(budget, "3600 s") {
				t.Errorf("the dialog states the budget as %q", budget)
			}
			// Cancel is clicked in the same task that sees the progress line.
			waitFor(t, c, `(() => {
				const p = document.getElementById("explore-progress").textContent;
				if (!/^[\d,]+ states, depth \d+, [\d,]+ states\/s$/.test(p)) return false;
				window.seenProgress = p;
				document.getElementById("explore-cancel").click();
				return true;
			})()`)
			if state := eval[string](t, c, `document.getElementById("explore-dialog").dataset.state`); state != "cancelled" {
				t.Fatalf("after Cancel the dialog is %q (progress seen: %s)", state, eval[string](t, c, `window.seenProgress`))
			}
			verdict := eval[string](t, c, `document.getElementById("explore-verdict").textContent`)
			button := eval[string](t, c, `document.getElementById("explore-cancel").textContent`)
			if !strings.HasPrefix(verdict, "Cancelled") || button != "Close" || !eval[bool](t, c, `document.getElementById("explore-dialog").open`) {
				t.Fatalf("after Cancel: verdict %q, button %q", verdict, button)
			}
			run(t, c, chromedp.Click(chromedp.CSS(`#explore-cancel`)))
			waitFor(t, c, `!document.getElementById("explore-dialog").open`)
		})
	}
}

// A five-process search that the server's budget stops says so plainly in
// its verdict, naming the limit it hit.
func TestExploreSaysWhenTheBudgetStoppedIt(t *testing.T) {
	needBrowser(t)
	srv := web.New(web.Options{Explore: web.ExploreLimits{MaxStates: 100}})
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Close()
		ts.Close()
	})
	c := tab(t, ts.URL, 1280, 800)
	// Bakery with three processes: far more than 100 states (a setup too large for the
	// budget at five is checked at fewer, TestCheckAtThePageDefaultsGivesAVerdict;
	// three is the size that stays).
	run(t, c, chromedp.Navigate(ts.URL+"/play/bakery?n=3"))
	ready(t, c)
	waitFor(t, c, `!document.getElementById("explore-open").disabled`)
	run(t, c, chromedp.Click(chromedp.CSS(`#explore-open`)))
	waitFor(t, c, `document.getElementById("explore-dialog").dataset.state !== "running"`)
	state := eval[string](t, c, `document.getElementById("explore-dialog").dataset.state`)
	verdict := eval[string](t, c, `document.getElementById("explore-verdict").textContent`)
	if state != "bounded" || verdict != "Not proved: the search hit the server's 100 states limit before it had seen every state." {
		t.Fatalf("state %q, verdict %q", state, verdict)
	}
}

// On an election without an election of its own, Explore says what it added
// in an election's terms (it said "No requests in this scenario").
func TestExploreSaysWhatItAddsToAnElection(t *testing.T) {
	needBrowser(t)
	_, ctx := exploreFromPage(t, "/play/ring?n=3")
	said := eval[string](t, ctx, `document.getElementById("explore-workload").textContent`)
	if said != "No election is started in this scenario, so: P0 calls an election at the start." {
		t.Fatalf("the dialog says %q", said)
	}
	if eval[string](t, ctx, `document.getElementById("explore-why").textContent`) != "" {
		t.Fatal("a reason is written beside an Explore that is on")
	}
}

// While the server's explorer slots are taken, the dialog says the search waits and
// its place in the queue; when the slot frees, the search runs and the dialog shows
// its verdict (searches wait in a fair queue, their place shown in the page, so a
// user knows the page is not stuck).
func TestExploreDialogShowsItsPlaceInTheQueue(t *testing.T) {
	needBrowser(t)
	held, release := make(chan struct{}), make(chan struct{})
	srv := web.New(web.Options{Explore: web.ExploreLimits{AtOnce: 1, Hold: func(ctx context.Context, algorithm string) error {
		if algorithm == "lamport" { // the search that holds the one slot
			close(held)
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return nil
	}}})
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Close()
		ts.Close()
	})
	holder := make(chan error, 1)
	go func() { holder <- exploreByHTTP(ts.URL, "/play/lamport?n=3") }()
	testwait.Recv(t, "the holder's search to take the slot", held)

	c := tab(t, ts.URL, 1280, 800)
	run(t, c, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?n=3"))
	ready(t, c)
	waitFor(t, c, `!document.getElementById("explore-open").disabled`)
	run(t, c, chromedp.Click(chromedp.CSS(`#explore-open`)))
	waitFor(t, c, `document.getElementById("explore-dialog").textContent.includes("waiting for a free explorer slot: you are next")`)
	if state := eval[string](t, c, `document.getElementById("explore-dialog").dataset.state`); state != "running" {
		t.Fatalf("a queued search's dialog is %q, want running", state)
	}
	close(release)
	if err := testwait.Recv(t, "the holder's search to end", holder); err != nil {
		t.Fatal(err)
	}
	waitFor(t, c, `document.getElementById("explore-dialog").dataset.state === "ok"`)
	if text := eval[string](t, c, `document.getElementById("explore-dialog").textContent`); !strings.Contains(text, "Every property holds") {
		t.Fatalf("after the slot freed: %s", text)
	}
}

// exploreByHTTP opens a run of path and explores it through the API, reading the
// stream to its end.
func exploreByHTTP(base, path string) error {
	resp, err := http.Get(base + path)
	if err != nil {
		return err
	}
	page, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	m := regexp.MustCompile(`data-session="([^"]+)"`).FindSubmatch(page)
	if m == nil {
		return fmt.Errorf("GET %s: %d, no session", path, resp.StatusCode)
	}
	resp, err = http.Post(base+"/api/sessions/"+string(m[1])+"/explore", "", nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}
