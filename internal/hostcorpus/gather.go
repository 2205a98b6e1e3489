package hostcorpus

import (
	"archive/tar"
	"compress/bzip2"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"
)

// Gather is an unpacked hwloc-gather-topology tarball: its files and
// symlinks by path below the gather's top directory ("sys/...").
type Gather struct {
	files map[string]string // content
	links map[string]string // symlink target, as written
	dirs  map[string][]string
}

// gatherLimits bound what ReadGather reads.
const (
	maxGatherFile    = 1 << 20
	maxGatherEntries = 200000
)

// ReadGather reads the .tar.bz2 gather at p.
func ReadGather(p string) (*Gather, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	g := &Gather{files: map[string]string{}, links: map[string]string{}, dirs: map[string][]string{}}
	tr := tar.NewReader(bzip2.NewReader(f))
	for n := 0; ; n++ {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if n == maxGatherEntries {
			return nil, fmt.Errorf("%s: more than %d entries", p, maxGatherEntries)
		}
		// Drop the top directory, named after the machine.
		_, rel, ok := strings.Cut(strings.TrimPrefix(path.Clean(h.Name), "./"), "/")
		if !ok || rel == "" {
			continue
		}
		switch h.Typeflag {
		case tar.TypeReg:
			b, err := io.ReadAll(io.LimitReader(tr, maxGatherFile+1))
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", p, h.Name, err)
			}
			if len(b) > maxGatherFile {
				return nil, fmt.Errorf("%s: %s is over %d bytes", p, h.Name, maxGatherFile)
			}
			g.files[rel] = string(b)
		case tar.TypeSymlink:
			g.links[rel] = strings.TrimSuffix(h.Linkname, "/")
		case tar.TypeDir:
		default:
			continue
		}
		g.add(rel)
	}
	return g, nil
}

// add lists rel and its parents in their directories; tarballs need
// not list parents before their children.
func (g *Gather) add(rel string) {
	for rel != "" {
		up, name := path.Split(rel)
		up = strings.TrimSuffix(up, "/")
		if i, found := slices.BinarySearch(g.dirs[up], name); !found {
			g.dirs[up] = slices.Insert(g.dirs[up], i, name)
		}
		rel = up
	}
}

// Raw returns the content of the file at p, following symlinks in its
// parents.
func (g *Gather) Raw(p string) (string, bool) {
	s, ok := g.files[g.Resolve(p)]
	return s, ok
}

// Read is Raw trimmed of white space and of the NUL bytes some kernels
// end sysfs files with.
func (g *Gather) Read(p string) (string, bool) {
	s, ok := g.Raw(p)
	return strings.TrimSpace(strings.TrimRight(s, "\x00")), ok
}

// List returns the names in the directory at p, sorted.
func (g *Gather) List(p string) []string { return g.dirs[g.Resolve(p)] }

// Link returns the target of the symlink at p.
func (g *Gather) Link(p string) (string, bool) {
	t, ok := g.links[g.Resolve(path.Dir(p))+"/"+path.Base(p)]
	return t, ok
}

// Resolve returns p with every symlink among its elements followed
// (up to 40, as the kernel allows).
func (g *Gather) Resolve(p string) string {
	elems := strings.Split(path.Clean(p), "/")
	cur := ""
	for hops, i := 0, 0; i < len(elems); i++ {
		next := path.Join(cur, elems[i])
		t, ok := g.links[next]
		if !ok || hops == 40 {
			cur = next
			continue
		}
		hops++
		if path.IsAbs(t) {
			return p // a link out of the gather
		}
		// Follow it, then the elements after it.
		elems = append(strings.Split(path.Join(cur, t), "/"), elems[i+1:]...)
		cur, i = "", -1
	}
	return cur
}
