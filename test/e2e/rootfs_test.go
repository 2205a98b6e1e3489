//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDebianRootKeys checks that a cache entry is named by what goes
// into it: the package list in any order gives the same tarball, any
// other change another one, and the image changes with its files.
func TestDebianRootKeys(t *testing.T) {
	a := bookwormRoot()
	b := bookwormRoot()
	b.Packages = append([]string(nil), a.Packages...)
	b.Packages[0], b.Packages[1] = b.Packages[1], b.Packages[0]
	if a.tarKey() != b.tarKey() || a.imageKey() != b.imageKey() {
		t.Errorf("package order changed the keys: %s %s / %s %s", a.tarKey(), a.imageKey(), b.tarKey(), b.imageKey())
	}
	c := bookwormRoot()
	c.Packages = append(c.Packages, "busybox")
	bpo := backportsRoot()
	files := bookwormRoot()
	files.Files["/etc/hostname"] = []byte("other\n")
	for name, d := range map[string]DebianRoot{"another package": c, "backports": bpo} {
		if d.tarKey() == a.tarKey() || d.imageKey() == a.imageKey() {
			t.Errorf("%s: same keys %s %s", name, d.tarKey(), d.imageKey())
		}
	}
	if files.tarKey() != a.tarKey() || files.imageKey() == a.imageKey() {
		t.Errorf("a changed file: tarball %s (want %s), image %s (want another than %s)", files.tarKey(), a.tarKey(), files.imageKey(), a.imageKey())
	}
	if !strings.HasPrefix(bpo.tarKey(), "bookworm-backports-") || !strings.HasPrefix(bpo.imageKey(), "bookworm-backports-") {
		t.Errorf("backports keys %s %s", bpo.tarKey(), bpo.imageKey())
	}
}

// TestInitramfsRoot checks what a Scenario with a Root adds to the
// initramfs: the disk's modules, E2E_ROOT and guest/systemd.sh.
func TestInitramfsRoot(t *testing.T) {
	env := requireEnv(t)
	root := bookwormRoot()
	dst := filepath.Join(t.TempDir(), "i.cpio.gz")
	s := Scenario{Name: "root", Guest: FourNodeGuest(), Root: &root, Script: "true"}
	if err := writeInitramfs(env, s, nil, dst); err != nil {
		t.Fatal(err)
	}
	list := cpio(t, dst, "", "-it")
	for _, want := range []string{"e2e/systemd.sh\n", "lib/modules/ext4.ko\n", "lib/modules/virtio_blk.ko\n", "lib/modules/crc32c_generic.ko\n"} {
		if !strings.Contains(list, want) {
			t.Errorf("archive lacks %q", want)
		}
	}
	dir := t.TempDir()
	cpio(t, dst, dir, "-idm", "--no-absolute-filenames", "e2e/config")
	b, err := os.ReadFile(filepath.Join(dir, "e2e/config"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg := string(b); !strings.Contains(cfg, "E2E_ROOT=\"/dev/vda\"\n") {
		t.Errorf("e2e/config has no E2E_ROOT=\"/dev/vda\":\n%s", cfg)
	}
}
