package capture

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/numairqd/numairqd/pkg/bans"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/kernfs"
	"github.com/numairqd/numairqd/pkg/load"
	"github.com/numairqd/numairqd/pkg/machine"
	"github.com/numairqd/numairqd/pkg/topology"
)

// The top-level files of an archive.
const (
	manifestName = "manifest.json"
	netlinkName  = "netlink.json"
	configName   = "config.yaml"
)

var writing sync.Mutex // one Write taps kernfs at a time

// Write reads the machine as numairqd does and writes one gzip'd tar of
// exactly what was read, with a manifest. It writes nothing but w.
func Write(w io.Writer, src Source) (Manifest, error) {
	m := Manifest{Format: Format, Version: src.Version, Time: time.Now().UTC(), Root: os.Geteuid() == 0}
	var cfg []byte
	envFile := "auto"
	if src.Config != "" {
		c, err := config.Load(src.Config) // a regular file of at most 1 MiB
		if err == nil {
			envFile = c.IrqbalanceEnvFile
			cfg, err = os.ReadFile(src.Config)
		}
		if err != nil {
			return m, err
		}
	}
	var u unix.Utsname
	if src.Sys == "/sys" && src.Proc == "/proc" && unix.Uname(&u) == nil {
		m.Kernel, m.Machine = unix.ByteSliceToString(u.Release[:]), unix.ByteSliceToString(u.Machine[:])
	}
	c := &capturer{touched: map[string]bool{}, files: map[string][]byte{}, failed: map[string]string{},
		dirs: map[string][]string{}, errs: map[string]string{}, ents: map[string]*entry{}, reals: map[string]string{}}
	for _, rt := range []root{{host: src.Sys, arch: "sys"}, {host: src.Proc, arch: "proc"}, {host: src.Etc, arch: "etc"}} {
		if rt.host != "" {
			rt.host = filepath.Clean(rt.host)
			rt.prefix = strings.TrimSuffix(rt.host, "/") + "/"
			c.roots = append(c.roots, rt)
		}
	}
	nl := &netlink{nd: src.Netdev, q: src.Queues, missing: &m.Missing}
	writing.Lock()
	untap, ok := kernfs.Tap(c)
	if ok {
		m.ReadErr = readMachine(src, nl, envFile)
		untap()
	}
	writing.Unlock()
	if !ok {
		return m, errors.New("capture: kernfs is already tapped")
	}
	c.build()
	for p, why := range c.errs {
		_, a, _ := c.archive(p)
		m.Missing = append(m.Missing, Missing{a, why})
	}
	slices.SortFunc(m.Missing, func(a, b Missing) int { return strings.Compare(a.Path, b.Path) })
	for _, e := range c.ents {
		m.Bytes += int64(len(e.data))
		switch e.typ {
		case tar.TypeReg:
			m.Files++
		case tar.TypeDir:
			m.Dirs++
		default:
			m.Links++
		}
	}
	if m.Took = time.Since(m.Time).Seconds(); !src.Time.IsZero() {
		m.Time, m.Took = src.Time.UTC(), 0
	}
	if err := c.write(w, m, nl, cfg); err != nil {
		return m, fmt.Errorf("capture: write: %w", err)
	}
	return m, nil
}

// readMachine makes the reads of plan, topology and the daemon, with
// every ban source asked for (envFile: the config's own environment
// file too); it returns why the machine read failed.
func readMachine(src Source, nl *netlink, envFile string) string {
	if envFile != "auto" && src.Etc != "" {
		for _, p := range bans.Candidates(envFile, src.Etc) {
			_, _ = bans.ReadEnv(p) // the tap records what was read, or why not
		}
	}
	cfg := config.Default()
	honor := true
	cfg.IrqbalanceEnvFile, cfg.HonorDefaultAffinity = "auto", &honor
	roots := machine.Roots{Sys: src.Sys, Proc: src.Proc, Etc: src.Etc}
	if src.Netdev != nil {
		roots.Netdev = nl
	}
	topology.NewFS(src.Sys).ReadDetail() // the possible CPUs
	load.FS{Proc: src.Proc}.ReadStat()
	if src.Queues != nil {
		nl.ReadQueues()
	}
	mach, err := machine.Read(roots, cfg)
	if err != nil {
		return err.Error()
	}
	fsys := inventory.FS{Proc: src.Proc, Sys: src.Sys}
	want := map[int]cpumask.Mask{}
	for _, q := range mach.Inventory.IRQs {
		if q.Movable() {
			want[q.Number] = cpumask.Mask{}
			fsys.InterruptCount(q.Number)
		}
	}
	fsys.ReadEffective(want)
	return ""
}

