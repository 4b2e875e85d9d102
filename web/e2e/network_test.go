package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// traceEvent is one line of trace v1, as much of it as these tests read.
type traceEvent struct {
	Seq    int
	Type   string
	Reason string
	Groups [][]int
	Msg    struct{ ID, From, To int }
}

// sessionTrace fetches /api/sessions/{id}/trace from the page, as a student's export.
func sessionTrace(t *testing.T, ctx context.Context) []traceEvent {
	t.Helper()
	text := eval[string](t, ctx, `fetch("/api/sessions/" + document.getElementById("main").dataset.session + "/trace").then((r) => r.text())`, chromedp.EvalAwaitPromise)
	var out []traceEvent
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		var ev traceEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("trace line %q: %v", line, err)
		}
		out = append(out, ev)
	}
	return out
}

// heldIDs is the Network panel's list of held messages, by id, in its order.
const heldIDs = `[...document.querySelectorAll("#net-held li")].map((li) => Number(li.dataset.msg))`

// In network mode the user picks the delivery order by clicking held messages; each
// pick is one step; the trace shows exactly that order; seeking lands between picks.
func TestBeTheNetworkDeliveryOrder(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 720)
	run(t, ctx, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?n=3"))
	ready(t, ctx)

	// Switch network mode on live: a recorded intervention, the panel opens.
	run(t, ctx, chromedp.Click(chromedp.CSS("#net-hold")))
	waitFor(t, ctx, `document.getElementById("net-panel").dataset.hold === "true" && !document.getElementById("net-body").hidden`)
	waitFor(t, ctx, `!document.querySelector(".net-badge").hidden`)
	clickProcessAction(t, ctx, 0, "request") // REQUEST #1 -> P1, #2 -> P2
	clickProcessAction(t, ctx, 1, "request") // REQUEST #3 -> P0, #4 -> P2
	waitFor(t, ctx, heldIDs+`.join() === "1,2,3,4"`)
	// The view parks them (at its next frame): four held messages, none on its way.
	waitFor(t, ctx, `document.querySelectorAll("#view g.msg.held").length === 4 && document.querySelectorAll("#view g.msg").length === 4`)
	screenshot(t, ctx, "network-held.png")
	if st := eval[string](t, ctx, `document.getElementById("main").dataset.step`); st != "0" {
		t.Fatalf("step %s before any delivery", st)
	}

	// Not the send order. Each click is one step.
	chosen := []int{4, 2, 3, 1}
	for k, id := range chosen {
		button := fmt.Sprintf(`#net-held button[data-act="deliver"][data-msg="%d"]`, id)
		run(t, ctx, chromedp.Click(chromedp.CSS(button)))
		waitFor(t, ctx, fmt.Sprintf(`document.getElementById("main").dataset.step === "%d"`, k+1))
		if eval[bool](t, ctx, fmt.Sprintf(`%s.includes(%d)`, heldIDs, id)) {
			t.Fatalf("#%d is still listed as held after its delivery", id)
		}
	}
	// Keyboard: the list's buttons are reachable and work with Enter.
	first := eval[int](t, ctx, heldIDs+`[0]`)
	run(t, ctx, chromedp.Focus(chromedp.CSS(fmt.Sprintf(`#net-held button[data-act="deliver"][data-msg="%d"]`, first))),
		chromedp.KeyEvent("\r"))
	waitFor(t, ctx, `document.getElementById("main").dataset.step === "5"`)
	chosen = append(chosen, first)

	var got []int
	for _, ev := range sessionTrace(t, ctx) {
		if ev.Type == "deliver" {
			got = append(got, ev.Msg.ID)
		}
	}
	if !slices.Equal(got, chosen) {
		t.Fatalf("the trace delivers %v, the user chose %v", got, chosen)
	}

	// The timeline stops between two picks: at step 2, #4 and #2 are delivered, #3 and
	// #1 still wait.
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`(() => {
		const tl = document.getElementById("timeline");
		tl.value = "2";
		tl.dispatchEvent(new Event("input", { bubbles: true }));
	})()`))
	waitFor(t, ctx, `document.getElementById("main").dataset.step === "2"`)
	held := eval[[]int](t, ctx, heldIDs)
	if !slices.Contains(held, 3) || !slices.Contains(held, 1) || slices.Contains(held, 4) || slices.Contains(held, 2) {
		t.Fatalf("at step 2 the held list is %v; want #3 and #1 still held, #4 and #2 delivered", held)
	}
	screenshot(t, ctx, "network-seek.png")

	// Switching network mode off releases what is held: it arrives by itself.
	run(t, ctx, chromedp.Click(chromedp.CSS("#net-hold")))
	waitFor(t, ctx, `document.getElementById("net-panel").dataset.hold === "false" && document.querySelectorAll("#net-held li").length === 0`)
	if n := eval[int](t, ctx, `document.querySelectorAll("#view g.msg.held").length`); n != 0 {
		t.Fatalf("%d messages still drawn held after network mode went off", n)
	}
}

