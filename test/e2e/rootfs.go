//go:build e2e

package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// DebianRoot is a Debian root filesystem built with mmdebstrap from
// Debian's packages, booted on a virtio disk with systemd as PID 1
// (Scenario.Root). Building it downloads the packages once; the result
// is cached (RootCacheDir), keyed by everything that goes into it.
type DebianRoot struct {
	Suite    string   // "bookworm"
	Mirror   string   // "http://deb.debian.org/debian"
	Variant  string   // mmdebstrap --variant: "minbase"
	Packages []string // --include, besides the variant's
	// Backports, if any, are packages taken from <Suite>-backports (an
	// apt pin written before the first package is unpacked, so their
	// libraries come from there too); the suite's own otherwise.
	Backports []string
	// Files are put into the tree after the packages (path -> content,
	// mode 0644, or 0755 for a path under a bin directory or ending in
	// .sh); Links are symlinks (path -> target), e.g. to enable a unit.
	Files map[string][]byte
	Links map[string]string
	// SizeMB is the ext4 image's size (sparse).
	SizeMB int
}

// rootFormat changes whenever the way a tree or image is made changes,
// so that an old cache entry is not reused.
const rootFormat = "numairqd-e2e-root-1"

// mmdebstrapArgs are the options the tarball is built with besides the
// variant, suite and packages: no documentation, man pages or locales
// (as Debian's slim container images), which do not matter to a test.
var mmdebstrapArgs = []string{
	"--mode=root", "--format=tar",
	// merged /usr the way debootstrap makes it (usr-is-merged): without
	// it mmdebstrap 1.3 leaves usrmerge installed without perl, and every
	// later dpkg -i fails on that broken dependency.
	"--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr",
	"--dpkgopt=path-exclude=/usr/share/man/*",
	"--dpkgopt=path-exclude=/usr/share/locale/*",
	"--dpkgopt=path-exclude=/usr/share/doc/*",
	"--dpkgopt=path-include=/usr/share/doc/*/copyright",
	"--dpkgopt=path-exclude=/usr/share/info/*",
}

// RootCacheDir is where built trees and images are kept:
// $E2E_CACHE_DIR, else /var/cache/numairqd-e2e. Remove the directory to
// build afresh; entries whose key no scenario uses any more are never
// read again (rm them, or the whole directory).
func RootCacheDir() string {
	if d := os.Getenv("E2E_CACHE_DIR"); d != "" {
		return d
	}
	return "/var/cache/numairqd-e2e"
}

// tarKey names the mmdebstrap tarball: what Debian packages went in.
func (d DebianRoot) tarKey() string {
	pkgs := slicesSorted(d.Packages)
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n%s\n%s\n%s\n", rootFormat, d.Suite, d.Mirror, d.Variant,
		strings.Join(pkgs, ","), strings.Join(mmdebstrapArgs, " "))
	name := d.Suite
	if len(d.Backports) > 0 {
		fmt.Fprintf(h, "backports %s\n", strings.Join(slicesSorted(d.Backports), ","))
		name += "-backports"
	}
	return name + "-" + hex.EncodeToString(h.Sum(nil))[:16]
}

// imageKey names the ext4 image: the tarball and the files added.
func (d DebianRoot) imageKey() string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%d\n", d.tarKey(), d.SizeMB)
	for _, p := range sortedKeys(d.Files) {
		fmt.Fprintf(h, "F %s %d\n", p, len(d.Files[p]))
		h.Write(d.Files[p])
	}
	for _, p := range sortedKeys(d.Links) {
		fmt.Fprintf(h, "L %s %s\n", p, d.Links[p])
	}
	name := d.tarKey()
	return name[:strings.LastIndex(name, "-")] + "-" + hex.EncodeToString(h.Sum(nil))[:16]
}

