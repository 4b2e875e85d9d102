package e2e

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/tracing"
	"github.com/chromedp/chromedp"

	"github.com/teach-dist/playground/static"
	"github.com/teach-dist/playground/web"
)

// The tools of the heavy-traffic probe (heavy_test.go): another revision's page, and
// a trace of where the page's main thread spends its time. Test code only: the
// binary serves its embedded assets and nothing else.

// staticAt extracts the static/ directory of a git revision of this repository.
func staticAt(t *testing.T, rev string) string {
	t.Helper()
	dir := t.TempDir()
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatalf("HEAVY_AB needs the git repository: %v", err)
	}
	archive := exec.Command("git", "-C", strings.TrimSpace(string(top)), "archive", "--format=tar", rev, "static")
	untar := exec.Command("tar", "-x", "-C", dir)
	var errs bytes.Buffer
	archive.Stderr, untar.Stderr = &errs, &errs
	if untar.Stdin, err = archive.StdoutPipe(); err != nil {
		t.Fatal(err)
	}
	if err := untar.Start(); err != nil {
		t.Fatal(err)
	}
	if err := archive.Run(); err != nil {
		t.Fatalf("git archive %s static: %v: %s", rev, err, errs.String())
	}
	if err := untar.Wait(); err != nil {
		t.Fatalf("untar %s: %v: %s", rev, err, errs.String())
	}
	return filepath.Join(dir, "static")
}

// serverWithStatic is the playground whose /static/ assets come from dir instead of
// the binary: the pages (this tree's templates) load that revision's scripts and CSS.
func serverWithStatic(t *testing.T, dir string) *httptest.Server {
	t.Helper()
	srv := web.New(web.Options{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, static.Prefix)
		if !ok {
			srv.ServeHTTP(w, r)
			return
		}
		_, name, _ := strings.Cut(rest, "/")
		if name == "" || strings.Contains(name, "/") || strings.HasSuffix(name, ".go") {
			http.NotFound(w, r)
			return
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		if ct := mime.TypeByExtension(path.Ext(name)); ct != "" {
			w.Header().Set("Content-Type", ct)
		}
		w.Header().Set("Cache-Control", "no-store")
		w.Write(data)
	}))
	t.Cleanup(func() {
		srv.Close()
		ts.Close()
	})
	return ts
}

// tracer records a Chrome trace of the tab (the devtools timeline's categories).
type tracer struct {
	mu     sync.Mutex
	events []json.RawMessage
	done   chan struct{}
}

func startTrace(t *testing.T, ctx context.Context) *tracer {
	t.Helper()
	tr := &tracer{done: make(chan struct{})}
	if err := chromedp.Listen(ctx, func(ev any) {
		switch e := ev.(type) {
		case *tracing.EventDataCollected:
			tr.mu.Lock()
			for _, v := range e.Value {
				b, _ := json.Marshal(v)
				tr.events = append(tr.events, b)
			}
			tr.mu.Unlock()
		case *tracing.EventTracingComplete:
			close(tr.done)
		}
	}); err != nil {
		t.Fatal(err)
	}
	cats := []string{
		"devtools.timeline", "disabled-by-default-devtools.timeline", "disabled-by-default-devtools.timeline.frame", "blink", "cc", "gpu", "v8", "v8.execute",
	}
	if os.Getenv("HEAVY_TRACE") == "invalidations" {
		// Why each element was restyled or laid out again, with the script that asked
		// (slows the page down several times: for the why, not the how much).
		cats = append(cats, "disabled-by-default-devtools.timeline.invalidationTracking", "disabled-by-default-devtools.timeline.stack")
	}
	if _, err := chromedp.Call(ctx, tracing.Start, tracing.StartParams{
		TransferMode: tracing.StartTransferModeReportEvents,
		TraceConfig:  &tracing.TraceConfig{IncludedCategories: cats},
	}); err != nil {
		t.Fatal(err)
	}
	return tr
}