// root maps a tree read (host, "/sys") to its place in the archive
// (arch, "sys"); prefix is host with a final "/".
type root struct{ host, arch, prefix string }

// entry is one archive member: tar.TypeReg, TypeDir or TypeSymlink.
type entry struct {
	typ  byte
	mode fs.FileMode
	data []byte
	link string
}

// capturer is the kernfs.Recorder of Write, then the archive's builder.
type capturer struct {
	roots   []root
	mu      sync.Mutex
	touched map[string]bool // every path read; true when its last link was followed
	files   map[string][]byte
	failed  map[string]string // why the last read of the file failed
	dirs    map[string][]string
	errs    map[string]string // why a path could not be read
	ents    map[string]*entry // by archive path
	reals   map[string]string // the real path of each directory resolved
}

// Record implements kernfs.Recorder; the last read of a path counts.
func (c *capturer) Record(a kernfs.Access) {
	p := filepath.Clean(a.Path)
	if _, _, ok := c.archive(p); !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.touched[p] = c.touched[p] || a.Op != kernfs.OpLink
	if a.Op == kernfs.OpFile {
		c.failed[p] = ""
		if a.Err != nil {
			c.failed[p] = why(a.Err)
		}
	}
	switch {
	case a.Err == nil && a.Op == kernfs.OpFile:
		c.files[p] = bytes.Clone(a.Data)
	case a.Err == nil && a.Op == kernfs.OpDir:
		c.dirs[p] = a.Names
	case a.Err == nil, errors.Is(a.Err, fs.ErrNotExist), a.Op == kernfs.OpLink && errors.Is(a.Err, syscall.EINVAL):
		// missing, or not a link: the tree shows it as it is
	default:
		c.errs[p] = why(a.Err)
		return
	}
	delete(c.errs, p)
}

// why is err without the path an *fs.PathError names.
func why(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return err.Error()
}

// archive returns the root holding host path p and p's archive path.
func (c *capturer) archive(p string) (root, string, bool) {
	for _, rt := range c.roots {
		if p == rt.host {
			return rt, rt.arch, true
		}
		if rest, ok := strings.CutPrefix(p, rt.prefix); ok {
			return rt, rt.arch + "/" + rest, true
		}
	}
	return root{}, "", false
}

// build adds every path read at its real place, the links on the way,
// the files' bytes as read, and each listed name read nowhere else as
// an empty directory. A file that would not read is left out, so it
// will not read from the capture either; so is every process but the
// NAPI kthreads.
func (c *capturer) build() {
	keep := c.napiOnly()
	for _, rt := range c.roots {
		c.ents[rt.arch] = &entry{typ: tar.TypeDir, mode: 0o755}
	}
	for _, p := range slices.Sorted(maps.Keys(c.touched)) {
		if !keep(p) {
			delete(c.errs, p)
			continue
		}
		if c.failed[p] != "" {
			if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
				c.errs[p] = c.failed[p] // it would not read: so from the capture
				c.resolve(filepath.Dir(p), true, 0)
				continue
			}
		}
		real, err := c.resolve(p, c.touched[p], 0)
		if _, read := c.files[p]; err != nil && (read || !errors.Is(err, fs.ErrNotExist)) {
			c.errs[p] = why(err)
		}
		if _, a, _ := c.archive(real); err == nil && c.ents[a].typ == tar.TypeReg {
			c.ents[a].data = c.files[p]
		}
	}
	for p, names := range c.dirs {
		real, ok := c.reals[p]
		for _, n := range names {
			if _, a, _ := c.archive(filepath.Join(real, n)); ok && c.ents[a] == nil && keep(filepath.Join(p, n)) {
				c.ents[a] = &entry{typ: tar.TypeDir, mode: 0o755}
			}
		}
	}
}