// Image returns the cached ext4 image of d, building the tarball and
// the image first when they are not in the cache. The image is only
// ever attached with snapshot=on, so no boot changes it.
func (d DebianRoot) Image(t *testing.T) string {
	t.Helper()
	dir := RootCacheDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("root cache: %v", err)
	}
	// One builder at a time (two test binaries may share the cache).
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatalf("root cache: %v", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatalf("root cache: flock: %v", err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) //nolint:errcheck

	img := filepath.Join(dir, "root-"+d.imageKey()+".ext4")
	if _, err := os.Stat(img); err == nil {
		t.Logf("root filesystem: %s (cached; rm -r %s to rebuild)", img, dir)
		return img
	}
	tarball := filepath.Join(dir, "debian-"+d.tarKey()+".tar")
	if _, err := os.Stat(tarball); err != nil {
		start := time.Now()
		if err := d.mmdebstrap(tarball); err != nil {
			t.Fatalf("build the Debian root filesystem: %v", err)
		}
		t.Logf("E2E-METRIC host_mmdebstrap_s %.3f", time.Since(start).Seconds())
	}
	start := time.Now()
	if err := d.makeImage(tarball, img); err != nil {
		t.Fatalf("build the root image: %v", err)
	}
	t.Logf("E2E-METRIC host_root_image_build_s %.3f", time.Since(start).Seconds())
	return img
}

// mmdebstrap builds the tarball of d's packages at dst.
func (d DebianRoot) mmdebstrap(dst string) error {
	if _, err := exec.LookPath("mmdebstrap"); err != nil {
		return fmt.Errorf("mmdebstrap not found (apt-get install -y mmdebstrap, or test/e2e/run.sh with E2E_INSTALL=1)")
	}
	tmp := dst + ".tmp"
	args := append([]string{"--variant=" + d.Variant, "--include=" + strings.Join(slicesSorted(d.Packages), ",")}, mmdebstrapArgs...)
	if len(d.Backports) == 0 {
		args = append(args, d.Suite, tmp, d.Mirror)
	} else {
		bpo := d.Suite + "-backports"
		pin := fmt.Sprintf("Package: %s\nPin: release n=%s\nPin-Priority: 990\n", strings.Join(slicesSorted(d.Backports), " "), bpo)
		args = append(args,
			`--setup-hook=mkdir -p "$1/etc/apt/preferences.d" && printf '%s' '`+pin+`' >"$1/etc/apt/preferences.d/e2e-backports"`,
			d.Suite, tmp, "deb "+d.Mirror+" "+d.Suite+" main", "deb "+d.Mirror+" "+bpo+" main")
	}
	cmd := exec.Command("mmdebstrap", args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("mmdebstrap %s: %w\n%s", strings.Join(args, " "), err, lastLines(out.String(), 30))
	}
	return os.Rename(tmp, dst)
}

// makeImage unpacks tarball, adds d's files and links, and writes the
// tree as an ext4 image at dst (mke2fs -d: no loop device, no mount).
func (d DebianRoot) makeImage(tarball, dst string) error {
	tree, err := os.MkdirTemp(filepath.Dir(dst), ".tree-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tree)
	if out, err := exec.Command("tar", "-C", tree, "--numeric-owner", "-xpf", tarball).CombinedOutput(); err != nil {
		return fmt.Errorf("tar -xf %s: %w: %s", tarball, err, out)
	}
	for _, p := range sortedKeys(d.Files) {
		full := filepath.Join(tree, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(p, ".sh") || strings.Contains(p, "/bin/") {
			mode = 0o755
		}
		os.Remove(full)
		if err := os.WriteFile(full, d.Files[p], mode); err != nil {
			return err
		}
	}
	for _, p := range sortedKeys(d.Links) {
		full := filepath.Join(tree, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		os.Remove(full)
		if err := os.Symlink(d.Links[p], full); err != nil {
			return err
		}
	}
	tmp := dst + ".tmp"
	os.Remove(tmp)
	cmd := exec.Command("mke2fs", "-q", "-F", "-t", "ext4", "-L", "e2eroot", "-d", tree, tmp, fmt.Sprintf("%dM", d.SizeMB))
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("mke2fs -d: %w: %s", err, out)
	}
	return os.Rename(tmp, dst)
}

func sortedKeys[V any](m map[string]V) []string {
	k := make([]string, 0, len(m))
	for p := range m {
		k = append(k, p)
	}
	sort.Strings(k)
	return k
}

func slicesSorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
