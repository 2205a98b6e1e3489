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

// root maps a tree read (host, "/sys") to its place in the archive (arch, "sys").
type root struct{ host, arch string }

// recorder is the kernfs.Recorder of Write: what was read under roots.
type recorder struct {
	roots   []root
	mu      sync.Mutex
	touched map[string]bool // every path; true when its last link was followed
	files   map[string][]byte
	failed  map[string]bool // the last read of the file failed
	dirs    map[string][]string
	errs    map[string]string // why a path could not be read
}

// Record implements kernfs.Recorder; the last read of a file counts.
func (r *recorder) Record(a kernfs.Access) {
	p := filepath.Clean(a.Path)
	if _, _, ok := r.archive(p); !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.touched[p] = r.touched[p] || a.Op != kernfs.OpLink && a.Op != kernfs.OpLstat
	if a.Op == kernfs.OpFile {
		r.failed[p] = a.Err != nil
	}
	switch {
	case a.Err == nil:
		delete(r.errs, p)
	case errors.Is(a.Err, fs.ErrNotExist), a.Op == kernfs.OpLink && errors.Is(a.Err, syscall.EINVAL):
		return // a missing file, or not a link, is in the tree as such
	default:
		r.errs[p] = why(a.Err)
		return
	}
	switch a.Op {
	case kernfs.OpFile:
		r.files[p] = bytes.Clone(a.Data)
	case kernfs.OpDir:
		r.dirs[p] = append(r.dirs[p], a.Names...)
	}
}

// archive returns the root holding host path p and p's archive path.
func (r *recorder) archive(p string) (root, string, bool) {
	for _, rt := range r.roots {
		if rel, err := filepath.Rel(rt.host, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return rt, filepath.Join(rt.arch, rel), true
		}
	}
	return root{}, "", false
}

var writing sync.Mutex // one Write taps kernfs at a time

// Write reads the machine as numairqd does and writes one gzip'd tar of
// exactly what was read, with a manifest. It writes nothing but w.
func Write(w io.Writer, src Source) (Manifest, error) {
	m := Manifest{Format: Format, Version: src.Version, Time: time.Now().UTC(), Root: os.Geteuid() == 0}
	var cfg []byte
	if src.Config != "" {
		var err error
		if cfg, err = readConfig(src.Config); err != nil {
			return m, err
		}
	}
	if src.Sys == "/sys" && src.Proc == "/proc" {
		var u syscall.Utsname
		if syscall.Uname(&u) == nil {
			m.Kernel, m.Machine = utsString(u.Release[:]), utsString(u.Machine[:])
		}
	}
	rec := &recorder{touched: map[string]bool{}, files: map[string][]byte{}, failed: map[string]bool{}, dirs: map[string][]string{}, errs: map[string]string{}}
	for _, rt := range []root{{src.Sys, "sys"}, {src.Proc, "proc"}, {src.Etc, "etc"}} {
		if rt.host != "" {
			rec.roots = append(rec.roots, root{filepath.Clean(rt.host), rt.arch})
		}
	}
	writing.Lock()
	untap, ok := kernfs.Tap(rec)
	if !ok {
		writing.Unlock()
		return m, errors.New("capture: kernfs is already tapped")
	}
	var nl netlinkLog
	m.ReadErr = readMachine(src, &nl)
	untap()
	writing.Unlock()
	t := &tree{rec: rec, ents: map[string]*entry{}, dirs: map[string]string{}}
	t.build()
	for p, why := range rec.errs {
		_, a, _ := rec.archive(p)
		m.Missing = append(m.Missing, Missing{a, why})
	}
	for name, a := range map[string]interface{ why() string }{"queue-get": nl.Queues, "napi-get": nl.NAPIs, "queue counters": nl.QueueCounts} {
		if why := a.why(); why != "" {
			m.Missing = append(m.Missing, Missing{"netlink " + name, why})
		}
	}
	slices.SortFunc(m.Missing, func(a, b Missing) int { return strings.Compare(a.Path, b.Path) })
	for _, e := range t.ents {
		switch e.typ {
		case tar.TypeReg:
			m.Files++
			m.Bytes += int64(len(e.data))
		case tar.TypeDir:
			m.Dirs++
		default:
			m.Links++
		}
	}
	m.Took = time.Since(m.Time).Seconds()
	return m, t.write(w, m, nl, cfg)
}

