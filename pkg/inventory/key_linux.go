package inventory

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"

	"github.com/numairqd/numairqd/pkg/kernfs"
)

// key is the inventory's shape, cheap to read: while it holds, a Reader
// reads only affinities. It is read before the inventory, so a change
// during a read shows in the next key. The link count of /proc/irq
// counts its IRQ directories, so one fstat sees vectors come and go.
type key struct {
	irqDirs uint64    // the link count of /proc/irq
	net     []string  // sorted
	devices []pciLink // sorted by BDF
}

// pciLink is a PCI device and its driver, "" when unbound.
type pciLink struct{ bdf, driver string }

func (k key) equal(o key) bool {
	return k.irqDirs == o.irqDirs && slices.Equal(k.net, o.net) && slices.Equal(k.devices, o.devices)
}

// readKey reads the key, irqDirs from dirfd, the open <proc>/irq.
func (fsys FS) readKey(kr *kernfs.Reader, dirfd int) (key, error) {
	var k key
	var err error
	dir := filepath.Join(fsys.Proc, "irq")
	if k.irqDirs, err = kernfs.Links(dirfd, dir); err != nil {
		return k, kernfs.FileErr(dir, err)
	}
	dir = filepath.Join(fsys.Sys, "class", "net")
	if k.net, err = dirNames(kr, dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return k, kernfs.FileErr(dir, err)
	}
	dir = filepath.Join(fsys.Sys, "bus", "pci", "devices")
	bdfs, err := dirNames(kr, dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return k, kernfs.FileErr(dir, err)
	}
	k.devices = make([]pciLink, len(bdfs))
	for i, bdf := range bdfs {
		k.devices[i].bdf = bdf
		if k.devices[i].driver, err = driverName(kr, filepath.Join(dir, bdf)); err != nil {
			return k, err
		}
	}
	return k, nil
}
