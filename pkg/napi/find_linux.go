package napi

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/numairqd/numairqd/pkg/kernfs"
	"github.com/numairqd/numairqd/pkg/netdev"
)

// FS are the roots Find reads: "/proc" and "/sys", or a fixture tree.
type FS struct{ Proc, Sys string }

// Options tune Find.
type Options struct {
	FS FS
	// NAPIs, if set, is the kernel's napi-get dump, asked first; set it
	// only with FS at the host's roots.
	NAPIs func() ([]netdev.NAPI, error)
}

// Find returns the NAPI kthreads of the interfaces ifaces: napi-get's,
// when Options.NAPIs has them, and those only /proc shows.
func Find(ifaces []string, o Options) (Result, error) {
	var (
		r   kernfs.Reader
		res Result
	)
	netDir := filepath.Join(o.FS.Sys, "class", "net")
	var names []string
	if err := r.ReadDir(netDir, func(n []byte) error { names = append(names, string(n)); return nil }); err != nil {
		return Result{}, fmt.Errorf("napi: %w", err)
	}
	slices.Sort(names)
	ifaces = slices.Compact(slices.Sorted(slices.Values(ifaces)))
	wanted := map[string]bool{}
	for _, i := range ifaces {
		wanted[i] = slices.Contains(names, i)
	}
	pts, err := scanProc(&r, o.FS.Proc)
	if err != nil {
		return Result{}, fmt.Errorf("napi: %w", err)
	}
	threads, unresolved := byIface(pts, names, wanted)
	res.Unresolved = unresolved
	if o.NAPIs != nil {
		threads, err = addNetlink(&r, netDir, ifaces, wanted, threads, o.NAPIs)
		if err != nil {
			return Result{}, err
		}
	}
	for _, iface := range ifaces {
		if !wanted[iface] {
			continue
		}
		driver, err := r.Readlink(filepath.Join(netDir, iface, "device", "driver"))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return Result{}, fmt.Errorf("napi: %w", err)
		}
		var mine []Thread
		for _, t := range threads {
			if t.Iface == iface {
				mine = append(mine, t)
			}
		}
		applyDriverRule(filepath.Base(driver), mine)
		res.Threads = append(res.Threads, mine...)
	}
	slices.SortFunc(res.Threads, func(a, b Thread) int {
		return cmp.Or(cmp.Compare(a.Iface, b.Iface), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Queue, b.Queue),
			cmp.Compare(a.NAPIID, b.NAPIID), cmp.Compare(a.PID, b.PID))
	})
	return res, nil
}

// addNetlink replaces each wanted interface's /proc threads by napi-get's
// (by ifindex), dumping once; without napi-get it changes nothing.
func addNetlink(r *kernfs.Reader, netDir string, ifaces []string, wanted map[string]bool, threads []Thread,
	dump func() ([]netdev.NAPI, error)) ([]Thread, error) {
	var napis []netdev.NAPI
	dumped := false
	for _, iface := range ifaces {
		if !wanted[iface] {
			continue
		}
		path := filepath.Join(netDir, iface, "ifindex")
		s, ok, err := r.ReadOptional(path)
		if err != nil {
			return nil, fmt.Errorf("napi: %w", err)
		}
		if !ok {
			continue // removed meanwhile
		}
		ifindex, err := strconv.Atoi(s)
		if err != nil || ifindex <= 0 {
			return nil, fmt.Errorf("napi: %w", kernfs.Malformed(path, "ifindex %s", kernfs.Quote(s)))
		}
		if !dumped {
			napis, err = dump()
			switch {
			case netdev.Unavailable(err):
				return threads, nil
			case err != nil:
				return nil, fmt.Errorf("napi: %w", err)
			}
			dumped = true
		}
		byPID := map[int]Thread{}
		for _, n := range napis {
			if n.PID > 0 && n.Ifindex == ifindex {
				byPID[n.PID] = Thread{Iface: iface, PID: n.PID, NAPIID: n.ID, IRQ: n.IRQ, Queue: -1, Source: SourceNetlink}
			}
		}
		threads = slices.DeleteFunc(threads, func(t Thread) bool { _, dup := byPID[t.PID]; return dup })
		for _, t := range byPID {
			threads = append(threads, t)
		}
	}
	return threads, nil
}