// readMachine makes the reads of plan, topology and the daemon, with
// every ban source asked for; it returns why the machine read failed.
func readMachine(src Source, nl *netlinkLog) string {
	cfg := config.Default()
	honor := true
	cfg.IrqbalanceEnvFile, cfg.HonorDefaultAffinity = "auto", &honor
	roots := machine.Roots{Sys: src.Sys, Proc: src.Proc, Etc: src.Etc}
	if src.Netdev != nil {
		roots.Netdev = recNetdev{src.Netdev, nl}
	}
	_, _ = topology.NewFS(src.Sys).ReadDetail() // the possible CPUs
	_, _ = load.FS{Proc: src.Proc}.ReadStat()
	if src.Queues != nil {
		recQueues{src.Queues, nl}.ReadQueues()
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

// why is err without the path an *fs.PathError names.
func why(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return err.Error()
}

func (a *answer[T]) why() string {
	if a == nil {
		return ""
	}
	return a.Err
}

// readConfig reads the config file, at most 1 MiB as config.Load does.
func readConfig(path string) ([]byte, error) {
	if _, err := config.Load(path); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}

func utsString[T int8 | uint8](b []T) string {
	var s strings.Builder
	for _, c := range b {
		if c == 0 {
			break
		}
		s.WriteByte(byte(c))
	}
	return s.String()
}

// entry is one archive member.
type entry struct {
	typ  byte // tar.TypeReg, TypeDir or TypeSymlink
	mode fs.FileMode
	data []byte
	link string
}

// tree builds the archive's members from what rec saw.
type tree struct {
	rec  *recorder
	ents map[string]*entry
	dirs map[string]string // resolved directories: host path to real host path
}

// maxHops bounds the symlinks followed for one path, as the kernel's 40.
const maxHops = 40

var errLeaves = errors.New("a symlink leaves its root")

// build adds every path touched at its real place, the links on the way,
// the files' bytes as read, and each listed name touched nowhere else as
// an empty directory. Processes other than NAPI kthreads are left out.
func (t *tree) build() {
	keep := t.napiPIDs()
	for _, rt := range t.rec.roots {
		t.ents[rt.arch] = &entry{typ: tar.TypeDir, mode: 0o755}
	}
	reals := map[string]string{}
	for _, p := range slices.Sorted(maps.Keys(t.rec.touched)) {
		if !keep(p) {
			delete(t.rec.errs, p)
			continue
		}
		if fi, err := os.Stat(p); t.rec.failed[p] && err == nil && !fi.IsDir() {
			t.resolveDir(filepath.Dir(p), 0) // a file that would not read is left out
			continue
		}
		real, err := t.resolve(p, t.rec.touched[p], 0)
		if err != nil {
			if _, read := t.rec.files[p]; read || !errors.Is(err, fs.ErrNotExist) {
				t.rec.errs[p] = why(err)
			}
			continue
		}
		reals[p] = real
		_, a, _ := t.rec.archive(real)
		if data, ok := t.rec.files[p]; ok && t.ents[a].typ == tar.TypeReg {
			t.ents[a].data = data
		}
	}
	for p, names := range t.rec.dirs {
		real, ok := reals[p]
		if !ok {
			continue
		}
		for _, n := range names {
			_, a, _ := t.rec.archive(filepath.Join(real, n))
			if t.ents[a] == nil && keep(filepath.Join(p, n)) {
				t.ents[a] = &entry{typ: tar.TypeDir, mode: 0o755}
			}
		}
	}
}

// napiPIDs returns whether a path may be captured: under proc, a
// process's only if it is a NAPI kthread (or kthreadd's children list).
func (t *tree) napiPIDs() func(p string) bool {
	napi := map[string]bool{}
	for p, data := range t.rec.files {
		if rt, a, _ := t.rec.archive(p); rt.arch == "proc" && (bytes.Contains(data, []byte("(napi/")) || bytes.Contains(data, []byte("Name:\tnapi/"))) {
			napi[strings.Split(a, "/")[1]] = true
		}
	}
	return func(p string) bool {
		rt, a, _ := t.rec.archive(p)
		parts := strings.SplitN(a, "/", 3)
		if rt.arch != "proc" || len(parts) < 2 || !kernfs.IsDigits([]byte(parts[1])) {
			return true
		}
		return napi[parts[1]] || a == "proc/2" || a == "proc/2/task" || a == "proc/2/task/2" || a == "proc/2/task/2/children"
	}
}

// resolve returns the real path of p, adding it and the symlinks on the
// way; follow says whether p's own link is followed.
func (t *tree) resolve(p string, follow bool, hops int) (string, error) {
	rt, _, ok := t.rec.archive(p)
	if !ok || hops > maxHops {
		return "", errLeaves
	}
	if p == rt.host {
		return p, nil
	}
	dir, err := t.resolveDir(filepath.Dir(p), hops)
	if err != nil {
		return "", err
	}
	cur := filepath.Join(dir, filepath.Base(p))
	fi, err := os.Lstat(cur)
	if err != nil {
		return "", err
	}
	_, a, _ := t.rec.archive(cur)
	switch {
	case t.ents[a] != nil && t.ents[a].typ != tar.TypeSymlink:
		return cur, nil
	case fi.IsDir():
		t.ents[a] = &entry{typ: tar.TypeDir, mode: 0o755}
		return cur, nil
	case fi.Mode()&fs.ModeSymlink == 0:
		t.ents[a] = &entry{typ: tar.TypeReg, mode: fi.Mode().Perm()}
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
	nrt, na, ok := t.rec.archive(next)
	if !ok || nrt != rt {
		return "", fmt.Errorf("%w: %s -> %s", errLeaves, a, kernfs.Quote(target))
	}
	rel, _ := filepath.Rel(filepath.Dir(a), na)
	t.ents[a] = &entry{typ: tar.TypeSymlink, mode: 0o777, link: rel}
	if !follow {
		return cur, nil
	}
	return t.resolve(next, true, hops+1)
}

// resolveDir is resolve of a directory, remembered.
func (t *tree) resolveDir(d string, hops int) (string, error) {
	if real, ok := t.dirs[d]; ok {
		return real, nil
	}
	real, err := t.resolve(d, true, hops)
	if err == nil {
		t.dirs[d] = real
	}
	return real, err
}

// write writes the archive: the manifest, netlink.json, the config,
// then the tree by path.
func (t *tree) write(w io.Writer, m Manifest, nl netlinkLog, cfg []byte) error {
	zw := gzip.NewWriter(w)
	tw := tar.NewWriter(zw)
	add := func(name string, e *entry) error {
		h := &tar.Header{Typeflag: e.typ, Name: name, Linkname: e.link, Mode: int64(e.mode), Size: int64(len(e.data)), ModTime: m.Time}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err := tw.Write(e.data)
		return err
	}
	mj, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	top := map[string][]byte{manifestName: mj, configName: cfg}
	if nl != (netlinkLog{}) {
		if top[netlinkName], err = json.Marshal(nl); err != nil {
			return err
		}
	}
	for _, name := range []string{manifestName, netlinkName, configName} {
		if top[name] == nil {
			continue
		}
		if err := add(name, &entry{typ: tar.TypeReg, mode: 0o644, data: top[name]}); err != nil {
			return fmt.Errorf("capture: write %s: %w", name, err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(t.ents)) {
		if err := add(name, t.ents[name]); err != nil {
			return fmt.Errorf("capture: write %s: %w", name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("capture: write: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("capture: write: %w", err)
	}
	return nil
}
