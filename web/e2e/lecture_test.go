package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// shown is what a student sees of the run: the step, the highlighted rules, who is in
// the CS, the messages on their way.
type shown struct {
	Step int
	Lit  []string
	InCS []string
	Msgs []int
}

const showJS = `(() => {
  const app = document.getElementById("main");
  return {
    Step: Number(app.dataset.step),
    Lit: [...document.querySelectorAll(".rule.lit")].map((e) => e.dataset.rule),
    InCS: [...document.querySelectorAll("#view g.node.in-cs")].map((e) => e.dataset.id),
    Msgs: [...document.querySelectorAll("#view g.msg")].map((e) => Number(e.dataset.id)).sort((a, b) => a - b),
  };
})()`

func sameShown(a, b shown) bool {
	return a.Step == b.Step && fmt.Sprint(a.Lit) == fmt.Sprint(b.Lit) && fmt.Sprint(a.InCS) == fmt.Sprint(b.InCS) &&
		fmt.Sprint(a.Msgs) == fmt.Sprint(b.Msgs)
}

// waitSame waits until a follower shows what the presenter shows.
func waitSame(t *testing.T, presenter, follower context.Context, who string) shown {
	t.Helper()
	want := eval[shown](t, presenter, showJS)
	js := fmt.Sprintf(`(() => { const s = %s; return s.Step === %d && JSON.stringify(s.Lit) === %q && JSON.stringify(s.Msgs) === %q; })()`,
		showJS, want.Step, jsonOf(want.Lit), jsonOf(want.Msgs))
	waitFor(t, follower, js)
	if got := eval[shown](t, follower, showJS); !sameShown(got, want) {
		t.Fatalf("%s shows %+v, the presenter %+v", who, got, want)
	}
	return want
}

