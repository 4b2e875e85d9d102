package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// shownGroup is what the view shows of a process's group (Stage.Group).
type shownGroup struct {
	Owner   string
	Members []string
	Lines   int
	Note    string
}

const showGroupJS = `(() => {
  const note = document.getElementById("group-note");
  return {
    Owner: document.getElementById("view").dataset.group || "",
    Members: [...document.querySelectorAll("#view g.node.in-group")].map((e) => e.dataset.id),
    Lines: document.querySelectorAll("#view .group-line").length,
    Note: note && !note.hidden ? note.textContent : "",
  };
})()`

func hoverAt(t *testing.T, x, y float64) chromedp.Action[chromedp.Void] {
	t.Helper()
	return chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x, y)
}

// wantGroup waits for the view to show owner's group and checks it.
func wantGroup(t *testing.T, got func() shownGroup, owner string, members []string, note string) {
	t.Helper()
	g := got()
	if g.Owner != owner || fmt.Sprint(g.Members) != fmt.Sprint(members) || g.Note != note || (owner != "" && g.Lines != len(members)-1) {
		t.Fatalf("shown %+v, want P%s's group %v (%d lines), note %q", g, owner, members, len(members)-1, note)
	}
}

// Maekawa declares its voting set as the stage's group: hovering a process shows its
// set, the notes' V_k for Pk (002, N=7), and selecting one keeps it shown; on note
// 003's grid, p14's set is the note's.
func TestVotingSetShownOnHoverAndSelection(t *testing.T) {
	// The note also says what built the sets and their K (Stage.GroupAbout), so the page labels the construction honestly.
	const notes7 = ". Sets: the notes' sets for N=7 (the projective plane of order 2): K=3"
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 720)
	got := func() shownGroup { return eval[shownGroup](t, ctx, showGroupJS) }
	node := func(id int) string { return fmt.Sprintf(`#view g.node[data-id="%d"] .body`, id) }

	run(t, ctx, chromedp.Navigate(ts.URL+"/play/maekawa"))
	ready(t, ctx)
	wantGroup(t, got, "", nil, "")
	x, y := center(t, ctx, node(2))
	run(t, ctx, hoverAt(t, x, y))
	waitFor(t, ctx, `document.getElementById("view").dataset.group === "2"`)
	wantGroup(t, got, "2", []string{"2", "4", "6"}, "voting set of P2 (K=3): P2 P4 P6"+notes7)
	// Off the processes, nothing is selected: no group.
	run(t, ctx, hoverAt(t, 2, 2))
	waitFor(t, ctx, `document.getElementById("view").dataset.group === ""`)
	wantGroup(t, got, "", nil, "")

	// A click selects P7: its set V7 = {3, 4, 7} stays once the pointer leaves.
	run(t, ctx, chromedp.Click(chromedp.CSS(fmt.Sprintf(`#view g.node[data-id="%d"]`, 7))), hoverAt(t, 2, 2))
	waitFor(t, ctx, `document.getElementById("view").dataset.group === "7"`)
	wantGroup(t, got, "7", []string{"3", "4", "7"}, "voting set of P7 (K=3): P3 P4 P7"+notes7)
	// Hovering another process (one the process menu does not cover) shows its set
	// meanwhile: V4 = {1, 4, 5}.
	x, y = center(t, ctx, node(4))
	run(t, ctx, hoverAt(t, x, y))
	waitFor(t, ctx, `document.getElementById("view").dataset.group === "4"`)
	wantGroup(t, got, "4", []string{"1", "4", "5"}, "voting set of P4 (K=3): P1 P4 P5"+notes7)

	// The inspector says it too, cut to its column, whole in the tooltip.
	if about := eval[string](t, ctx, `[...document.querySelectorAll("#vars tbody td.long")].map((td) => td.title).join("|")`); about != strings.Repeat(notes7[len(". Sets: "):]+"|", 6)+notes7[len(". Sets: "):] {
		t.Errorf("the inspector's construction cells say %q", about)
	}

	run(t, ctx, chromedp.Navigate(ts.URL+"/s/maekawa-grid-36"))
	ready(t, ctx)
	x, y = center(t, ctx, node(14))
	run(t, ctx, hoverAt(t, x, y))
	waitFor(t, ctx, `document.getElementById("view").dataset.group === "14"`)
	wantGroup(t, got, "14", []string{"2", "8", "13", "14", "15", "16", "17", "18", "20", "26", "32"},
		"voting set of P14 (K=11): P2 P8 P13 P14 P15 P16 P17 P18 P20 P26 P32. Sets: a grid of 6 rows by 6 columns, a set being a row plus a column: K=11")
	screenshot(t, ctx, "voting-set.png")
}
