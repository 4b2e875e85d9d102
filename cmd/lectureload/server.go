package main

import (
	"bufio"
	"context"
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
