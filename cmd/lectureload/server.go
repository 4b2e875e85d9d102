package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/teach-dist/playground/runtime/lecture"
	"github.com/teach-dist/playground/web"
)

// The server under load: a child process of the tool, so that its CPU and memory
// (from /proc) are its own and not the followers'.

// serve is the child: the real playground server on a loopback port, printed on stdout.
func serve(maxFollowers int) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	// Every follower of the tool comes from 127.0.0.1: one client, whose share is then
	// the whole cap.
	opts := lecture.Options{MaxFollowers: maxFollowers}
	opts.FollowersPerClient = opts.FollowerCap()
	srv := web.New(web.Options{Lecture: opts})
	return srv.ListenAndServe(ctx, "127.0.0.1:0", func(addr string) { fmt.Println(addr) })
}

// child starts the server process and returns its address.
func child(maxFollowers int) (*exec.Cmd, string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, "", err
	}
	cmd := exec.Command(exe, "-serve", "-max-followers", strconv.Itoa(maxFollowers))
	cmd.Env = append(os.Environ(), childEnv+"=1") // a test binary becomes the child (cluster_test.go)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, "", fmt.Errorf("the server did not start: %w", err)
	}
	return cmd, strings.TrimSpace(line), nil
}

// cpuTicks is the child's user+system CPU time, in clock ticks, from /proc.
func cpuTicks(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name may hold spaces: the fields start after its closing parenthesis.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("cannot read /proc stat")
	}
	return utime + stime, nil
}

// clockTicks is USER_HZ: 100 on every Linux this runs on.
const clockTicks = 100

// procStatus is one field of /proc/pid/status (VmRSS: the resident memory now; VmHWM:
// its peak), as the kernel writes it ("299360 kB"), or "?".
func procStatus(pid int, field string) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

// peakRSS is the peak of the resident memory of process pid (VmHWM).
func peakRSS(pid int) string { return procStatus(pid, "VmHWM") }

// loadAverage is the machine's load average over 1, 5 and 15 minutes (/proc/loadavg).
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "?"
}
