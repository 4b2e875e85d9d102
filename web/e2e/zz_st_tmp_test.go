package e2e

import (
	"testing"

	"github.com/chromedp/chromedp"
)

func TestSpacetimeTmpPhone(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 390, 844)
	run(t, ctx, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?n=5"))
	ready(t, ctx)
	openDiagram(t, ctx)
	requestCS(t, ctx, 0)
	requestCS(t, ctx, 3)
	stepToQuiet(t, ctx, 8)
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById("spacetime").scrollIntoView()`))
	if w := eval[int](t, ctx, `document.documentElement.scrollWidth - window.innerWidth`); w > 0 {
		t.Errorf("the page is %d px wider than the phone", w)
	}
	screenshot(t, ctx, "phone.png")
}
