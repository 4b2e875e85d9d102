package main

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"syscall"
	"time"
)

// measured is one child process's run: its output and what it cost.
type measured struct {
	stdout, stderr string
	exit           int  // -1 when it was killed
	timedOut       bool // killed at the deadline
	wall           time.Duration
	cpu            time.Duration // user + system
	peakRSS        int64         // bytes, the kernel's maximum resident set size
}

// runMeasured runs name with args in dir and takes its figures from the kernel
// (getrusage of the child: the same numbers /usr/bin/time -v prints). A run that
// outlives timeout is killed and reported as such, not as an error.
func runMeasured(ctx context.Context, timeout time.Duration, dir, name string, args ...string) (*measured, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	m := &measured{wall: time.Since(start), stdout: out.String(), stderr: errb.String()}
	if cmd.ProcessState == nil {
		return nil, err // it never started
	}
	m.exit = cmd.ProcessState.ExitCode()
	m.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		m.peakRSS = ru.Maxrss * 1024 // kilobytes on Linux
	}
	var exitErr *exec.ExitError
	switch {
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		m.timedOut = true
	case err != nil && !errors.As(err, &exitErr):
		return nil, err
	}
	return m, nil
}
