// Package procfs reads what Linux's /proc says of a process (its CPU time, memory and
// children, whether it still runs) and of the machine (its load), for the load and
// abuse tools, which measure a server they started beside themselves.
package procfs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ClockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat: 100 on every
// Linux architecture Go runs on.
const ClockTicks = 100

// Stat is the fields of /proc/PID/stat after the command's name, which is in
// parentheses and may hold spaces: the state first, then the parent's pid. Nil when
// the process is gone.
func Stat(pid int) []string { return statFields(fmt.Sprintf("/proc/%d/stat", pid)) }

func statFields(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
}

// CPUTicks is the CPU time (user and system, in ClockTicks) the process has used.
func CPUTicks(pid int) (int64, error) {
	f := Stat(pid)
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: gone, or too few fields", pid)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64) // field 14 of the whole line
	stime, err2 := strconv.ParseInt(f[12], 10, 64) // field 15
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: bad utime or stime", pid)
	}
	return utime + stime, nil
}

// CPU is CPUTicks as a duration.
func CPU(pid int) (time.Duration, error) {
	t, err := CPUTicks(pid)
	return time.Duration(t) * time.Second / ClockTicks, err
}

// Status is one field of /proc/PID/status as the kernel writes it (VmRSS, the resident
// memory now, "299360 kB"; VmHWM, its peak), or "?".
func Status(pid int, field string) string {
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

// Memory is a memory field of /proc/PID/status (VmRSS, VmHWM) in bytes.
func Memory(pid int, field string) (int64, error) {
	v := Status(pid, field)
	kb, err := strconv.ParseInt(strings.TrimSuffix(v, " kB"), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("/proc/%d/status: %s is %q", pid, field, v)
	}
	return kb << 10, nil
}

// Children are the processes whose parent is pid (a server's sandbox workers).
func Children(pid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	parent := strconv.Itoa(pid)
	var out []int
	for _, path := range stats {
		if f := statFields(path); len(f) > 1 && f[1] == parent {
			n, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
			out = append(out, n)
		}
	}
	return out
}

// Ended reports whether process pid no longer runs: gone, or a zombie.
func Ended(pid int) bool {
	f := Stat(pid)
	return len(f) == 0 || f[0] == "Z" || f[0] == "X"
}

// LoadAverage is the machine's load average over 1, 5 and 15 minutes, or "?": how busy
// it was, since the tools share it with other jobs.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "?"
}
