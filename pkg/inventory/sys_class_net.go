package inventory

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// readNetInterfaces adds to devs the interfaces of <sys>/class/net/*
// (net/core/net-sysfs.c). An interface's "device" link points at the PCI
// device or, for virtio-net, at the virtio child (…/0000:41:00.0/virtio0),
// so the path is walked up to the nearest component that is a known BDF.
// Virtual interfaces have no "device" link and are skipped, as are
// interfaces removed while they are read. A USB NIC lands on its USB
// host controller, whose IRQ does carry its traffic.
func (fsys FS) readNetInterfaces(devs []pciDevice) error {
	dir := filepath.Join(fsys.Sys, "class", "net")
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fileErr(dir, err)
	}
	byBDF := make(map[string]int, len(devs))
	for i, d := range devs {
		byBDF[d.PCI] = i
	}
	for _, e := range ents {
		link := filepath.Join(dir, e.Name(), "device")
		real, err := filepath.EvalSymlinks(link)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fileErr(link, err)
		}
		for p := real; ; p = filepath.Dir(p) {
			if i, ok := byBDF[filepath.Base(p)]; ok {
				devs[i].Interfaces = append(devs[i].Interfaces, e.Name())
				break
			}
			if p == filepath.Dir(p) {
				break
			}
		}
	}
	for i := range devs {
		slices.Sort(devs[i].Interfaces)
	}
	return nil
}
