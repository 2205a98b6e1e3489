package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/numairqd -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s:\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}

// runCmd runs the command line in-process and returns its outputs.
func runCmd(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestUsage(t *testing.T) {
	if code, _, stderr := runCmd("frobnicate"); code != 2 || !bytes.Contains([]byte(stderr), []byte(`unknown command "frobnicate"`)) {
		t.Errorf("code %d, stderr %q", code, stderr)
	}
	if code, stdout, _ := runCmd("help"); code != 0 || stdout == "" {
		t.Errorf("help: code %d", code)
	}
	// Nothing that writes /proc/irq starts without its name.
	if code, stdout, stderr := runCmd(); code != 2 || stdout != "" || !strings.Contains(stderr, "no command") || !strings.Contains(stderr, "usage: numairqd <command>") {
		t.Errorf("no arguments: code %d, stdout %q, stderr %q; want 2 and the usage", code, stdout, stderr)
	}
	if code, _, stderr := runCmd("-x", "--dry-run"); code != 2 || !strings.Contains(stderr, `"numairqd run -x --dry-run"`) {
		t.Errorf("flags without a command: code %d, stderr %q", code, stderr)
	}
	for typo, want := range map[string]string{"pln": "plan", "relaod": "reload", "topolgy": "topology", "rn": "run", "verison": "version", "stauts": "status"} {
		if code, _, stderr := runCmd(typo); code != 2 || !strings.Contains(stderr, fmt.Sprintf("did you mean %q?", want)) {
			t.Errorf("%s: code %d, stderr %q; want a hint of %s", typo, code, stderr, want)
		}
	}
	if _, _, stderr := runCmd("frobnicate"); strings.Contains(stderr, "did you mean") {
		t.Errorf("frobnicate is near no command, but: %q", stderr)
	}
	// -h is a request, not a mistake: every command answers it with 0.
	for _, cmd := range commands {
		want := "usage: numairqd " + cmd
		if cmd == "help" {
			want = "usage: numairqd <command>"
		}
		if code, stdout, stderr := runCmd(cmd, "-h"); code != 0 || !strings.Contains(stdout, want) || stderr != "" {
			t.Errorf("%s -h: code %d, stdout %q, stderr %q; want 0 and %q, once, on stdout", cmd, code, stdout, stderr, want)
		}
	}
}

// TestBoundProcs: GOMAXPROCS is procs by default, largeProcs once the
// host is large, never above the runtime's default, and what the
// environment says when it says.
func TestBoundProcs(t *testing.T) {
	old := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(old) })
	runtime.GOMAXPROCS(8)
	t.Setenv("GOMAXPROCS", "")
	os.Unsetenv("GOMAXPROCS")
	s := boundProcs()
	if got := runtime.GOMAXPROCS(0); got != procs {
		t.Errorf("GOMAXPROCS = %d from 8 without the variable, want %d", got, procs)
	}
	for _, tc := range []struct{ irqs, want int }{{40, procs}, {largeHost, largeProcs}, {10, procs}} {
		s.fit(tc.irqs)
		if got := runtime.GOMAXPROCS(0); got != tc.want {
			t.Errorf("GOMAXPROCS = %d for %d device IRQs, want %d", got, tc.irqs, tc.want)
		}
	}
	runtime.GOMAXPROCS(1)
	s = boundProcs()
	s.fit(largeHost)
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("GOMAXPROCS = %d from a default of 1 on a large host, want 1: never raised", got)
	}
	runtime.GOMAXPROCS(8)
	t.Setenv("GOMAXPROCS", "8")
	s = boundProcs()
	s.fit(10)
	if got := runtime.GOMAXPROCS(0); got != 8 {
		t.Errorf("GOMAXPROCS = %d with GOMAXPROCS=8 set, want 8", got)
	}
}
