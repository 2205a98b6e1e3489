package inventory

import (
	"errors"
	"io/fs"
	"math"
	"path/filepath"
	"slices"

	"github.com/numairqd/numairqd/pkg/kernfs"
)

// key is what the kernel shows of the inventory's shape, cheap to read:
// while it holds, a Reader reads only affinities. It is read before the
// inventory, so a change during a read shows in the next key. An IRQ's
// /proc/irq/N lives from its first request_irq (register_irq_proc) to
// free_desc, so a vector freed and requested again changes irqs; an
// interface added or renamed changes net; a bind or unbind changes
// devices. An IRQ requested again under the same number by the same
// driver, or freed by free_irq alone, keeps its facts until a DepthAll
// read (the daemon's resync).
type key struct {
	irqs    []int     // ascending
	net     []string  // sorted
	devices []pciLink // sorted by BDF
}

// pciLink is a PCI device and its driver, "" when unbound.
type pciLink struct{ bdf, driver string }

func (k key) equal(o key) bool {
	return slices.Equal(k.irqs, o.irqs) && slices.Equal(k.net, o.net) && slices.Equal(k.devices, o.devices)
}

// readKey reads the key with kr. Missing sysfs directories (no PCI, no
// network) list nothing. nIRQs is how many IRQs the last key held.
func (fsys FS) readKey(kr *kernfs.Reader, nIRQs int) (key, error) {
	k := key{irqs: make([]int, 0, nIRQs)}
	dir := filepath.Join(fsys.Proc, "irq")
	err := kr.ReadDir(dir, func(name []byte) error {
		if n, ok := kernfs.ParseUint(name); ok && n <= math.MaxInt32 {
			k.irqs = append(k.irqs, int(n)) // not default_smp_affinity
		}
		return nil
	})
	if err != nil {
		return k, fileErr(dir, err)
	}
	if !slices.IsSorted(k.irqs) { // procfs lists them ascending
		slices.Sort(k.irqs)
	}
	dir = filepath.Join(fsys.Sys, "class", "net")
	if k.net, err = dirNames(kr, dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return k, fileErr(dir, err)
	}
	dir = filepath.Join(fsys.Sys, "bus", "pci", "devices")
	bdfs, err := dirNames(kr, dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return k, fileErr(dir, err)
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
