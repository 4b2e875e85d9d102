package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The Export menu says, beside the ShiViz log, that ShiViz draws no arrow for an
// overtaken message and that the space-time diagram does; the note is on screen, in
// the menu, and the SVG exports still follow it.
func TestExportMenuSaysWhatShiVizCannotDraw(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 720)
	run(t, ctx, chromedp.Navigate(ts.URL+"/s/lamport-non-fifo"))
	ready(t, ctx)
	run(t, ctx, chromedp.Click(chromedp.CSS(`#export-menu > summary`)))
	waitFor(t, ctx, `document.getElementById("export-menu").open`)
	got := eval[struct {
		Text   string
		Inside bool
		Items  []string
	}](t, ctx, `(() => {
  const note = document.getElementById("export-shiviz-note");
  const r = note.getBoundingClientRect(), menu = document.querySelector("#export-list").getBoundingClientRect();
  return {
    text: note.innerText,
    inside: r.width > 0 && r.height > 0 && r.left >= menu.left && r.right <= menu.right && r.right <= innerWidth && r.bottom <= innerHeight,
    items: [...document.querySelectorAll("#export-list > li > :first-child")].map((e) => e.id),
  };
})()`)
	if !got.Inside {
		t.Errorf("the note is not on screen inside the menu")
	}
	for _, want := range []string{"upload", "default expression", "no arrow", "space-time diagram"} {
		if !strings.Contains(strings.ToLower(got.Text), want) {
			t.Errorf("the note %q does not say %q", got.Text, want)
		}
	}
	if !inOrder(got.Items, "export-trace", "export-shiviz", "export-view-svg", "export-spacetime-svg") {
		t.Errorf("menu items %v", got.Items)
	}
}