// stop ends the trace and logs, per thread of the renderer, the events that took the
// most CPU time in all (nested events count in each of their parents too), the
// layouts and script calls that did, and with HEAVY_TRACE=invalidations the most
// frequent reasons elements were restyled or laid out again.
func (tr *tracer) stop(t *testing.T, ctx context.Context) {
	t.Helper()
	if _, err := chromedp.Call(ctx, tracing.End, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	<-tr.done
	if out := os.Getenv("HEAVY_TRACE_OUT"); out != "" {
		// The whole trace, as Chrome's DevTools (Performance, load profile) reads it.
		tr.mu.Lock()
		b, _ := json.Marshal(map[string]any{"traceEvents": tr.events})
		tr.mu.Unlock()
		if err := os.WriteFile(out, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	type ev struct {
		Ph   string          `json:"ph"`
		Name string          `json:"name"`
		Pid  int             `json:"pid"`
		Tid  int             `json:"tid"`
		Dur  float64         `json:"dur"`
		Tdur float64         `json:"tdur"` // thread time: CPU, which a busy machine does not stretch
		Args json.RawMessage `json:"args"`
	}
	threads := map[[2]int]string{}
	sums := map[string]map[string]float64{}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var all []ev
	for _, raw := range tr.events {
		var e ev
		if json.Unmarshal(raw, &e) != nil {
			continue
		}
		if e.Ph == "M" && e.Name == "thread_name" {
			var a struct{ Name string }
			json.Unmarshal(e.Args, &a)
			threads[[2]int{e.Pid, e.Tid}] = a.Name
		}
		all = append(all, e)
	}
	detail := map[string]float64{}
	invalid := map[string]int{} // HEAVY_TRACE=invalidations: reason, element, script line
	for i, e := range all {
		if strings.HasSuffix(e.Name, "InvalidationTracking") {
			var a struct {
				Data struct {
					Reason, NodeName string
					StackTrace       []struct {
						FunctionName, URL string
						LineNumber        int
					}
				}
			}
			json.Unmarshal(e.Args, &a)
			where := ""
			if st := a.Data.StackTrace; len(st) > 0 {
				where = fmt.Sprintf(" by %s %s:%d", st[0].FunctionName, path.Base(st[0].URL), st[0].LineNumber)
			}
			invalid[fmt.Sprintf("%s: %s, %s%s", strings.TrimSuffix(e.Name, "InvalidationTracking"), a.Data.Reason, a.Data.NodeName, where)]++
		}
		if e.Tdur > 0 {
			all[i].Dur = e.Tdur
			e.Dur = e.Tdur
		}
		if e.Ph != "X" || e.Dur == 0 {
			continue
		}
		var a struct {
			BeginData struct {
				DirtyObjects, TotalObjects int
				StackTrace                 []struct {
					FunctionName, URL string
					LineNumber        int
				}
			}
			Data struct {
				FunctionName, URL string
				LineNumber        int
			}
		}
		json.Unmarshal(e.Args, &a)
		switch e.Name {
		case "Layout":
			where := "frame"
			if st := a.BeginData.StackTrace; len(st) > 0 {
				where = fmt.Sprintf("forced by %s %s:%d", st[0].FunctionName, path.Base(st[0].URL), st[0].LineNumber)
			}
			detail[fmt.Sprintf("Layout %s, %d of %d objects", where, a.BeginData.DirtyObjects, a.BeginData.TotalObjects)] += e.Dur / 1000
		case "FunctionCall":
			detail[fmt.Sprintf("call %s %s:%d", a.Data.FunctionName, path.Base(a.Data.URL), a.Data.LineNumber)] += e.Dur / 1000
		}
	}
	keys := make([]string, 0, len(detail))
	for k := range detail {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Compare(detail[b], detail[a]) })
	for _, k := range keys[:min(25, len(keys))] {
		t.Logf("trace: %s: %.0f ms", k, detail[k])
	}
	reasons := make([]string, 0, len(invalid))
	for k := range invalid {
		reasons = append(reasons, k)
	}
	slices.SortFunc(reasons, func(a, b string) int { return cmp.Or(cmp.Compare(invalid[b], invalid[a]), strings.Compare(a, b)) })
	for _, k := range reasons[:min(25, len(reasons))] {
		t.Logf("trace, invalidated: %s: %d times", k, invalid[k])
	}
	for _, e := range all {
		if e.Ph != "X" || e.Dur == 0 {
			continue
		}
		th := cmp.Or(threads[[2]int{e.Pid, e.Tid}], fmt.Sprint(e.Tid))
		if sums[th] == nil {
			sums[th] = map[string]float64{}
		}
		sums[th][e.Name] += e.Dur / 1000
	}
	for th, m := range sums {
		names := make([]string, 0, len(m))
		for n := range m {
			names = append(names, n)
		}
		slices.SortFunc(names, func(a, b string) int { return cmp.Compare(m[b], m[a]) })
		var b strings.Builder
		for _, n := range names[:min(14, len(names))] {
			fmt.Fprintf(&b, " %s %.0f;", n, m[n])
		}
		t.Logf("trace, thread %s (ms):%s", th, b.String())
	}
}