// pressLeft presses or moves the mouse with the left button held.
func pressLeft(p *input.DispatchMouseEventParams) {
	p.Button = input.MouseButtonLeft
	p.Buttons = 1
}

// center is the centre of an element on the screen.
func center(t *testing.T, ctx context.Context, sel string) (float64, float64) {
	t.Helper()
	xy := eval[[]float64](t, ctx, fmt.Sprintf(`(() => {
		const b = document.querySelector(%q).getBoundingClientRect();
		return [b.left + b.width / 2, b.top + b.height / 2];
	})()`, sel))
	return xy[0], xy[1]
}

func dragMouse(t *testing.T, ctx context.Context, x0, y0, x1, y1 float64) {
	t.Helper()
	steps := []chromedp.Action[chromedp.Void]{chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, x0, y0, pressLeft, chromedp.ClickCount(1))}
	for k := 1; k <= 8; k++ {
		f := float64(k) / 8
		steps = append(steps, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x0+(x1-x0)*f, y0+(y1-y0)*f, pressLeft))
	}
	steps = append(steps, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, x1, y1, pressLeft, chromedp.ClickCount(1)))
	run(t, ctx, steps...)
}

// Dragging a process away from the others partitions the network once applied: the
// groups show, the trace has the partition, and messages across the cut are not
// delivered. The group editor and Heal do the same with the keyboard's controls.
func TestBeTheNetworkPartitionByDragging(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 720)
	run(t, ctx, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?n=3"))
	ready(t, ctx)
	if g := eval[string](t, ctx, `document.getElementById("net-panel").dataset.groups`); g != "A,A,A" {
		t.Fatalf("groups at the start: %q", g)
	}

	// Drag P2 onto empty ground: a group of its own, to apply.
	x0, y0 := center(t, ctx, `#view g.node[data-id="2"] .body`)
	x1, y1 := center(t, ctx, `#view`)
	dragMouse(t, ctx, x0, y0, x1, y1+30)
	waitFor(t, ctx, `!document.querySelector("#svg-wrap .net-draftbar").hidden`)
	if txt := eval[string](t, ctx, `document.querySelector("#svg-wrap .net-draft-text").textContent`); txt != "A: P0 P1 | B: P2" {
		t.Fatalf("draft after the drag: %q", txt)
	}
	if eval[bool](t, ctx, `!document.getElementById("menu").hidden`) {
		t.Fatal("the drag opened the process menu")
	}
	screenshot(t, ctx, "network-drag.png")
	run(t, ctx, chromedp.Click(chromedp.CSS("#net-draft-apply")))
	waitFor(t, ctx, `document.getElementById("net-panel").dataset.groups === "A,A,B"`)
	waitFor(t, ctx, `document.querySelectorAll("#net-layer .net-halo").length === 3 && document.querySelector("#svg-wrap .net-draftbar").hidden`)

	// P0 asks for the CS: its REQUEST to P2 is lost at the cut, the one to P1 arrives.
	clickProcessAction(t, ctx, 0, "request")
	for range 10 {
		if eval[bool](t, ctx, `document.getElementById("status").dataset.state === "quiet"`) {
			break
		}
		eval[float64](t, ctx, stepJS, chromedp.EvalAwaitPromise)
	}
	screenshot(t, ctx, "network-partition.png")
	evs := sessionTrace(t, ctx)
	parted := -1
	for k, ev := range evs {
		if ev.Type == "partition" {
			parted = k
			if !slices.EqualFunc(ev.Groups, [][]int{{0, 1}, {2}}, slices.Equal) {
				t.Fatalf("partition groups %v, want [[0 1] [2]]", ev.Groups)
			}
		}
	}
	if parted < 0 {
		t.Fatal("no partition event in the trace")
	}
	cutDrops, delivered := 0, 0
	for _, ev := range evs[parted:] {
		across := (ev.Msg.From == 2) != (ev.Msg.To == 2)
		switch {
		case ev.Type == "deliver" && across:
			t.Fatalf("a message crossed the cut: %+v", ev)
		case ev.Type == "deliver":
			delivered++
		case ev.Type == "drop" && ev.Reason == "partition":
			cutDrops++
		}
	}
	if cutDrops == 0 || delivered == 0 {
		t.Fatalf("after the partition: %d dropped at the cut, %d delivered inside the group", cutDrops, delivered)
	}

	// The group editor: P1 to group B (beside P2), applied with the panel's button.
	run(t, ctx, chromedp.Click(chromedp.CSS("#net-toggle")),
		chromedp.Click(chromedp.CSS(`#net-groups input[name="net-g-1"][value="1"]`)),
		chromedp.Click(chromedp.CSS("#net-part")))
	waitFor(t, ctx, `document.getElementById("net-panel").dataset.groups === "A,B,B"`)
	run(t, ctx, chromedp.Click(chromedp.CSS("#net-heal")))
	waitFor(t, ctx, `document.getElementById("net-panel").dataset.groups === "A,A,A" && document.querySelectorAll("#net-layer .net-halo").length === 0`)
}

