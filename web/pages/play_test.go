package pages

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// The header's menu by who sees the page: a run's own page (its session) may start a
// lecture, copy a link, export with an embed code and explore; a lecture follower's (no
// session, the lecture's API) may only export, without an embed code; a page with
// neither offers none of them.
func TestMoreMenuByRole(t *testing.T) {
	ids := []string{`id="lecture-start"`, `id="copy-link"`, `id="export-menu"`, `id="export-embed"`, `id="explore-open"`}
	for _, tc := range []struct {
		name, session, api string
		want               []bool // each of ids
	}{
		{"own run", "s1", "/api/sessions/s1", []bool{true, true, true, true, true}},
		{"follower", "", "/api/lectures/KXT49P", []bool{false, false, true, false, false}},
		{"neither", "", "", []bool{false, false, false, false, false}},
	} {
		var buf bytes.Buffer
		m := moreMenu{Slug: "bully", Session: tc.session, API: tc.api, ExploreMaxNodes: 5}
		if err := moreMenuView(m).Render(context.Background(), &buf); err != nil {
			t.Fatal(err)
		}
		for i, id := range ids {
			if got := strings.Contains(buf.String(), id); got != tc.want[i] {
				t.Errorf("%s: %s shown %v, want %v", tc.name, id, got, tc.want[i])
			}
		}
		if tc.api != "" && !strings.Contains(buf.String(), `href="`+tc.api+`/trace?download=1"`) {
			t.Errorf("%s: the trace export does not read %s", tc.name, tc.api)
		}
	}
}
