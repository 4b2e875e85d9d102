package e2e

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// Tell from the process menu: P0 tells P1 something outside the algorithm. The APP
// is drawn apart from the algorithm's messages (its own class, a legend entry), the
// log narrates it, and its delivery changes no process's variables.
func TestTellFromTheProcessMenu(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 720)
	run(t, ctx, chromedp.Navigate(ts.URL+"/play/central?n=3"))
	ready(t, ctx)
	if n := eval[int](t, ctx, `document.querySelectorAll(".legend .chip.app").length`); n != 1 {
		t.Fatalf("legend: %d APP entries, want 1", n)
	}
	vars := eval[string](t, ctx, `document.querySelector("#vars tbody").textContent`)
	run(t, ctx,
		chromedp.Click(chromedp.CSS(`#view g.node[data-id="0"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#menu-tell-open`)),
		chromedp.Click(chromedp.CSS(`#menu-tell-open`)),
		chromedp.WaitVisible(chromedp.CSS(`#menu-tell button[data-to="1"]`)),
	)
	screenshot(t, ctx, "tell-menu.png")
	if got := eval[string](t, ctx, `[...document.querySelectorAll("#menu-tell button")].map((b) => b.textContent).join(",")`); got != "Tell P1,Tell P2" {
		t.Fatalf("tell menu offers %q, want the two other processes", got)
	}
	run(t, ctx, chromedp.Click(chromedp.CSS(`#menu-tell button[data-to="1"]`)))
	waitFor(t, ctx, `document.querySelector('#view g.msg.app[data-type="APP"]') !== null`)
	if txt := eval[string](t, ctx, `document.querySelector("#view g.msg.app text").textContent`); txt != "APP" {
		t.Fatalf("the APP pill reads %q", txt)
	}
	screenshot(t, ctx, "tell-app-in-flight.png")
	if !eval[bool](t, ctx, `document.getElementById("menu").hidden`) {
		t.Fatal("the menu stays open after the tell")
	}
	run(t, ctx, chromedp.Click(chromedp.CSS(`#btn-step`)))
	waitFor(t, ctx, `document.querySelector("#view g.msg.app") === null`)
	waitFor(t, ctx, `document.getElementById("log").textContent.includes("receives APP")`)
	if after := eval[string](t, ctx, `document.querySelector("#vars tbody").textContent`); after != vars {
		t.Errorf("the processes' variables changed when the APP arrived:\n%s\nwas\n%s", clip(after, 400), clip(vars, 400))
	}
}
