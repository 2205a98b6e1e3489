//go:build e2e

package e2e

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

const installHint = "as root: apt-get install -y qemu-system-x86 linux-image-amd64 linux-image-6.12-amd64 busybox-static xz-utils cpio iproute2 ethtool (or run test/e2e/run.sh with E2E_INSTALL=1)"

// hostEnv is what the host must provide to boot a guest.
type hostEnv struct {
	qemu    string // qemu-system-x86_64
	kernel  string // /boot/vmlinuz-<ver>
	modDir  string // /lib/modules/<ver>
	busybox string // a static busybox
	ethtool string // Debian's ethtool, packed with its libraries (ethtool -L)
}

var (
	envOnce sync.Once
	envVal  hostEnv
	envErr  error
)

// requireEnv finds the prerequisites once and fails t with what to
// install when one is missing.
func requireEnv(t *testing.T) hostEnv {
	t.Helper()
	envOnce.Do(func() { envVal, envErr = findEnv() })
	if envErr != nil {
		t.Fatalf("e2e prerequisites: %v", envErr)
	}
	return envVal
}

// findEnv checks the prerequisites. E2E_KERNEL and E2E_BUSYBOX override
// the kernel image and busybox binary.
func findEnv() (hostEnv, error) {
	var e hostEnv
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "root (to create the tap device)")
	}
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		missing = append(missing, "/dev/net/tun")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		missing = append(missing, "ip (iproute2)")
	}
	var err error
	if e.qemu, err = exec.LookPath("qemu-system-x86_64"); err != nil {
		missing = append(missing, "qemu-system-x86_64 (qemu-system-x86)")
	}
	if e.kernel, e.modDir, err = findKernel(); err != nil {
		missing = append(missing, err.Error())
	}
	if e.busybox, err = findBusybox(); err != nil {
		missing = append(missing, err.Error())
	}
	if e.ethtool, err = exec.LookPath("ethtool"); err != nil {
		if _, serr := os.Stat("/usr/sbin/ethtool"); serr != nil {
			missing = append(missing, "ethtool (ethtool)")
		}
		e.ethtool = "/usr/sbin/ethtool"
	}
	if len(missing) > 0 {
		return e, fmt.Errorf("missing: %s; %s", strings.Join(missing, "; "), installHint)
	}
	return e, nil
}

// findKernel picks $E2E_KERNEL or the newest /boot/vmlinuz-* whose
// /lib/modules/<ver>/modules.dep exists. $E2E_MODULES names the modules
// directory of an $E2E_KERNEL unpacked outside /boot and /lib/modules
// (run.sh's Debian 13 backports kernel).
func findKernel() (kernel, modDir string, err error) {
	if k, m := os.Getenv("E2E_KERNEL"), os.Getenv("E2E_MODULES"); k != "" && m != "" {
		if _, err := os.Stat(filepath.Join(m, "modules.dep")); err != nil {
			return "", "", fmt.Errorf("E2E_MODULES=%s: %v", m, err)
		}
		if _, err := os.Stat(k); err != nil {
			return "", "", fmt.Errorf("E2E_KERNEL=%s: %v", k, err)
		}
		return k, m, nil
	}
	cands := []string{os.Getenv("E2E_KERNEL")}
	if cands[0] == "" {
		cands, _ = filepath.Glob("/boot/vmlinuz-*")
		sort.Sort(sort.Reverse(sort.StringSlice(cands)))
	}
	for _, k := range cands {
		ver := strings.TrimPrefix(filepath.Base(k), "vmlinuz-")
		dir := filepath.Join("/lib/modules", ver)
		if _, err := os.Stat(filepath.Join(dir, "modules.dep")); err != nil {
			continue
		}
		if f, err := os.Open(k); err == nil {
			f.Close()
			return k, dir, nil
		}
	}
	return "", "", fmt.Errorf("a readable /boot/vmlinuz-<ver> with /lib/modules/<ver>/modules.dep (linux-image-amd64)")
}

// findBusybox picks $E2E_BUSYBOX or /bin/busybox, if it is statically
// linked (no PT_INTERP).
func findBusybox() (string, error) {
	p := os.Getenv("E2E_BUSYBOX")
	if p == "" {
		p = "/bin/busybox"
	}
	f, err := elf.Open(p)
	if err != nil {
		return "", fmt.Errorf("a static busybox at %s (busybox-static): %v", p, err)
	}
	defer f.Close()
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			return "", fmt.Errorf("a static busybox at %s (busybox-static): it is dynamically linked", p)
		}
	}
	return p, nil
}

var (
	kernelOnce sync.Once
	kernelVal  string
)

