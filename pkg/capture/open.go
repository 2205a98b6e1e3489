package capture

import (
	"archive/tar"
	"bufio"
	"cmp"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/numairqd/numairqd/pkg/kernfs"
	"github.com/numairqd/numairqd/pkg/machine"
)

// Bounds on what Open unpacks: entries, bytes of all files, and bytes
// after the tar's end before the gzip trailer.
const (
	maxEntries = 1 << 18
	maxTotal   = 512 << 20
	maxTrailer = 1 << 20
)

// maxSizes are the largest files their readers take: inventory's
// /proc/interrupts, load's /proc/stat, config.Load's; else
// kernfs.MaxAttrSize.
var maxSizes = map[string]int64{"proc/interrupts": 256 << 20, "proc/stat": 4 << 20, configName: 1 << 20,
	manifestName: 16 << 20, netlinkName: 16 << 20}

// Open checks and unpacks the capture at file into a fresh temporary
// directory. Anything amiss is an error naming file and the entry.
func Open(file string) (_ *Replay, err error) {
	fail := func(entry, format string, args ...any) error {
		if entry != "" {
			entry = kernfs.Quote(entry) + ": "
		}
		return fmt.Errorf("capture %s: %s%s", file, entry, fmt.Sprintf(format, args...))
	}
	f, err := os.OpenFile(file, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fail("", "%s", why(err))
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fail("", "not a regular file")
	}
	zr, err := gzip.NewReader(bufio.NewReader(f))
	if errors.Is(err, io.EOF) {
		return nil, fail("", "an empty file, not a capture")
	}
	if err != nil {
		return nil, fail("", "not a gzip'd capture: %v", err)
	}
	dir, err := os.MkdirTemp("", "numairqd-capture-")
	if err != nil {
		return nil, fail("", "%v", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	r := &Replay{dir: dir}
	made := map[string]bool{dir: true}
	mkdir := func(d string) error { // os.MkdirAll, remembered
		if made[d] {
			return nil
		}
		made[d] = true
		return os.MkdirAll(d, 0o755)
	}
	var nl *netlink
	top := map[string]any{manifestName: &r.Manifest, netlinkName: &nl}
	seen, links := map[string]bool{}, map[string]bool{}
	var total int64
	tr := tar.NewReader(zr)
	for n := 0; ; n++ {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fail("", "damaged archive: %v", err)
		}
		name := strings.TrimSuffix(h.Name, "/")
		if n >= maxEntries {
			return nil, fail(name, "more than %d entries", maxEntries)
		}
		if msg := checkName(name, h.Typeflag, seen, links); msg != "" {
			return nil, fail(name, "%s", msg)
		}
		seen[name] = true
		dst := filepath.Join(dir, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			err = mkdir(dst)
		case tar.TypeSymlink:
			if msg := checkLink(name, h.Linkname); msg != "" {
				return nil, fail(name, "symlink to %s %s", kernfs.Quote(h.Linkname), msg)
			}
			links[name] = true
			if err = mkdir(filepath.Dir(dst)); err == nil {
				err = os.Symlink(h.Linkname, dst)
			}
		case tar.TypeReg:
			if lim := cmp.Or(maxSizes[name], kernfs.MaxAttrSize); h.Size > lim || total+h.Size > maxTotal {
				return nil, fail(name, "%d bytes, more than the limit of %d (or %d in all)", h.Size, lim, maxTotal)
			}
			if v, ok := top[name]; ok {
				data := make([]byte, h.Size)
				total += h.Size
				if _, err := io.ReadFull(tr, data); err != nil {
					return nil, fail(name, "damaged archive: %v", err)
				}
				if err := json.Unmarshal(data, v); err != nil {
					return nil, fail(name, "not JSON: %s", why(err))
				}
				if name == manifestName && r.Manifest.Format != Format {
					return nil, fail("", "format %d, this numairqd reads format %d", r.Manifest.Format, Format)
				}
				continue
			}
			if name == configName {
				r.Config = dst
			}
			var f *os.File
			if err = mkdir(filepath.Dir(dst)); err == nil {
				f, err = os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fs.FileMode(h.Mode)&0o644|0o400)
			}
			if err == nil {
				var n int64
				n, err = io.Copy(f, tr) // at most h.Size: tar says so
				total += n
				err = errors.Join(err, f.Close())
			}
		default:
			return nil, fail(name, "entry of type %q, not a file, directory or symlink", h.Typeflag)
		}
		if err != nil {
			return nil, fail(name, "%s", why(err))
		}
	}
	if _, err := io.Copy(io.Discard, io.LimitReader(zr, maxTrailer)); err != nil {
		return nil, fail("", "damaged archive: %v", err)
	}
	if !seen[manifestName] {
		return nil, fail(manifestName, "missing")
	}
	r.Roots = machine.Roots{Sys: filepath.Join(dir, "sys"), Proc: filepath.Join(dir, "proc")}
	if seen["etc"] {
		r.Roots.Etc = filepath.Join(dir, "etc")
	}
	if nl != nil && (nl.QueueGet != nil || nl.NAPIGet != nil) {
		r.Roots.Netdev = nl
	}
	if nl != nil && nl.Counters != nil {
		r.Queues = nl
	}
	return r, nil
}

// checkName says what is wrong with an entry name, "" when nothing.
func checkName(name string, typ byte, seen, links map[string]bool) string {
	switch {
	case name == "" || strings.ContainsRune(name, 0):
		return "an empty name or a NUL in it"
	case path.IsAbs(name):
		return "an absolute path"
	case path.Clean(name) != name || name == ".." || strings.HasPrefix(name, "../"):
		return "a path that is not clean or leaves the archive"
	case seen[name]:
		return "a second entry of this name"
	}
	topDir, _, _ := strings.Cut(name, "/")
	switch {
	case name == manifestName || name == netlinkName || name == configName:
		if typ != tar.TypeReg {
			return "not a regular file"
		}
	case topDir != "sys" && topDir != "proc" && topDir != "etc":
		return "outside sys/, proc/ and etc/"
	case topDir == name && typ != tar.TypeDir:
		return "not a directory"
	}
	for p := path.Dir(name); p != "."; p = path.Dir(p) {
		if links[p] {
			return "below a symlink"
		}
	}
	return ""
}

// checkLink says what is wrong with a symlink at name to target: a
// clean relative path, up no further than the archive's root.
func checkLink(name, target string) string {
	if target == "" || path.IsAbs(target) || strings.ContainsRune(target, 0) || path.Clean(target) != target {
		return "that is absolute, empty or not clean"
	}
	up := 0 // a clean path has its ".." first
	for _, p := range strings.Split(target, "/") {
		if p == ".." {
			up++
		}
	}
	if up > strings.Count(name, "/") {
		return "that leaves the archive"
	}
	return ""
}
