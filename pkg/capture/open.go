package capture

import (
	"archive/tar"
	"bufio"
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

// Bounds on what Open unpacks.
const (
	maxEntries = 1 << 18
	maxTotal   = 512 << 20 // bytes of all files
	maxJSON    = 16 << 20  // manifest.json, netlink.json
	maxTrailer = 1 << 20   // after the tar's end, before the gzip trailer
)

// maxSize is the largest file the readers of name accept: the limits
// of inventory's /proc/interrupts, load's /proc/stat and config.Load,
// else kernfs.MaxAttrSize.
func maxSize(name string) int64 {
	switch name {
	case "proc/interrupts":
		return 256 << 20
	case "proc/stat":
		return 4 << 20
	case configName:
		return 1 << 20
	case manifestName, netlinkName:
		return maxJSON
	}
	return kernfs.MaxAttrSize
}

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
	var nl *netlinkLog
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
			err = os.MkdirAll(dst, 0o755)
		case tar.TypeSymlink:
			if msg := checkLink(name, h.Linkname); msg != "" {
				return nil, fail(name, "symlink to %s %s", kernfs.Quote(h.Linkname), msg)
			}
			links[name] = true
			if err = os.MkdirAll(filepath.Dir(dst), 0o755); err == nil {
				err = os.Symlink(h.Linkname, dst)
			}
		case tar.TypeReg:
			if lim := maxSize(name); h.Size > lim || total+h.Size > maxTotal {
				return nil, fail(name, "%d bytes, more than the limit of %d (or %d in all)", h.Size, lim, maxTotal)
			}
			var data []byte
			if data, err = io.ReadAll(io.LimitReader(tr, maxSize(name)+1)); err != nil {
				return nil, fail(name, "damaged archive: %v", err)
			}
			if total += int64(len(data)); len(data) > int(maxSize(name)) || total > maxTotal {
				return nil, fail(name, "longer than its header says")
			}
			if v, ok := top[name]; ok {
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
			if err = os.MkdirAll(filepath.Dir(dst), 0o755); err == nil {
				err = os.WriteFile(dst, data, fs.FileMode(h.Mode)&0o644|0o400)
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
	if nl != nil {
		if nl.Queues != nil || nl.NAPIs != nil {
			r.Roots.Netdev = replayNetdev{nl}
		}
		if nl.QueueCounts != nil {
			r.Queues = replayQueues{nl}
		}
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