// FIFO, delay and loss changed live from the panel reach the run, and the page shows
// the network in force after a seek.
func TestBeTheNetworkChangesTheModelLive(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 720)
	run(t, ctx, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?n=3"))
	ready(t, ctx)
	clickProcessAction(t, ctx, 0, "request")
	waitFor(t, ctx, `document.querySelectorAll("#view g.msg").length === 2`)
	// Network mode switched on with messages on their way: they stop and wait.
	run(t, ctx, chromedp.Click(chromedp.CSS("#net-hold")))
	waitFor(t, ctx, heldIDs+`.join() === "1,2" && document.querySelectorAll("#view g.msg.held").length === 2`)
	run(t, ctx, chromedp.Click(chromedp.CSS("#net-hold")))
	waitFor(t, ctx, heldIDs+`.length === 0 && document.querySelectorAll("#view g.msg.held").length === 0`)
	eval[float64](t, ctx, stepJS, chromedp.EvalAwaitPromise)
	run(t, ctx, chromedp.WaitVisible(chromedp.CSS("#net-apply")), // the panel opened with network mode
		chromedp.Evaluate[chromedp.Void](`(() => {
			const f = document.getElementById("net-form").elements;
			f.fifo.checked = true; f.dmin.value = "4"; f.dmax.value = "6"; f.loss.value = "0.25";
			f.loss.dispatchEvent(new Event("input", { bubbles: true }));
		})()`),
		chromedp.Click(chromedp.CSS("#net-apply")))
	waitFor(t, ctx, `document.getElementById("net-summary").textContent === "delay 4–6 · FIFO · loss 25%"`)
	// A bad value is refused with the field named; the model stays.
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`(() => {
			const f = document.getElementById("net-form").elements;
			f.dmin.value = "9"; f.dmax.value = "2";
			f.dmin.dispatchEvent(new Event("input", { bubbles: true }));
		})()`),
		chromedp.Click(chromedp.CSS("#net-apply")))
	waitFor(t, ctx, `document.querySelector("#svg-wrap .toast")?.textContent.startsWith("delay:")`)
	// Back to step 0 (before the change): the panel shows the network of that step.
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`(() => {
		const tl = document.getElementById("timeline");
		tl.value = "0";
		tl.dispatchEvent(new Event("input", { bubbles: true }));
	})()`))
	waitFor(t, ctx, `document.getElementById("main").dataset.step === "0" && document.getElementById("net-summary").textContent === "delay 1–3 · not FIFO · loss 0%"`)
}