// napiOnly returns whether a path may be in the archive: under proc, a
// process's only if it is a NAPI kthread (or kthreadd's children).
func (c *capturer) napiOnly() func(p string) bool {
	napi := map[string]bool{"2": true}
	for p, data := range c.files {
		if _, a, _ := c.archive(p); strings.HasPrefix(a, "proc/") && (bytes.Contains(data, []byte("(napi/")) || bytes.Contains(data, []byte("Name:\tnapi/"))) {
			napi[strings.Split(a, "/")[1]] = true
		}
	}
	return func(p string) bool {
		_, a, _ := c.archive(p)
		rest, ok := strings.CutPrefix(a, "proc/")
		pid, _, _ := strings.Cut(rest, "/")
		return !ok || !kernfs.IsDigits([]byte(pid)) || napi[pid] && (pid != "2" || strings.HasPrefix("proc/2/task/2/children", a))
	}
}

// maxHops bounds the symlinks followed for one path, as the kernel's 40.
const maxHops = 40

// resolve returns the real path of p, adding it and the symlinks on the
// way; follow says whether p's own link is followed.
func (c *capturer) resolve(p string, follow bool, hops int) (string, error) {
	if real, ok := c.reals[p]; ok && follow {
		return real, nil
	}
	rt, _, _ := c.archive(p)
	if hops > maxHops {
		return "", syscall.ELOOP
	}
	if p == rt.host {
		return p, nil
	}
	dir, err := c.resolve(filepath.Dir(p), true, hops)
	if err != nil {
		return "", err
	}
	cur := filepath.Join(dir, filepath.Base(p))
	_, a, _ := c.archive(cur)
	fi, err := os.Lstat(cur)
	switch {
	case err != nil:
		return "", err
	case fi.Mode()&fs.ModeSymlink == 0:
		if c.ents[a] == nil {
			c.ents[a] = &entry{typ: tar.TypeReg, mode: fi.Mode().Perm()}
			if fi.IsDir() {
				c.ents[a] = &entry{typ: tar.TypeDir, mode: 0o755}
				c.reals[p] = cur
			}
		}
		return cur, nil
	}
	target, err := os.Readlink(cur)
	if err != nil {
		return "", err
	}
	next := target
	if !filepath.IsAbs(target) {
		next = filepath.Join(dir, target)
	}
	nrt, na, ok := c.archive(next)
	if !ok || nrt != rt {
		return "", fmt.Errorf("%s: a symlink to %s, outside %s", a, kernfs.Quote(target), rt.arch)
	}
	rel, _ := filepath.Rel(filepath.Dir(a), na)
	c.ents[a] = &entry{typ: tar.TypeSymlink, mode: 0o777, link: rel}
	if !follow {
		return cur, nil
	}
	real, err := c.resolve(next, true, hops+1)
	if err == nil {
		c.reals[p] = real
	}
	return real, err
}

// write writes the archive: the manifest first, then by path.
func (c *capturer) write(w io.Writer, m Manifest, nl *netlink, cfg []byte) error {
	mj, err := json.MarshalIndent(m, "", "  ")
	nj, err2 := json.Marshal(nl)
	if err = errors.Join(err, err2); err != nil {
		return err
	}
	if nl.QueueGet != nil || nl.NAPIGet != nil || nl.Counters != nil {
		c.ents[netlinkName] = &entry{typ: tar.TypeReg, mode: 0o644, data: nj}
	}
	if cfg != nil {
		c.ents[configName] = &entry{typ: tar.TypeReg, mode: 0o644, data: cfg}
	}
	names := append([]string{manifestName}, slices.Sorted(maps.Keys(c.ents))...)
	c.ents[manifestName] = &entry{typ: tar.TypeReg, mode: 0o644, data: mj}
	zw := gzip.NewWriter(w)
	tw := tar.NewWriter(zw)
	for _, name := range names {
		e := c.ents[name]
		h := &tar.Header{Typeflag: e.typ, Name: name, Linkname: e.link, Mode: int64(e.mode), Size: int64(len(e.data)), ModTime: m.Time}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(e.data); err != nil {
			return err
		}
	}
	return errors.Join(tw.Close(), zw.Close())
}
