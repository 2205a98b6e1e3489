package inventory

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"

	"github.com/numairqd/numairqd/pkg/kernfs"
)

// readNetInterfaces adds to devs the interfaces in names, the listing
// of <sys>/class/net (net/core/net-sysfs.c). An interface's device path
// may end at a child (…/0000:41:00.0/virtio0), so it is walked up to the
// nearest known BDF; a USB NIC lands on its host controller, whose IRQ
// carries its traffic. Virtual and removed interfaces are skipped.
func (fsys FS) readNetInterfaces(kr *kernfs.Reader, names []string, devs []pciDevice) error {
	dir := filepath.Join(fsys.Sys, "class", "net")
	byBDF := make(map[string]int, len(devs))
	for i, d := range devs {
		byBDF[d.PCI] = i
	}
	for _, name := range names {
		real, err := interfacePath(kr, dir, name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		for p := real; ; p = filepath.Dir(p) {
			if i, ok := byBDF[filepath.Base(p)]; ok {
				devs[i].Interfaces = append(devs[i].Interfaces, name)
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

// interfacePath returns a path whose components name the devices above
// interface name: on a host class/net/NAME is a link into the device
// tree, read in one call; elsewhere NAME/device is resolved whole.
// fs.ErrNotExist means an interface removed or without a device link.
func interfacePath(kr *kernfs.Reader, dir, name string) (string, error) {
	path := filepath.Join(dir, name)
	target, err := kr.Readlink(path)
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return target, err
	}
	link := filepath.Join(path, "device")
	real, err := filepath.EvalSymlinks(link)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fileErr(link, err)
	}
	return real, err
}
