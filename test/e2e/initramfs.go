//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// cpioWriter writes the "newc" format the kernel unpacks as initramfs
// (Documentation/driver-api/early-userspace/buffer-format.rst).
type cpioWriter struct {
	w   io.Writer
	ino int
	n   int64
	err error
}

const (
	modeDir  = 0o040000
	modeFile = 0o100000
	modeLink = 0o120000
	modeChr  = 0o020000
)

func (c *cpioWriter) write(b []byte) {
	if c.err != nil {
		return
	}
	var n int
	n, c.err = c.w.Write(b)
	c.n += int64(n)
}

func (c *cpioWriter) pad() {
	if r := c.n % 4; r != 0 {
		c.write(make([]byte, 4-r))
	}
}

func (c *cpioWriter) entry(name string, mode uint32, data []byte, rdevMajor, rdevMinor int) {
	c.ino++
	nlink := 1
	if mode&0o170000 == modeDir {
		nlink = 2
	}
	hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		c.ino, mode, 0, 0, nlink, 0, len(data), 0, 0, rdevMajor, rdevMinor, len(name)+1, 0)
	c.write([]byte(hdr))
	c.write(append([]byte(name), 0))
	c.pad()
	c.write(data)
	c.pad()
}

func (c *cpioWriter) Dir(name string)                         { c.entry(name, modeDir|0o755, nil, 0, 0) }
func (c *cpioWriter) File(name string, b []byte, perm uint32) { c.entry(name, modeFile|perm, b, 0, 0) }
func (c *cpioWriter) Symlink(name, target string) {
	c.entry(name, modeLink|0o777, []byte(target), 0, 0)
}
func (c *cpioWriter) CharDev(name string, major, minor int) {
	c.entry(name, modeChr|0o600, nil, major, minor)
}

func (c *cpioWriter) Close() error {
	c.entry("TRAILER!!!", 0, nil, 0, 0)
	return c.err
}

