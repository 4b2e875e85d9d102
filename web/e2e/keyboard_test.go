package e2e

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// press presses and releases a key that types nothing (Tab, arrows, Escape, Enter
// that the page handles on key down), with modifiers.
func press(key string, vk int64, mods int64) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for _, typ := range []input.DispatchKeyEventType{input.DispatchKeyEventTypeRawKeyDown, input.DispatchKeyEventTypeKeyUp} {
			p := input.DispatchKeyEventParams{Type: typ, Key: key, Code: key, WindowsVirtualKeyCode: vk, Modifiers: mods}
			if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, p); err != nil {
				return err
			}
		}
		return nil
	})
}

var (
	tabKey      = press("Tab", 9, 0)
	shiftTabKey = press("Tab", 9, 8) // Shift: 8
	downKey     = press("ArrowDown", 40, 0)
	rightKey    = press("ArrowRight", 39, 0)
	escKey      = press("Escape", 27, 0)
	enterOnPage = press("Enter", 13, 0) // the page handles it on key down
)

// tabTo presses Tab (Shift+Tab with back) until the focused element makes cond (a JS
// expression over el) true.
func tabTo(t *testing.T, ctx context.Context, cond string, back bool) {
	t.Helper()
	js := fmt.Sprintf(`(() => { const el = document.activeElement; return !!(el && (%s)); })()`, cond)
	key := tabKey
	if back {
		key = shiftTabKey
	}
	for range 400 {
		if eval[bool](t, ctx, js) {
			return
		}
		// In the rules editor Tab indents: Esc, then Tab leaves it.
		if !back && eval[bool](t, ctx, `document.activeElement?.id === "rules-source"`) {
			run(t, ctx, escKey)
		}
		run(t, ctx, key)
	}
	t.Fatalf("Tab never reached %s (focus on %s)", cond, eval[string](t, ctx, `document.activeElement?.outerHTML.slice(0, 120) || "nothing"`))
}

// noPointer counts, in every document the tab opens, the pointer and mouse events a
// real device would send: a keyboard-only walk must end with none.
const noPointer = `window.__pointer = 0;
for (const type of ["pointerdown", "pointerup", "mousedown", "mouseup", "wheel", "contextmenu"]) {
  addEventListener(type, (e) => { if (e.isTrusted) window.__pointer++; }, true);
}`

func countPointer(t *testing.T, ctx context.Context) {
	t.Helper()
	run(t, ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: noPointer})
		return err
	}))
}

func wantNoPointer(t *testing.T, ctx context.Context, where string) {
	t.Helper()
	if n := eval[int](t, ctx, `window.__pointer ?? -1`); n != 0 {
		t.Fatalf("%s: %d pointer events (want 0, and the counter installed)", where, n)
	}
}

const focusNotLost = `document.activeElement && document.activeElement !== document.body`

