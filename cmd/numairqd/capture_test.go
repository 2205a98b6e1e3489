package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/numairqd/numairqd/pkg/capture"
)

// TestCapture captures the plan fixture with a config and a file it
// cannot read (a FIFO): one summary line, the manifest saying why, the
// file left out, the config in; an existing file is never overwritten;
// - is stdout.
func TestCapture(t *testing.T) {
	tree := planFixture(t)
	if err := syscall.Mkfifo(tree.Path("proc/irq/default_smp_affinity"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, "banned_cpus: 7\n")
	out := filepath.Join(t.TempDir(), "c.tar.gz")
	args := []string{"capture", "-o", out, "--sysfs", tree.Sys(), "--procfs", tree.Proc(), "--etc", "", "--config", cfg}
	code, stdout, stderr := runCmd(args...)
	if code != 0 || stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	summary := regexp.MustCompile(`^numairqd capture: wrote ` + regexp.QuoteMeta(out) + `: \d+ bytes, \d+ entries, took \S+; (\d+) could not be read \(listed in its manifest.json\)(; not run as root, so it lacks what only root may read)?\n$`)
	m := summary.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("stderr %q, want one summary line", stderr)
	}
	r, err := capture.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if b, err := os.ReadFile(r.Config); err != nil || string(b) != "banned_cpus: 7\n" {
		t.Errorf("config %q, %v", b, err)
	}
	want := capture.Missing{Path: "proc/irq/default_smp_affinity", Why: "malformed: not a regular file (a named pipe)"}
	if m[1] != "1" || !slices.Contains(r.Manifest.Missing, want) || r.Manifest.Root != (os.Geteuid() == 0) || !strings.Contains(r.Manifest.Version, "numairqd ") {
		t.Errorf("%s could not be read, manifest %+v; want %v in it", m[1], r.Manifest, want)
	}
	if _, err := os.Lstat(filepath.Join(r.Roots.Proc, "irq/default_smp_affinity")); !os.IsNotExist(err) {
		t.Errorf("the capture holds the FIFO: %v", err)
	}
	if code, _, stderr := runCmd(args...); code != 1 || !strings.Contains(stderr, "file exists") {
		t.Errorf("over an existing file: exit %d, %q; want 1 and file exists", code, stderr)
	}
	args[2] = "-"
	code, stdout, _ = runCmd(args...)
	if code != 0 || !bytes.HasPrefix([]byte(stdout), []byte{0x1f, 0x8b}) {
		t.Errorf("-o -: exit %d, %d bytes on stdout, want a gzip", code, len(stdout))
	}
	if code, _, stderr := runCmd("capture", "-o", filepath.Join(t.TempDir(), "x"), "--sysfs", tree.Sys(), "--procfs", tree.Proc(), "--config", filepath.Join(t.TempDir(), "none.yaml")); code != 1 || !strings.Contains(stderr, "none.yaml") {
		t.Errorf("a missing config: exit %d, %q; want 1 naming it", code, stderr)
	}
}

// TestCaptureUnreadable: a machine numairqd cannot read is still
// captured, for the bug report, and stderr says why it cannot be read.
func TestCaptureUnreadable(t *testing.T) {
	tree := planFixture(t)
	tree.WriteFile("sys/devices/system/node/node0/distance", "10 zz\n")
	out := filepath.Join(t.TempDir(), "c.tar.gz")
	code, _, stderr := runCmd("capture", "-o", out, "--sysfs", tree.Sys(), "--procfs", tree.Proc(), "--etc", "")
	if code != 0 || !strings.Contains(stderr, "warning: numairqd cannot read this machine: ") || !strings.Contains(stderr, "node0/distance") {
		t.Fatalf("exit %d, stderr %q; want 0 and a warning naming node0/distance", code, stderr)
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("no capture: %v", err)
	}
}
