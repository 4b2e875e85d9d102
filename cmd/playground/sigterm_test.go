package main

import (
	"bufio"
	"bytes"
	"compress/flate"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/internal/testwait"
)

// envAsMain makes this test binary the playground itself: a test runs `playground
// serve` as a process of its own, signals and all, without building it. The sandbox's
// workers are this binary too (runtime/sandbox serves them before TestMain).
const envAsMain = "PLAYGROUND_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(envAsMain) != "" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// slowSource is a source whose request handler takes minutes of CPU unless something
// stops it (the sandbox's deadline, the interpreter's bounds); it loads at once.
const slowSource = `title = "Slow"
family = "mutex"
rules = [rule("S-1", lines = ["do it"], says = "does it")]
messages = [message("PING", "PING")]

def init(setup):
    return {}

def on_request(ctx, s):
    big = list(range(65536)) * 15
    for i in range(50000):
        max(big)
`

// serveProcess runs `playground serve` on loopback as a child process and returns
// its base URL.
func serveProcess(t *testing.T) (*exec.Cmd, string, <-chan error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "serve", "--addr", "127.0.0.1:0", "--shutdown-timeout", "10s")
	cmd.Env = append(os.Environ(), envAsMain+"=1")
	stdout := newLineWriter()
	cmd.Stdout, cmd.Stderr = stdout, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill() // ours, started above; only if the test failed before it ended
		}
	})
	return cmd, stdout.await(t, servingRE), exited
}

// children are the processes whose parent is pid (/proc/*/stat).
func children(t *testing.T, pid int) []int {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // it ended meanwhile
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Dir(path), "/proc/"), "/"))
			out = append(out, n)
		}
	}
	return out
}

// gone reports whether process pid has ended (a zombie nobody reaped counts: it runs
// nothing).
func gone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && (f[0] == "Z" || f[0] == "X")
}

// attackerSession opens a run, makes it run slowSource and plays it: its first request
// keeps a sandbox worker busy.
func attackerSession(t *testing.T, base string, hc *http.Client, k int) (string, *websocket.Conn) {
	t.Helper()
	code, body := fetchPage(t, hc, base+"/play/ricart-agrawala?n=3")
	m := sessionRE.FindStringSubmatch(body)
	if code != http.StatusOK || m == nil {
		t.Fatalf("attacker's page %d: %d", k, code)
	}
	conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(base, "http")+"/ws/"+m[1], http.Header{"Origin": {base}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	readUntil(t, conn, "snapshot")
	sc := map[string]any{"version": 1, "algorithm": "ricart-agrawala", "nodes": 3, "seed": 1, "source": slowSource,
		"events": []map[string]any{{"at": 1, "do": "request", "node": 0}, {"at": 1, "do": "request", "node": 1}}}
	frame, _ := json.Marshal(map[string]any{"type": "reset", "scenario": sc})
	if err := conn.WriteMessage(websocket.TextMessage, frame); err != nil {
		t.Fatal(err)
	}
	readUntil(t, conn, "hello") // the run is the source's now
	if err := conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"play"}`)); err != nil {
		t.Fatal(err)
	}
	return m[1], conn
}

func fetchPage(t *testing.T, hc *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := hc.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// readUntil reads conn's frames until one of type typ.
func readUntil(t *testing.T, conn *websocket.Conn, typ string) {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(testwait.Limit)) // a hang becomes a failure
	for {
		_, b, err := conn.ReadMessage()
		if err != nil {
			t.Fatalf("waiting for a %s frame: %v", typ, err)
		}
		var f struct{ Type string }
		if json.Unmarshal(b, &f) == nil && f.Type == typ {
			return
		}
	}
}

// SIGTERM to a real `playground serve` while students' sources keep its sandbox busy
// (four runs whose handler takes minutes, a Check of that source, a link whose
// loading takes minutes): the process exits within 15 s with status 0 (the Check is
// stopped, not waited for), and its sandbox workers end with it. Before the sandbox
// the handlers ran in the server, which went on for minutes after SIGTERM.
func TestSIGTERMDuringASourceAttackEndsTheServerAndItsWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the server as a process")
	}
	cmd, base, exited := serveProcess(t)
	hc := &http.Client{Transport: &http.Transport{}}
	var ids []string
	for k := range 4 {
		id, _ := attackerSession(t, base, hc, k)
		ids = append(ids, id)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/sessions/"+ids[0]+"/explore", nil)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	checkStarted := bufio.NewScanner(resp.Body)
	for checkStarted.Scan() && !strings.Contains(checkStarted.Text(), `"type":"start"`) {
	}
	go func() { _, _ = io.Copy(io.Discard, resp.Body) }() // the Check runs the source
	spin := strings.Replace(slowSource, "def init(setup):", "big = list(range(65536)) * 15\nspin = [max(big) for i in range(50000)]\n\ndef init(setup):", 1)
	doc, _ := json.Marshal(map[string]any{"scenario": map[string]any{"version": 1, "algorithm": "ricart-agrawala",
		"nodes": 3, "seed": 1, "source": spin}, "step": 3})
	go func() {
		linkReq, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/r/"+linkCode(doc), nil)
		if resp, err := hc.Do(linkReq); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	var workers []int
	testwait.For(t, "the server's sandbox workers running the attack", func() bool {
		workers = children(t, cmd.Process.Pid)
		return len(workers) >= 2
	})

	t.Logf("%d sandbox workers before SIGTERM", len(workers))
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := testwait.RecvWithin(t, 15*time.Second, "the server exiting after SIGTERM", exited); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("serve: %v", err)
		}
		t.Errorf("serve exited with %v after SIGTERM, want 0", err)
	}
	t.Logf("the server exited %v after SIGTERM", time.Since(sent).Round(time.Millisecond))
	for _, pid := range workers {
		testwait.For(t, fmt.Sprintf("sandbox worker %d ending with the server", pid), func() bool { return gone(pid) })
	}
}

// linkCode is a format 3 link of doc (a link's JSON), made without loading its source
// here.
func linkCode(doc []byte) string {
	var buf bytes.Buffer
	zw, _ := flate.NewWriter(&buf, flate.BestCompression) // the level is valid
	_, _ = zw.Write(doc)
	_ = zw.Close()
	return "v3.ricart-agrawala." + base64.RawURLEncoding.EncodeToString(buf.Bytes())
}