// A whole lesson with the keyboard alone, not one mouse event: from the catalogue to a
// curated scenario, play, pause, step, pick a process and crash it from its menu (the
// focus comes back to it), drop a message from its own menu (the focus goes to its
// receiver), open the space-time diagram and jump to an event, open the editor and
// Check, then start a lecture; a student joins it by its code and answers the
// question, all by keys.
func TestKeyboardOnlyLesson(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 800)
	countPointer(t, ctx)
	run(t, ctx, chromedp.Navigate(ts.URL+"/"), chromedp.WaitReady(chromedp.CSS("main")))
	const name = "ricart-agrawala-concurrent"
	tabTo(t, ctx, `el.getAttribute("href") === "/s/`+name+`?fresh=1"`, false)
	run(t, ctx, chromedp.KeyEvent(kb.Enter))
	waitFor(t, ctx, `location.pathname === "/s/`+name+`"`)
	ready(t, ctx)

	// The skip links come first, and take the focus where they say.
	tabTo(t, ctx, `el.matches('a.skip[href="#controls"]')`, false)
	if !eval[bool](t, ctx, `document.activeElement.getBoundingClientRect().left >= 0`) {
		t.Fatal("a focused skip link is not on the screen")
	}
	run(t, ctx, chromedp.KeyEvent(kb.Enter))
	waitFor(t, ctx, `document.activeElement.id === "controls"`)

	// Play and pause (Space) at 8x (+), where a guided scenario does not hold at its
	// captions; back to 1x (-); a step back (←) and forward (→).
	speed := func(key, want string) {
		t.Helper()
		run(t, ctx, chromedp.KeyEvent(key))
		waitFor(t, ctx, `document.getElementById("speed").value === "`+want+`"`)
	}
	speed("+", "2")
	speed("+", "4")
	speed("+", "8")
	run(t, ctx, chromedp.KeyEvent(" "))
	waitFor(t, ctx, `document.getElementById("btn-play").getAttribute("aria-pressed") === "true"`)
	run(t, ctx, chromedp.KeyEvent(" "))
	waitFor(t, ctx, `document.getElementById("btn-play").getAttribute("aria-pressed") === "false"`)
	speed("-", "4")
	speed("-", "2")
	speed("-", "1")
	before := eval[int](t, ctx, `Number(document.getElementById("main").dataset.step)`)
	if before < 1 {
		t.Fatalf("the run played to step %d", before)
	}
	run(t, ctx, press("ArrowLeft", 37, 0))
	waitFor(t, ctx, fmt.Sprintf(`Number(document.getElementById("main").dataset.step) === %d`, before-1))
	run(t, ctx, rightKey)
	waitFor(t, ctx, fmt.Sprintf(`Number(document.getElementById("main").dataset.step) === %d`, before))

	// Pick P1 by its digit, open its menu (Enter), arrow down to Crash.
	run(t, ctx, chromedp.KeyEvent("1"))
	waitFor(t, ctx, `document.activeElement?.closest?.('#view g.node')?.dataset.index === "1"`)
	run(t, ctx, enterOnPage)
	waitFor(t, ctx, `!document.getElementById("menu").hidden && document.getElementById("menu").contains(document.activeElement)`)
	for range 8 {
		if eval[bool](t, ctx, `document.activeElement.dataset.act === "crash"`) {
			break
		}
		run(t, ctx, downKey)
	}
	run(t, ctx, chromedp.KeyEvent(kb.Enter))
	waitFor(t, ctx, `document.querySelector('#view g.node[data-index="1"]').classList.contains("crashed")`)
	waitFor(t, ctx, `document.getElementById("menu").hidden && document.activeElement?.closest?.('#view g.node')?.dataset.index === "1"`)
	// Its state is in its name, not only in its drawing.
	if got := eval[string](t, ctx, `document.activeElement.getAttribute("aria-label")`); !strings.Contains(got, "crashed") {
		t.Fatalf("a crashed process is named %q", got)
	}

	// P0 asks for the CS (R): messages are in flight; Tab reaches one, named in words.
	run(t, ctx, chromedp.KeyEvent("0"), chromedp.KeyEvent("r"))
	waitFor(t, ctx, `document.querySelectorAll("#view g.msg").length > 0`)
	tabTo(t, ctx, `el.matches("#view g.msg")`, false)
	label := eval[string](t, ctx, `document.activeElement.getAttribute("aria-label")`)
	if !regexp.MustCompile(`^(\S+ )?[A-Z_]+ from P\d+ to P\d+, message \d+$`).MatchString(label) {
		t.Fatalf("a message on the stage is named %q", label)
	}
	msgID := eval[string](t, ctx, `document.activeElement.dataset.id`)
	run(t, ctx, enterOnPage)
	waitFor(t, ctx, `!document.getElementById("msg-menu").hidden && document.getElementById("msg-menu").contains(document.activeElement)`)
	for range 4 {
		if eval[bool](t, ctx, `document.activeElement.dataset.act === "drop"`) {
			break
		}
		run(t, ctx, downKey)
	}
	run(t, ctx, chromedp.KeyEvent(kb.Enter))
	waitFor(t, ctx, `!document.querySelector('#view g.msg[data-id="`+msgID+`"]')`)
	waitFor(t, ctx, focusNotLost+` && document.activeElement.closest("#view") !== null`)
	// The in-flight list names each drop button by its message too.
	if got := eval[string](t, ctx, `document.querySelector("#inflight button")?.getAttribute("aria-label") || ""`); !regexp.MustCompile(`^drop [A-Z_]+ from P\d+ to P\d+ \(#\d+\)$`).MatchString(got) {
		t.Fatalf("an in-flight drop button is named %q", got)
	}

	// The space-time diagram: open it, go to its first event (Home), jump there.
	tabTo(t, ctx, `el.id === "st-toggle"`, false)
	run(t, ctx, chromedp.KeyEvent(kb.Enter))
	waitFor(t, ctx, `document.getElementById("spacetime").dataset.state === "ready"`)
	at := eval[int](t, ctx, `Number(document.getElementById("main").dataset.step)`)
	tabTo(t, ctx, `el.id === "st-scroll"`, false)
	// The first key puts the diagram's cursor on this step's event, Home on the first.
	run(t, ctx, press("Home", 36, 0), press("Home", 36, 0), enterOnPage)
	waitFor(t, ctx, fmt.Sprintf(`Number(document.getElementById("main").dataset.step) < %d`, at))

	// The editor: open it (the focus goes into the source), back to Check, Check.
	tabTo(t, ctx, `el.id === "rules-edit"`, false)
	run(t, ctx, chromedp.KeyEvent(kb.Enter))
	waitFor(t, ctx, `!document.getElementById("rules-editor").hidden && document.activeElement.id === "rules-source"`)
	tabTo(t, ctx, `el.id === "rules-check"`, true)
	run(t, ctx, chromedp.KeyEvent(kb.Enter))
	waitFor(t, ctx, `document.getElementById("explore-dialog").open && ["ok", "violation", "bounded"].includes(document.getElementById("explore-dialog").dataset.state)`)
	run(t, ctx, escKey)
	waitFor(t, ctx, `!document.getElementById("explore-dialog").open`)
	wantNoPointer(t, ctx, "the lesson")

	// A lecture of this run, started from the keyboard.
	tabTo(t, ctx, `el.id === "lecture-start"`, false)
	run(t, ctx, chromedp.KeyEvent(kb.Enter))
	waitFor(t, ctx, `location.pathname.startsWith("/lecture/present/") && document.getElementById("main")?.dataset.ready === "true"`)
	waitFor(t, ctx, `/^[A-Z0-9]{3} [A-Z0-9]{3}$/.test(document.getElementById("lecture-code")?.textContent || "")`)
	code := strings.ReplaceAll(eval[string](t, ctx, `document.getElementById("lecture-code").textContent`), " ", "")

	// A student joins by typing the code, and answers with the keyboard.
	st := freshTab(t, 390, 844)
	countPointer(t, st)
	run(t, st, chromedp.Navigate(ts.URL+"/join"), chromedp.WaitVisible(chromedp.CSS("#join-code")))
	tabTo(t, st, `el.id === "join-code"`, false)
	run(t, st, chromedp.KeyEvent(code), chromedp.KeyEvent(kb.Enter))
	waitFor(t, st, `location.pathname === "/l/`+code+`"`)
	ready(t, st)
	waitFor(t, ctx, `document.getElementById("main").dataset.followers === "1"`)
	// The presenter: two requests (digit, R) and a few steps (Page Down, a clicker's
	// key), then Q lists the questions for this step and 1 asks the first.
	run(t, ctx, chromedp.KeyEvent("0"), chromedp.KeyEvent("r"), chromedp.KeyEvent("2"), chromedp.KeyEvent("r"), escKey)
	for range 3 {
		before := eval[int](t, ctx, `Number(document.getElementById("main").dataset.step)`)
		run(t, ctx, press("PageDown", 34, 0))
		waitFor(t, ctx, fmt.Sprintf(`Number(document.getElementById("main").dataset.step) === %d`, before+1))
	}
	run(t, ctx, chromedp.KeyEvent("q"))
	waitFor(t, ctx, `document.getElementById("lecture-pick")?.open && document.querySelectorAll(".lecture-pick-item").length > 0`)
	run(t, ctx, chromedp.KeyEvent("1"))
	waitFor(t, ctx, `document.getElementById("lecture-q")?.dataset.state === "open"`)
	waitFor(t, st, `document.getElementById("lecture-q")?.dataset.state === "open" && document.querySelectorAll(".lecture-choice-btn").length >= 2`)
	tabTo(t, st, `el.matches(".lecture-choice-btn")`, false)
	run(t, st, chromedp.KeyEvent(kb.Enter))
	waitFor(t, st, `document.querySelectorAll(".lecture-choice.mine").length === 1`)
	waitFor(t, ctx, `document.querySelector("#lecture-q .lecture-q-foot")?.textContent.startsWith("1 of 1 answered")`)
	wantNoPointer(t, ctx, "the presenter")
	wantNoPointer(t, st, "the student")
}

