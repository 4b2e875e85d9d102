package e2e

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// layoutJS measures the play page with its drawing scrolled to the top of the screen:
// whether the page scrolls sideways, and where the drawing and the run controls are.
const layoutJS = `(() => {
  document.getElementById("svg-wrap").scrollIntoView({ block: "start" });
  const box = (id) => { const r = document.getElementById(id).getBoundingClientRect(); return { top: r.top, bottom: r.bottom, h: r.height }; };
  const d = document.documentElement;
  return { sideways: d.scrollWidth > d.clientWidth, vh: innerHeight, wrap: box("svg-wrap"), controls: box("controls") };
})()`

type reflowBox struct{ Top, Bottom, H float64 }

type reflowLayout struct {
	Sideways bool
	VH       float64
	Wrap     reflowBox
	Controls reflowBox
}

// Reflow (WCAG 1.4.10): at 320 CSS px wide (1280 px at 400% zoom) and at 640x400 (a
// laptop at 200%), no page scrolls sideways, and the play page's drawing of the
// processes and its run controls are on the screen together.
func TestReflowAt320AndZoom(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	for _, sz := range [][2]int64{{320, 256}, {320, 568}, {640, 400}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			ctx := tab(t, ts.URL, sz[0], sz[1])
			for _, path := range []string{"/", "/join", "/compare?alg=ricart-agrawala&n=3-5&workload=light&seeds=1"} {
				run(t, ctx, chromedp.Navigate(ts.URL+path), chromedp.WaitReady(chromedp.CSS("main")))
				if eval[bool](t, ctx, `document.documentElement.scrollWidth > document.documentElement.clientWidth`) {
					t.Errorf("%s scrolls sideways: %s", path, eval[string](t, ctx, `[...document.querySelectorAll("body *")].filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1 && !e.closest(".skip, .sr-only")).slice(0, 6).map((e) => e.tagName + "." + e.className + " " + Math.round(e.getBoundingClientRect().right)).join(", ")`))
				}
			}
			run(t, ctx, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?n=5"))
			ready(t, ctx)
			waitFor(t, ctx, `document.documentElement.style.getPropertyValue("--ctl-h") !== ""`)
			l := eval[reflowLayout](t, ctx, layoutJS)
			if l.Sideways {
				t.Error("the play page scrolls sideways")
			}
			if l.Wrap.H < 120 || l.Wrap.Top < -1 || l.Wrap.Bottom > l.Controls.Top+1 || l.Controls.Bottom > l.VH+1 {
				t.Errorf("the drawing (%+v) and the controls (%+v) are not on a %.0f px high screen together", l.Wrap, l.Controls, l.VH)
			}
		})
	}
}