func jsonOf(v any) string {
	switch x := v.(type) {
	case []string:
		if len(x) == 0 {
			return "[]"
		}
		return `["` + strings.Join(x, `","`) + `"]`
	case []int:
		parts := make([]string, len(x))
		for i, n := range x {
			parts[i] = fmt.Sprint(n)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	return ""
}

// The lecture: the instructor starts a lecture from a run and drives it with a
// clicker's keys; two students join with the code and see the same step and the same
// highlighted rule; the instructor asks a question, the students answer on their
// screens, the tally shows on the projector and stepping reveals the answer; a
// student forks the run and goes on in a tab of their own while the first tab keeps
// following.
func TestLecturePresenterTwoFollowersQuestionAndFork(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	pres := tab(t, ts.URL, 1280, 720)
	run(t, pres, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?n=4"))
	ready(t, pres)
	run(t, pres, chromedp.Click(chromedp.CSS("#lecture-start")), chromedp.WaitVisible(chromedp.CSS("#lecture-code")))
	waitFor(t, pres, `location.pathname.startsWith("/lecture/present/") && document.getElementById("main")?.dataset.ready === "true"`)
	waitFor(t, pres, `/^[A-Z0-9]{3} [A-Z0-9]{3}$/.test(document.getElementById("lecture-code")?.textContent || "")`)
	if !eval[bool](t, pres, `document.body.classList.contains("lecture-presenter") && !document.getElementById("lecture-start")`) {
		t.Fatal("the presenter's page is not in presenter mode")
	}
	code := strings.ReplaceAll(eval[string](t, pres, `document.getElementById("lecture-code").textContent`), " ", "")

	// Two students: one types the code (in lower case, with a dash), one opens the QR link.
	f1 := tab(t, ts.URL, 1000, 700)
	run(t, f1, chromedp.Navigate(ts.URL+"/join"),
		chromedp.WaitVisible(chromedp.CSS("#join-code")),
		chromedp.SendKeys(chromedp.CSS("#join-code"), strings.ToLower(code[:3])+"-"+strings.ToLower(code[3:])+kb.Enter),
		chromedp.WaitVisible(chromedp.CSS("#lecture-bar")))
	ready(t, f1)
	if path := eval[string](t, f1, `location.pathname`); path != "/l/"+code {
		t.Fatalf("joining with the code led to %s", path)
	}
	f2 := freshTab(t, 1000, 700)
	run(t, f2, chromedp.Navigate(ts.URL+"/l/"+code))
	ready(t, f2)
	waitFor(t, pres, `document.getElementById("main").dataset.followers === "2"`)
	for _, f := range []context.Context{f1, f2} {
		if !eval[bool](t, f, `document.body.classList.contains("lecture-follower") && document.getElementById("btn-step").disabled`) {
			t.Fatal("a follower's page can drive")
		}
	}
	screenshot(t, pres, "lecture-presenter.png")
	// J puts the code and its QR code large on the projector; Esc closes it.
	run(t, pres, chromedp.KeyEvent("j"))
	waitFor(t, pres, `document.getElementById("lecture-big")?.open && document.getElementById("lecture-qr")?.complete && document.getElementById("lecture-qr").naturalWidth > 0`)
	if big := eval[string](t, pres, `document.querySelector(".lecture-big-code").textContent`); strings.ReplaceAll(big, " ", "") != code {
		t.Fatalf("the large code reads %q, want %s", big, code)
	}
	screenshot(t, pres, "lecture-join-large.png")
	run(t, pres, chromedp.KeyEvent(kb.Escape))
	waitFor(t, pres, `!document.getElementById("lecture-big").open`)

	// The instructor: two requests, then steps with the clicker's PageDown.
	clickProcessAction(t, pres, 0, "request")
	clickProcessAction(t, pres, 2, "request")
	run(t, pres, chromedp.KeyEvent(kb.Escape))
	// Follower 1 reads compact frames (proto=2, static/compact.js): it shows each step
	// as the presenter does.
	if ws := eval[string](t, f1, `document.getElementById("main").dataset.ws`); !strings.Contains(ws, "proto=2") {
		t.Fatalf("the follower's socket %q does not ask for compact frames", ws)
	}
	for range 3 {
		before := eval[int](t, pres, `Number(document.getElementById("main").dataset.step)`)
		run(t, pres, chromedp.KeyEvent(kb.PageDown))
		waitFor(t, pres, fmt.Sprintf(`Number(document.getElementById("main").dataset.step) === %d`, before+1))
		waitSame(t, pres, f1, "follower 1")
	}
	s1 := waitSame(t, pres, f1, "follower 1")
	waitSame(t, pres, f2, "follower 2")
	if len(s1.Lit) == 0 {
		t.Fatalf("no rule is highlighted at step %d", s1.Step)
	}
	// A follower's panels read the lecture's run: the metrics at the step shown, the
	// space-time diagram up to it.
	waitFor(t, f1, fmt.Sprintf(`document.getElementById("metrics-panel").dataset.step === "%d"`, s1.Step))
	run(t, f1, chromedp.Click(chromedp.CSS("#st-toggle")))
	waitFor(t, f1, `document.getElementById("spacetime").dataset.state === "ready" && document.querySelectorAll("#st-diagram .st-msg").length > 0`)
	screenshot(t, f1, "lecture-follower-panels.png")
	// A follower's keys do not drive: the step stays.
	run(t, f1, chromedp.KeyEvent(kb.ArrowRight))
	if got := eval[int](t, f1, `Number(document.getElementById("main").dataset.step)`); got != s1.Step {
		t.Fatalf("a follower's key moved the run to step %d", got)
	}
	// PageUp steps back, and the followers follow.
	run(t, pres, chromedp.KeyEvent(kb.PageUp))
	waitFor(t, pres, fmt.Sprintf(`Number(document.getElementById("main").dataset.step) === %d`, s1.Step-1))
	waitSame(t, pres, f1, "follower 1")
	run(t, pres, chromedp.KeyEvent(kb.PageDown))
	waitFor(t, pres, fmt.Sprintf(`Number(document.getElementById("main").dataset.step) === %d`, s1.Step))

	// A question: Q lists them, 1 asks the first.
	run(t, pres, chromedp.KeyEvent("q"))
	waitFor(t, pres, `document.getElementById("lecture-pick")?.open && document.querySelectorAll(".lecture-pick-item").length > 0`)
	screenshot(t, pres, "lecture-questions.png")
	run(t, pres, chromedp.KeyEvent("1"))
	waitFor(t, pres, `document.getElementById("lecture-q")?.dataset.state === "open"`)
	for _, f := range []context.Context{f1, f2} {
		waitFor(t, f, `document.getElementById("lecture-q")?.dataset.state === "open" && document.querySelectorAll(".lecture-choice-btn").length >= 2`)
	}
	text := eval[string](t, pres, `document.querySelector(".lecture-q-text").textContent`)
	if got := eval[string](t, f2, `document.querySelector(".lecture-q-text").textContent`); got != text {
		t.Fatalf("follower sees %q, presenter asked %q", got, text)
	}
	// One student clicks, the other presses a number.
	run(t, f1, chromedp.Click(chromedp.CSS(`.lecture-choice[data-choice="0"] button`)))
	run(t, f2, chromedp.KeyEvent("2"))
	for _, f := range []context.Context{f1, f2} {
		waitFor(t, f, `document.querySelectorAll(".lecture-choice.mine").length === 1 && document.querySelectorAll(".lecture-choice-btn").length === 0`)
	}
	waitFor(t, pres, `[...document.querySelectorAll("#lecture-q .lecture-count")].map((e) => e.textContent).slice(0, 2).join() === "1,1"`)
	if foot := eval[string](t, pres, `document.querySelector("#lecture-q .lecture-q-foot").textContent`); !strings.HasPrefix(foot, "2 of 2 answered") {
		t.Fatalf("presenter's tally says %q", foot)
	}
	screenshot(t, pres, "lecture-tally.png")

	// V reveals by stepping to the answer; everyone sees the same correct choice.
	run(t, pres, chromedp.KeyEvent("v"))
	correct := `[...document.querySelectorAll("#lecture-q .lecture-choice")].findIndex((e) => e.classList.contains("correct"))`
	waitFor(t, pres, `document.getElementById("lecture-q")?.dataset.state === "revealed"`)
	want := eval[int](t, pres, correct)
	for _, f := range []context.Context{f1, f2} {
		waitFor(t, f, `document.getElementById("lecture-q")?.dataset.state === "revealed"`)
		if got := eval[int](t, f, correct); got != want || want < 0 {
			t.Fatalf("a follower sees choice %d as correct, the presenter %d", got, want)
		}
	}
	at := waitSame(t, pres, f1, "follower 1")
	waitSame(t, pres, f2, "follower 2")
	screenshot(t, f1, "lecture-follower-revealed.png")

	// Fork: the link opens the run at the follower's step in a session of its own.
	href := eval[string](t, f1, `document.getElementById("lecture-fork").getAttribute("href")`)
	if href != fmt.Sprintf("/l/%s/fork?step=%d", code, at.Step) {
		t.Fatalf("fork link %q at step %d", href, at.Step)
	}
	fork := tab(t, ts.URL, 1000, 700)
	run(t, fork, chromedp.Navigate(ts.URL+href))
	ready(t, fork)
	waitFor(t, fork, fmt.Sprintf(`location.pathname.startsWith("/r/") && Number(document.getElementById("main").dataset.step) === %d`, at.Step))
	if got := eval[shown](t, fork, showJS); !sameShown(got, at) {
		t.Fatalf("the fork shows %+v, the lecture was at %+v", got, at)
	}
	// The fork is the student's own: it steps on while the lecture stays.
	run(t, fork, chromedp.Click(chromedp.CSS("#btn-step")))
	waitFor(t, fork, fmt.Sprintf(`Number(document.getElementById("main").dataset.step) === %d`, at.Step+1))
	if got := eval[int](t, pres, `Number(document.getElementById("main").dataset.step)`); got != at.Step {
		t.Fatalf("the fork moved the lecture to step %d", got)
	}
	// Back in the first tab, the student is still following.
	run(t, pres, chromedp.KeyEvent(kb.PageDown))
	waitFor(t, pres, fmt.Sprintf(`Number(document.getElementById("main").dataset.step) === %d`, at.Step+1))
	waitSame(t, pres, f1, "follower 1 after the fork")

	// The instructor ends the lecture: the students' pages say so and keep the link.
	run(t, pres, chromedp.Evaluate[chromedp.Void](`window.confirm = () => true`), chromedp.Click(chromedp.CSS("#lecture-end")))
	for _, f := range []context.Context{f1, f2} {
		waitFor(t, f, `document.getElementById("lecture-ended") !== null && document.getElementById("lecture-run-link")?.getAttribute("href").startsWith("/r/")`)
	}
	waitFor(t, pres, `document.getElementById("lecture-bar").classList.contains("ended")`)
	screenshot(t, f2, "lecture-ended.png")
	// The page stays as it is: app.js reloads a page whose run is gone 0.8 s after the
	// news, which would replace this one (and its note) by the server's ended page. That
	// timer is the only way to a reload, and the page says whether it set it: no need to
	// wait and see that nothing happens.
	waitFor(t, f1, `document.getElementById("main").dataset.onGone !== undefined`)
	if got := eval[string](t, f1, `document.getElementById("main").dataset.onGone`); got != "stay" {
		t.Fatalf("after the end the student's page chose to %s, want stay", got)
	}
	if !eval[bool](t, f1, `document.getElementById("lecture-ended") !== null`) {
		t.Fatal("after the end the student's page lost its note")
	}
}