// handledKeys records, for every key down, whether a shortcut took it (the page's
// handlers prevent the default of a key they act on): window's listener runs after
// the document's.
const handledKeys = `window.__handled = []; addEventListener("keydown", (e) => window.__handled.push(e.key + ":" + e.defaultPrevented)); true`

// The character-key shortcuts can be remapped and turned off in the keyboard help, by
// the keyboard, and the browser remembers it (WCAG 2.1.4).
func TestShortcutSettingsRemapAndTurnOff(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := freshTab(t, 1280, 800)
	run(t, ctx, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?n=3"))
	ready(t, ctx)

	// Crash on K instead of C.
	run(t, ctx, chromedp.KeyEvent("?"))
	waitFor(t, ctx, `document.getElementById("help").open`)
	tabTo(t, ctx, `el.id === "sc-key-crash"`, false)
	run(t, ctx, press("End", 35, 0), press("Backspace", 8, 0), chromedp.KeyEvent("k"), tabKey)
	waitFor(t, ctx, `JSON.parse(localStorage.getItem("shortcuts") || "{}").keys?.crash === "k"`)
	waitFor(t, ctx, `document.querySelector('#help kbd[data-shortcut="crash"]').textContent === "K"`)
	run(t, ctx, escKey)
	waitFor(t, ctx, `!document.getElementById("help").open`)
	eval[bool](t, ctx, handledKeys)
	run(t, ctx, chromedp.KeyEvent("1"), chromedp.KeyEvent("c"), chromedp.KeyEvent("k"))
	if got := eval[string](t, ctx, `window.__handled.join(" ")`); got != "1:true c:false k:true" {
		t.Fatalf("keys taken: %s (want 1 and K, not C)\n%s", got, pageNow(ctx))
	}
	waitFor(t, ctx, `document.querySelector('#view g.node[data-index="1"]').classList.contains("crashed")`)

	// Reloaded, the page keeps it; then every character key is turned off.
	run(t, ctx, chromedp.Reload())
	ready(t, ctx)
	run(t, ctx, chromedp.KeyEvent("?"))
	waitFor(t, ctx, `document.getElementById("help").open && document.getElementById("sc-key-crash").value === "k"`)
	tabTo(t, ctx, `el.id === "sc-on"`, true)
	run(t, ctx, chromedp.KeyEvent(" "))
	waitFor(t, ctx, `JSON.parse(localStorage.getItem("shortcuts") || "{}").on === false && document.getElementById("sc-key-crash").disabled`)
	run(t, ctx, escKey)
	waitFor(t, ctx, `!document.getElementById("help").open`)
	eval[bool](t, ctx, handledKeys)
	run(t, ctx, chromedp.KeyEvent("2"), chromedp.KeyEvent("k"), chromedp.KeyEvent("."), chromedp.KeyEvent("t"), rightKey)
	if got := eval[string](t, ctx, `window.__handled.join(" ")`); got != "2:false k:false .:false t:false ArrowRight:true" {
		t.Fatalf("keys taken with the character shortcuts off: %s (want only the arrow)", got)
	}
}

// focusShownJS says how the focused element shows its focus ("" when it does not): an
// outline, or on the stage a process's selection ring or a message's accent border.
const focusShownJS = `(() => {
  const el = document.activeElement;
  if (!el || el === document.body) return ""; // past the last stop: the browser's own
  if (el.matches("#view .node")) return getComputedStyle(el.querySelector(".sel-ring")).opacity === "1" ? "" : "process without its ring";
  if (el.matches("#view .msg")) return getComputedStyle(el.querySelector("rect")).strokeWidth === "3px" ? "" : "message without its border";
  const s = getComputedStyle(el);
  if (s.outlineStyle !== "none" && parseFloat(s.outlineWidth) >= 2) return "";
  return (el.id ? "#" + el.id : el.outerHTML.slice(0, 80)) + " shows no focus";
})()`

// Focus visible (WCAG 2.4.7): every stop of the play page's tab order, and of the
// help dialog, shows where the focus is.
func TestEveryTabStopShowsItsFocus(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 800)
	run(t, ctx, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?n=3"))
	ready(t, ctx)
	clickProcessAction(t, ctx, 0, "request")
	waitFor(t, ctx, `document.querySelectorAll("#view g.msg").length > 0`)
	run(t, ctx, escKey)
	eval[bool](t, ctx, `document.activeElement?.blur(), true`)
	seen := map[string]bool{}
	for range 150 {
		run(t, ctx, tabKey)
		id := eval[string](t, ctx, `(() => { const el = document.activeElement; window.__stops ??= 0; el.__stop ??= String(window.__stops++); return el.__stop; })()`)
		if seen[id] {
			break // round the page once
		}
		seen[id] = true
		if bad := eval[string](t, ctx, focusShownJS); bad != "" {
			t.Error(bad)
		}
	}
	if len(seen) < 20 {
		t.Fatalf("only %d tab stops", len(seen))
	}
	run(t, ctx, chromedp.KeyEvent("?"))
	waitFor(t, ctx, `document.getElementById("help").open`)
	for range 30 {
		run(t, ctx, tabKey)
		if bad := eval[string](t, ctx, focusShownJS); bad != "" {
			t.Error("in the help: " + bad)
		}
	}
}

// On a stage with more messages in flight than the in-flight list shows (60), the
// keyboard still reaches every one: "list all" lists the rest, and the focus goes to
// the first of them.
func TestEveryMessageReachableOnACrowdedStage(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 800)
	run(t, ctx, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?n=12&hold=true"))
	ready(t, ctx)
	for i := range 7 { // seven requests, eleven messages each, held in the network
		run(t, ctx, chromedp.KeyEvent(fmt.Sprint(i)), chromedp.KeyEvent("r"))
		waitFor(t, ctx, fmt.Sprintf(`document.getElementById("inflight-count").textContent === "%d"`, 11*(i+1)))
	}
	run(t, ctx, escKey)
	waitFor(t, ctx, `document.querySelectorAll("#inflight li button").length === 61`) // 60 drops and "list all"
	tabTo(t, ctx, `el.matches("#inflight .inflight-all")`, false)
	run(t, ctx, chromedp.KeyEvent(kb.Enter))
	waitFor(t, ctx, `document.querySelectorAll("#inflight li button").length === 77 && !document.querySelector("#inflight .inflight-all")`)
	if got := eval[string](t, ctx, `document.activeElement.getAttribute("aria-label") || ""`); !strings.HasPrefix(got, "drop REQUEST from P") || !strings.HasSuffix(got, "(#61)") {
		t.Fatalf("after listing all, the focus is on %q", got)
	}
}

// The space-time diagram tells an event's causal past from its future by more than
// colour (WCAG 1.4.1): the future's rings and arrows are dashed, the past's solid.
func TestCausalPastAndFutureNotByColourAlone(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 800)
	run(t, ctx, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?n=3&seed=4"))
	ready(t, ctx)
	openDiagram(t, ctx)
	requestCS(t, ctx, 0)
	requestCS(t, ctx, 1)
	stepToQuiet(t, ctx, 100)
	waitFor(t, ctx, `document.querySelectorAll("#st-diagram .st-dot").length > 6`)
	tabTo(t, ctx, `el.id === "st-scroll"`, false)
	run(t, ctx, press("Home", 36, 0), press("Home", 36, 0))
	for range eval[int](t, ctx, `Math.floor(document.querySelectorAll("#st-diagram .st-dot").length / 2)`) {
		run(t, ctx, rightKey)
	}
	run(t, ctx, press("Enter", 13, 0))
	waitFor(t, ctx, `["st-dot.past", "st-dot.future", "st-msg.past", "st-msg.future"].every((c) => document.querySelector("#st-diagram ." + c) !== null)`)
	dash := func(sel string) string {
		return eval[string](t, ctx, `getComputedStyle(document.querySelector(`+"`"+sel+"`"+`)).strokeDasharray`)
	}
	if p, f := dash("#st-diagram .st-dot.past .ring"), dash("#st-diagram .st-dot.future .ring"); p == f {
		t.Errorf("past and future rings are drawn alike (%s)", p)
	}
	if p, f := dash("#st-diagram .st-msg.past:not(.inflight) line"), dash("#st-diagram .st-msg.future:not(.inflight) line"); p == f {
		t.Errorf("past and future arrows are drawn alike (%s)", p)
	}
}
