package main

import (
	"archive/zip"
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The playground's own package: the binary an autograder runs.
const mainPackage = "github.com/teach-dist/playground/cmd/playground"

// rootEnv points run_autograder at another root than Gradescope's /autograder (tests
// unpack an autograder into a temporary folder).
const rootEnv = "PLAYGROUND_AUTOGRADER_ROOT"

// setupScript is Gradescope's setup.sh: it runs once, as root, when the autograder's
// image is built, from /autograder/source. Everything is in the zip: it fetches
// nothing, and checks that the binary runs on the image.
const setupScript = `#!/bin/sh
# Gradescope runs this once when it builds the autograder's image. The playground
# binary is in the zip (static, linux/amd64): nothing is fetched.
set -eu
cd "$(dirname "$0")"
chmod 755 playground run_autograder
./playground grade --help >/dev/null 2>&1
`

// runScript is Gradescope's run_autograder: it grades /autograder/submission/ and
// writes /autograder/results/results.json; $PLAYGROUND_AUTOGRADER_ROOT replaces
// /autograder.
const runScript = `#!/bin/sh
# Gradescope runs this for each submission: it grades the .star file in
# $ROOT/submission/ against assignment.json and writes $ROOT/results/results.json.
# ROOT is /autograder, or $PLAYGROUND_AUTOGRADER_ROOT when set.
set -u
root="${PLAYGROUND_AUTOGRADER_ROOT:-/autograder}"
mkdir -p "$root/results"
exec "$root/source/playground" grade --quiet %s--gradescope "$root/results/results.json" \
	"$root/source/assignment.json" "$root/submission"
`

func packCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("grade pack", stderr)
	out := fs.String("o", "", "the zip to write (required)")
	binary := fs.String("binary", "", "the playground binary to put in the zip (static, linux/amd64); default: this one if it is such a build, else one built from this module with CGO_ENABLED=0")
	url := fs.String("url", "", "the playground's address, for counterexample links in the results (e.g. https://play.example.edu)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, `usage: playground grade pack [flags] ASSIGNMENT -o autograder.zip

Builds a Gradescope autograder for ASSIGNMENT (a curated assignment or a file): setup.sh,
run_autograder, assignment.json and the playground binary. Upload the zip as the
programming assignment's autograder (docs/assignments.md).`)
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args, 1, "grade pack: expected exactly one ASSIGNMENT")
	if err != nil {
		return err
	}
	if *out == "" {
		return errors.New("grade pack: -o FILE is required")
	}
	if strings.ContainsAny(*url, "'\"\\$` \n") {
		return fmt.Errorf("grade pack: --url: %q is not an address", *url)
	}
	a, err := loadAssignment(pos[0])
	if err != nil {
		return err
	}
	doc, err := a.Marshal()
	if err != nil {
		return err
	}
	bin := *binary
	if bin == "" {
		tmp, err := os.MkdirTemp("", "playground-pack-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		if bin, err = autograderBinary(tmp, stderr); err != nil {
			return err
		}
	}
	if err := checkStatic(bin); err != nil {
		return fmt.Errorf("grade pack: %s: %v", bin, err)
	}
	exe, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	urlFlag := ""
	if *url != "" {
		urlFlag = "--url '" + strings.TrimSuffix(*url, "/") + "' "
	}
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	files := []struct {
		name string
		mode os.FileMode
		data []byte
	}{
		{"setup.sh", 0o755, []byte(setupScript)},
		{"run_autograder", 0o755, []byte(fmt.Sprintf(runScript, urlFlag))},
		{"assignment.json", 0o644, doc},
		{"playground", 0o755, exe},
	}
	// A fixed time: the same assignment and binary make the same zip.
	stamp := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, f := range files {
		h := &zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: stamp}
		h.SetMode(f.mode)
		w, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		if _, err := w.Write(f.data); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := os.WriteFile(*out, zbuf.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: the autograder of %s (%s points), %d bytes\n", *out, a.Name, strconvPoints(a.MaxScore()), zbuf.Len())
	return nil
}

// autograderBinary is this executable when it is a static linux/amd64 playground, else
// a playground built into dir from this module's source with CGO_ENABLED=0 (the go
// command and the module's source must be at hand: run it inside the module, or give
// --binary).
func autograderBinary(dir string, stderr io.Writer) (string, error) {
	if exe, err := os.Executable(); err == nil {
		if bi, err := buildinfo.ReadFile(exe); err == nil && bi.Path == mainPackage && checkStatic(exe) == nil {
			return exe, nil
		}
	}
	out := filepath.Join(dir, "playground")
	fmt.Fprintln(stderr, "grade pack: building a static linux/amd64 playground (CGO_ENABLED=0)")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, mainPackage)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("grade pack: building the playground (run inside its module, or give --binary): %v\n%s", err, msg)
	}
	return out, nil
}

// checkStatic accepts a linux/amd64 executable that needs no dynamic loader (what
// Gradescope's images run without installing anything) and is the playground.
func checkStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("not a Linux executable: %v", err)
	}
	defer f.Close()
	if f.Machine != elf.EM_X86_64 || (f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN) {
		return fmt.Errorf("not a linux/amd64 executable (%v, %v)", f.Machine, f.Type)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return errors.New("it is linked dynamically: build it with CGO_ENABLED=0")
		}
	}
	bi, err := buildinfo.ReadFile(path)
	if err != nil || bi.Path != mainPackage {
		return fmt.Errorf("not the playground (%s)", mainPackage)
	}
	return nil
}

func strconvPoints(v float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".")
}
