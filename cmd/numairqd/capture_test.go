package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/pkg/capture"
)

// TestCapture captures the plan fixture with a config and a file it
// cannot read: one summary line, the manifest saying why, the config in
// the capture; an existing file is never overwritten; - is stdout.
func TestCapture(t *testing.T) {
	tree := planFixture(t)
	tree.WriteFileMode("proc/irq/default_smp_affinity", "ff\n", 0o000)
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
	root := os.Geteuid() == 0
	if r.Manifest.Root != root || (m[1] == "1") == root || !strings.Contains(r.Manifest.Version, "numairqd ") {
		t.Errorf("root %v, %s could not be read, manifest %+v", root, m[1], r.Manifest)
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