// moduleOrder resolves mods and their dependencies from modules.dep
// into load order (dependencies first), as paths relative to modDir.
// Modules the kernel has built in (modules.builtin: Debian's 6.12 builds
// virtio, virtio_pci and the CRCs in) are left out, as modprobe would.
func moduleOrder(modDir string, mods []string) ([]string, error) {
	builtin, err := builtinModules(modDir)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(modDir, "modules.dep"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	deps := map[string][]string{} // relative path -> dependencies
	byName := map[string]string{} // module name -> relative path
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		mod, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		deps[mod] = strings.Fields(rest)
		byName[moduleName(mod)] = mod
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	var order []string
	done := map[string]bool{}
	var visit func(string)
	visit = func(m string) {
		if done[m] {
			return
		}
		done[m] = true
		for _, d := range deps[m] {
			visit(d)
		}
		order = append(order, m)
	}
	for _, name := range mods {
		name = strings.ReplaceAll(name, "-", "_")
		if builtin[name] {
			continue
		}
		m, ok := byName[name]
		if !ok {
			return nil, fmt.Errorf("%s/modules.dep: no module %q, and modules.builtin does not list it", modDir, name)
		}
		visit(m)
	}
	return order, nil
}

// builtinModules reads modDir/modules.builtin: the names of the modules
// built into the kernel. A kernel without the file has none.
func builtinModules(modDir string) (map[string]bool, error) {
	b, err := os.ReadFile(filepath.Join(modDir, "modules.builtin"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, l := range strings.Fields(string(b)) {
		out[moduleName(l)] = true
	}
	return out, nil
}

// moduleName is the kernel's name for a module path: the base name
// without .ko[.xz|.zst|.gz], with '-' as '_'.
func moduleName(p string) string {
	b := path.Base(p)
	if i := strings.Index(b, ".ko"); i >= 0 {
		b = b[:i]
	}
	return strings.ReplaceAll(b, "-", "_")
}

// readModule returns the module's ELF, decompressing it on the host:
// busybox insmod loads only plain .ko files.
func readModule(p string) ([]byte, error) {
	var tool string
	switch {
	case strings.HasSuffix(p, ".ko"):
		return os.ReadFile(p)
	case strings.HasSuffix(p, ".ko.gz"):
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		return io.ReadAll(zr)
	case strings.HasSuffix(p, ".ko.xz"):
		tool = "xz"
	case strings.HasSuffix(p, ".ko.zst"):
		tool = "zstd"
	default:
		return nil, fmt.Errorf("%s: unknown module format", p)
	}
	var out, errb bytes.Buffer
	cmd := exec.Command(tool, "-dc", p)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s -dc %s: %w: %s", tool, p, err, errb.String())
	}
	return out.Bytes(), nil
}

// libDirs are where Debian's amd64 ld.so finds libraries without an
// /etc/ld.so.cache, which the guest does not have; hostFiles looks there
// for each DT_NEEDED name and puts the library in the guest's first one.
var libDirs = []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64"}

// hostFiles returns what the dynamically linked host programs bins
// need in the guest: each program at its own path, its ELF interpreter
// at the PT_INTERP path and every DT_NEEDED library, recursively, at
// /lib/x86_64-linux-gnu/<name>. It maps guest paths (relative to the
// archive root) to host files with symlinks resolved. A library found
// in none of libDirs is an error that names it and who needs it.
func hostFiles(bins []string) (map[string]string, error) {
	out := map[string]string{}
	var visit func(guest, host string) error
	visit = func(guest, host string) error {
		if _, ok := out[guest]; ok {
			return nil
		}
		file, err := filepath.EvalSymlinks(host)
		if err != nil {
			return err
		}
		out[guest] = file
		f, err := elf.Open(file)
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		defer f.Close()
		if f.Machine != elf.EM_X86_64 {
			return fmt.Errorf("%s: ELF machine %v, want %v (the guest is x86-64)", file, f.Machine, elf.EM_X86_64)
		}
		for _, prog := range f.Progs {
			if prog.Type != elf.PT_INTERP {
				continue
			}
			b, err := io.ReadAll(prog.Open())
			if err != nil {
				return fmt.Errorf("%s: PT_INTERP: %w", file, err)
			}
			interp := strings.TrimRight(string(b), "\x00")
			if err := visit(strings.TrimPrefix(interp, "/"), interp); err != nil {
				return fmt.Errorf("%s: interpreter: %w", host, err)
			}
		}
		needed, err := f.ImportedLibraries()
		if err != nil {
			return fmt.Errorf("%s: DT_NEEDED: %w", file, err)
		}
		for _, lib := range needed {
			p, err := findLib(lib)
			if err != nil {
				return fmt.Errorf("%s needs %s: %w", host, lib, err)
			}
			if err := visit(path.Join(strings.TrimPrefix(libDirs[0], "/"), lib), p); err != nil {
				return err
			}
		}
		return nil
	}
	for _, b := range bins {
		if !filepath.IsAbs(b) {
			return nil, fmt.Errorf("host binary %q: want an absolute path", b)
		}
		if err := visit(strings.TrimPrefix(filepath.Clean(b), "/"), b); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// findLib is the first libDirs entry holding the library name.
func findLib(name string) (string, error) {
	for _, d := range libDirs {
		p := filepath.Join(d, name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("not found in %s", strings.Join(libDirs, ", "))
}

// initramfs is the content of one guest's initramfs.
type initramfs struct {
	Busybox string            // host path of a static busybox
	ModDir  string            // /lib/modules/<version> on the host
	Modules []string          // module paths relative to ModDir, dependencies first (moduleOrder)
	Bins    map[string]string // guest name in /bin -> host path
	// HostBins are absolute paths of dynamically linked host programs
	// (such as /usr/sbin/ethtool), put at the same path in the guest
	// with their interpreter and libraries (hostFiles).
	HostBins []string
	Files    map[string][]byte // guest path -> content (mode 0755)
}

// write builds the gzip-compressed cpio archive at dst. Modules go to
// /lib/modules/<name>.ko, HostBins and their libraries as hostFiles says.
func (r initramfs) write(dst string) error {
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	defer f.Close()
	zw, err := gzip.NewWriterLevel(f, gzip.BestSpeed)
	if err != nil {
		return err
	}
	c := &cpioWriter{w: zw}
	dirs := map[string]bool{}
	mkdirs := func(p string) {
		var parts []string
		for d := path.Dir(p); d != "." && d != "/" && !dirs[d]; d = path.Dir(d) {
			parts = append(parts, d)
		}
		for i := len(parts) - 1; i >= 0; i-- {
			dirs[parts[i]] = true
			c.Dir(parts[i])
		}
	}
	for _, d := range []string{"bin", "sbin", "usr/bin", "usr/sbin", "proc", "sys", "dev", "tmp", "run", "etc", "lib/modules", "e2e"} {
		mkdirs(d + "/x")
	}
	c.CharDev("dev/console", 5, 1)
	c.CharDev("dev/null", 1, 3)

	bb, err := os.ReadFile(r.Busybox)
	if err != nil {
		return err
	}
	c.File("bin/busybox", bb, 0o755)
	c.Symlink("bin/sh", "busybox")

	bins := make([]string, 0, len(r.Bins))
	for name := range r.Bins {
		bins = append(bins, name)
	}
	sort.Strings(bins)
	for _, name := range bins {
		b, err := os.ReadFile(r.Bins[name])
		if err != nil {
			return err
		}
		c.File("bin/"+name, b, 0o755)
	}

	host, err := hostFiles(r.HostBins)
	if err != nil {
		return err
	}
	guest := make([]string, 0, len(host))
	for p := range host {
		guest = append(guest, p)
	}
	sort.Strings(guest)
	// A file needed under two names (ld.so is also libc's DT_NEEDED
	// ld-linux-x86-64.so.2) is stored once; the other name links to it.
	stored := map[string]string{} // host file -> guest path
	for _, p := range guest {
		mkdirs(p)
		if first, ok := stored[host[p]]; ok {
			c.Symlink(p, "/"+first)
			continue
		}
		b, err := os.ReadFile(host[p])
		if err != nil {
			return err
		}
		c.File(p, b, 0o755)
		stored[host[p]] = p
	}

	for _, m := range r.Modules {
		b, err := readModule(filepath.Join(r.ModDir, m))
		if err != nil {
			return err
		}
		c.File("lib/modules/"+moduleName(m)+".ko", b, 0o644)
	}

	files := make([]string, 0, len(r.Files))
	for p := range r.Files {
		files = append(files, p)
	}
	sort.Strings(files)
	for _, p := range files {
		rel := strings.TrimPrefix(p, "/")
		mkdirs(rel)
		c.File(rel, r.Files[p], 0o755)
	}
	if err := c.Close(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return f.Close()
}
