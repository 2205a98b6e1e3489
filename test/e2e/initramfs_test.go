//go:build e2e

package e2e

import (
	"bytes"
	"compress/gzip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestInitramfsHostBins packs Debian's dynamically linked ethtool and
// lists the archive with the host's cpio; as root it also runs the
// packed ethtool in a chroot of the archive, which has no ld.so.cache,
// as the guest has none.
func TestInitramfsHostBins(t *testing.T) {
	env := requireEnv(t)
	ethtool := env.ethtool
	if _, err := exec.LookPath("cpio"); err != nil {
		t.Fatalf("no cpio to list the archive: %s", installHint)
	}
	dst := filepath.Join(t.TempDir(), "i.cpio.gz")
	ir := initramfs{Busybox: env.busybox, HostBins: []string{ethtool}}
	if err := ir.write(dst); err != nil {
		t.Fatal(err)
	}
	list := cpio(t, dst, "", "-itv")
	for _, want := range []string{
		" usr/sbin/ethtool\n",
		" lib/x86_64-linux-gnu/libc.so.6\n",
		" lib/x86_64-linux-gnu/libmnl.so.0\n",
		" lib/x86_64-linux-gnu/ld-linux-x86-64.so.2\n",
		" lib64/ld-linux-x86-64.so.2 -> /lib/x86_64-linux-gnu/ld-linux-x86-64.so.2\n",
	} {
		if !strings.Contains(list, want) {
			t.Errorf("archive lacks %q:\n%s", want, list)
		}
	}
	if os.Geteuid() != 0 {
		return
	}
	root := t.TempDir()
	cpio(t, dst, root, "-idm", "--no-absolute-filenames")
	out, err := exec.Command("chroot", root, ethtool, "--version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "ethtool version") {
		t.Errorf("chroot %s %s --version: %v\n%s", root, ethtool, err, out)
	}
	t.Logf("in a chroot of the archive: %s", bytes.TrimSpace(out))
}

// cpio runs cpio with args on the gzip-compressed archive in dir and
// returns what it printed.
func cpio(t *testing.T, archive, dir string, args ...string) string {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd := exec.Command("cpio", append(args, "--quiet")...)
	cmd.Dir = dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = zr, &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("cpio %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

// TestHostFilesErrors checks that a library the host lacks is named,
// with a copy of ethtool whose DT_NEEDED libmnl.so.0 is renamed.
func TestHostFilesErrors(t *testing.T) {
	if _, err := hostFiles([]string{"usr/sbin/ethtool"}); err == nil || !strings.Contains(err.Error(), `"usr/sbin/ethtool": want an absolute path`) {
		t.Errorf("relative path: %v", err)
	}
	b, err := os.ReadFile("/usr/sbin/ethtool")
	if err != nil {
		t.Skipf("%v (apt-get install -y ethtool)", err)
	}
	renamed := bytes.Replace(b, []byte("libmnl.so.0\x00"), []byte("libzzz.so.0\x00"), 1)
	if bytes.Equal(renamed, b) {
		t.Fatal("no libmnl.so.0 in /usr/sbin/ethtool")
	}
	bin := filepath.Join(t.TempDir(), "ethtool")
	if err := os.WriteFile(bin, renamed, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = hostFiles([]string{bin})
	if err == nil || !strings.Contains(err.Error(), bin+" needs libzzz.so.0: not found in /lib/x86_64-linux-gnu, /usr/lib/x86_64-linux-gnu, /lib64") {
		t.Errorf("missing library: %v", err)
	}
	script := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"+strings.Repeat("# not ELF\n", 8)), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := hostFiles([]string{script}); err == nil || !strings.Contains(err.Error(), script+": bad magic number") {
		t.Errorf("not ELF: %v", err)
	}
}
