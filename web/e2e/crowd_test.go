package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/gorilla/websocket"
)

// A crowded stage (more messages in flight than layout.js's CROWD) paints its moving
// pills on one canvas: every message keeps its (hidden) element in the SVG, the
// canvas shows each pill in its colour where the message is, a click on a pill opens
// that message's menu, and the SVG export still draws every message in flight.
func TestCrowdedStagePaintsMessagesOnCanvasAndSvgExportKeepsThem(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 720)
	run(t, ctx, chromedp.Navigate(ts.URL+"/play/ricart-agrawala?n=32"))
	ready(t, ctx)
	conn := secondViewer(t, ts, ctx, nil)
	for i := range 3 { // 3 processes ask the 31 others: 93 requests in flight
		conn.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `{"type":"act","do":"request","node":%d}`, i))
	}
	waitFor(t, ctx, `document.querySelectorAll("#view g.msg").length === 93 && document.getElementById("main").dataset.settled === "true"`)
	if !eval[bool](t, ctx, `getComputedStyle(document.getElementById("msgs")).display === "none" && !document.querySelector("#svg-wrap .msg-layer").hidden`) {
		t.Fatal("93 messages in flight, and the SVG pills show or the canvas layer does not")
	}

	// The newest message is drawn last, over any other. Paused, it sits where its arc
	// starts (its trail's first point). Its pill on the canvas is its SVG pill's colour.
	type probe struct {
		ID        int
		X, Y      float64 // client pixels: the pill's centre
		Want, Got []int   // rgb
		Empty     []int   // rgba of the canvas's corner, where no pill is
	}
	p := eval[probe](t, ctx, `(() => {
	  const svg = document.getElementById("view"), msgs = document.getElementById("msgs");
	  const g = [...msgs.children].reduce((a, b) => Number(a.dataset.id) > Number(b.dataset.id) ? a : b);
	  const id = Number(g.dataset.id);
	  const trail = [...document.getElementById("trails").children].at([...msgs.children].indexOf(g));
	  const [x0, y0] = trail.getAttribute("d").slice(1).split(/[ Q]/).map(Number);
	  const vb = svg.viewBox.baseVal, box = svg.getBoundingClientRect();
	  const s = Math.min(box.width / vb.width, box.height / vb.height);
	  const cx = box.left + box.width / 2 + x0 * s, cy = box.top + box.height / 2 + y0 * s;
	  // the colour app.css gives this pill's shape
	  const look = document.createElementNS("http://www.w3.org/2000/svg", "g");
	  look.setAttribute("class", g.getAttribute("class"));
	  const rect = document.createElementNS("http://www.w3.org/2000/svg", "rect");
	  look.append(rect); msgs.append(look);
	  const want = getComputedStyle(rect).fill.match(/\d+/g).slice(0, 3).map(Number);
	  look.remove();
	  // the canvas 4 px inside the pill's left end, clear of its label
	  const canvas = document.querySelector("#svg-wrap .msg-layer"), cb = canvas.getBoundingClientRect();
	  const k = canvas.width / cb.width, ctx = canvas.getContext("2d");
	  // half the pill's width: "REQ" in a 16-unit pill (layout.js, pillSize; N > 12)
	  const half = (3 * 16 * 0.52 + 16 * 0.8) / 2 * s;
	  const px = ctx.getImageData(Math.round((cx - half + 4 * s - cb.left) * k), Math.round((cy - cb.top) * k), 1, 1).data;
	  const empty = ctx.getImageData(0, 0, 1, 1).data;
	  return { ID: id, X: cx, Y: cy, Want: want, Got: [...px].slice(0, 3), Empty: [...empty], };
	})()`)
	for c := range 3 {
		if d := p.Got[c] - p.Want[c]; d < -10 || d > 10 {
			t.Fatalf("message #%d's pill on the canvas is rgb %v, want its colour rgb %v", p.ID, p.Got, p.Want)
		}
	}
	if p.Empty[3] != 0 {
		t.Errorf("the canvas's corner, where no message is, is painted: rgba %v", p.Empty)
	}

	// A click on the pill opens its menu.
	run(t, ctx, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.getElementById("view").dispatchEvent(new MouseEvent("click", { clientX: %f, clientY: %f, bubbles: true }))`, p.X, p.Y)))
	waitFor(t, ctx, `!document.getElementById("msg-menu").hidden`)
	if title := eval[string](t, ctx, `document.getElementById("msg-menu-title").textContent`); !strings.Contains(title, fmt.Sprintf("#%d:", p.ID)) {
		t.Errorf("a click on message #%d's pill opened the menu of %q", p.ID, title)
	}

	// The export draws every message in flight as SVG, placed and coloured.
	captureBlobs(t, ctx)
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById("export-view-svg").click()`))
	view := parseSVG(t, lastBlob(t, ctx, 1))
	pills := 0
	view.walk(func(e *svgNode) {
		if e.XMLName.Local != "g" || !strings.Contains(" "+e.attr("class")+" ", " msg ") {
			return
		}
		pills++
		if !strings.HasPrefix(e.attr("transform"), "translate(") {
			t.Errorf("message %s in the file has no place: transform %q", e.attr("data-id"), e.attr("transform"))
		}
		var fill, label string
		for _, c := range e.Children {
			switch c.XMLName.Local {
			case "rect":
				fill = c.attr("fill")
			case "text":
				label = c.Text
			}
		}
		if !strings.HasPrefix(fill, "#") || label != "REQ" {
			t.Errorf("message %s in the file: fill %q, label %q", e.attr("data-id"), fill, label)
		}
	})
	if pills != 93 {
		t.Errorf("the view file draws %d messages, want the 93 in flight", pills)
	}
	if !eval[bool](t, ctx, `getComputedStyle(document.getElementById("msgs")).display === "none"`) {
		t.Error("after the export the SVG pills still show over the canvas")
	}
}