// bootKernel returns the image to pass to -kernel: an uncompressed
// vmlinux extracted from env.kernel when it is an xz-compressed bzImage
// whose vmlinux has a PVH entry note (Debian's is), else env.kernel.
// QEMU boots the vmlinux through PVH and skips the bzImage
// decompressor, which takes about 6 s under TCG. E2E_NO_PVH=1 turns
// this off.
func bootKernel(t *testing.T, env hostEnv) string {
	t.Helper()
	kernelOnce.Do(func() {
		kernelVal = env.kernel
		if os.Getenv("E2E_NO_PVH") == "1" {
			return
		}
		start := time.Now()
		p, err := extractPVH(env.kernel)
		t.Logf("E2E-METRIC host_extract_vmlinux_s %.3f", time.Since(start).Seconds())
		if err != nil {
			t.Logf("booting %s through its decompressor: %v", env.kernel, err)
			return
		}
		kernelVal = p
	})
	return kernelVal
}

func extractPVH(bzImage string) (string, error) {
	b, err := os.ReadFile(bzImage)
	if err != nil {
		return "", err
	}
	i := bytes.Index(b, []byte("\xfd7zXZ\x00"))
	if i < 0 {
		return "", fmt.Errorf("no xz stream in %s", bzImage)
	}
	dir, err := binaryDir()
	if err != nil {
		return "", err
	}
	dst := filepath.Join(dir, "vmlinux")
	f, err := os.Create(dst)
	if err != nil {
		return "", err
	}
	defer f.Close()
	cmd := exec.Command("xz", "-dc", "--single-stream")
	cmd.Stdin = bytes.NewReader(b[i:])
	cmd.Stdout = f
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("xz -dc: %w: %s", err, errb.String())
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	if ok, err := hasPVHNote(dst); err != nil || !ok {
		return "", fmt.Errorf("vmlinux has no PVH entry note (%v)", err)
	}
	return dst, nil
}

// hasPVHNote looks for XEN_ELFNOTE_PHYS32_ENTRY (type 18, name "Xen"),
// which QEMU needs to boot an uncompressed kernel.
func hasPVHNote(path string) (bool, error) {
	f, err := elf.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type != elf.PT_NOTE {
			continue
		}
		b := make([]byte, p.Filesz)
		if _, err := p.ReadAt(b, 0); err != nil {
			return false, err
		}
		for len(b) >= 12 {
			bo := f.ByteOrder
			namesz, descsz, typ := bo.Uint32(b), bo.Uint32(b[4:]), bo.Uint32(b[8:])
			name := b[12:min(len(b), 12+int(namesz))]
			if typ == 18 && string(bytes.TrimRight(name, "\x00")) == "Xen" {
				return true, nil
			}
			n := 12 + align4(int(namesz)) + align4(int(descsz))
			if n > len(b) {
				break
			}
			b = b[n:]
		}
	}
	return false, nil
}

func align4(n int) int { return (n + 3) &^ 3 }

var (
	binOnce sync.Once
	binDir  string
	binVal  binaries
	binErr  error
)

// binaries are what the harness builds once per test binary: the
// static binaries put into /bin of every guest, and the host's traffic
// generator.
type binaries struct {
	guest      map[string]string // name in the guest's /bin -> host path
	trafficgen string
}

// buildBinaries builds guestcheck and numairqd for the guests and
// test/trafficgen for the host. One that does not build fails the
// test: no scenario is skipped for a missing binary.
func buildBinaries(t *testing.T) binaries {
	t.Helper()
	binOnce.Do(func() {
		start := time.Now()
		binVal, binErr = goBuild()
		t.Logf("E2E-METRIC host_build_binaries_s %.3f", time.Since(start).Seconds())
	})
	if binErr != nil {
		t.Fatalf("build binaries: %v", binErr)
	}
	return binVal
}

// moduleRoot is the directory of the main module's go.mod.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out))), nil
}

func goBuild() (binaries, error) {
	var b binaries
	root, err := moduleRoot()
	if err != nil {
		return b, err
	}
	dir, err := binaryDir()
	if err != nil {
		return b, err
	}
	pkgs := map[string]string{"guestcheck": "./test/e2e/guestcheck", "numairqd": "./cmd/numairqd", "trafficgen": "./test/trafficgen"}
	built := map[string]string{}
	for name, pkg := range pkgs {
		dst := filepath.Join(dir, name)
		cmd := exec.Command("go", "build", "-trimpath", "-o", dst, pkg)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Run(); err != nil {
			return b, fmt.Errorf("CGO_ENABLED=0 go build %s: %w\n%s", pkg, err, errb.String())
		}
		built[name] = dst
	}
	b.trafficgen = built["trafficgen"]
	delete(built, "trafficgen")
	b.guest = built
	return b, nil
}

var binDirMu sync.Mutex

// binaryDir is the temporary directory for what is built once per test
// binary (guest binaries, vmlinux); TestMain removes it.
func binaryDir() (string, error) {
	binDirMu.Lock()
	defer binDirMu.Unlock()
	if binDir == "" {
		d, err := os.MkdirTemp("", "numairqd-e2e-")
		if err != nil {
			return "", err
		}
		binDir = d
	}
	return binDir, nil
}

// cleanupBinaries removes what buildGuestBinaries made; TestMain calls it.
func cleanupBinaries() {
	if binDir != "" {
		os.RemoveAll(binDir)
	}
}
