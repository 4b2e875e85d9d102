package procfs

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestReadsThisProcess(t *testing.T) {
	self := os.Getpid()
	if f := Stat(self); len(f) < 13 || f[0] != "R" {
		t.Fatalf("Stat(self) = %q: want a running process's fields, state first", f)
	}
	if _, err := CPUTicks(self); err != nil {
		t.Errorf("CPUTicks(self): %v", err)
	}
	for _, field := range []string{"VmRSS", "VmHWM"} {
		if got := Status(self, field); !strings.HasSuffix(got, " kB") {
			t.Errorf("Status(self, %s) = %q, want a size in kB", field, got)
		}
		if b, err := Memory(self, field); err != nil || b < 1<<20 {
			t.Errorf("Memory(self, %s) = %d, %v: a Go test holds more than 1 MiB", field, b, err)
		}
	}
	if got := Status(self, "NoSuchField"); got != "?" {
		t.Errorf("Status of a missing field = %q, want ?", got)
	}
	if f := strings.Fields(LoadAverage()); len(f) != 3 {
		t.Errorf("LoadAverage() = %q, want three figures", LoadAverage())
	}
}

// A child is listed under its parent while it runs, and has ended once reaped.
func TestChildrenAndEnded(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep to start:", err)
	}
	pid := cmd.Process.Pid
	if !slices.Contains(Children(os.Getpid()), pid) {
		t.Errorf("Children(self) = %v, want it to hold the child %d", Children(os.Getpid()), pid)
	}
	if Ended(pid) {
		t.Errorf("Ended(%d) while it sleeps", pid)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if !Ended(pid) {
		t.Errorf("Ended(%d) = false once it was killed and reaped", pid)
	}
	if _, err := CPUTicks(pid); err == nil {
		t.Errorf("CPUTicks of a reaped process: no error")
	}
	if _, err := Memory(pid, "VmRSS"); err == nil {
		t.Errorf("Memory of a reaped process: no error")
	}
}
