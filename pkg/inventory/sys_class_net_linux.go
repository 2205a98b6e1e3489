package inventory

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"

	"github.com/numairqd/numairqd/pkg/kernfs"
)

// readNetInterfaces adds to devs the interfaces in names, the listing of
// <sys>/class/net, each on the nearest known BDF above its device path
// (a virtio child's parent, a USB NIC's host controller). Virtual and
// removed interfaces are skipped.
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

// interfacePath returns a path naming the devices above interface name:
// the class/net/NAME link on a host, else NAME/device resolved.
// fs.ErrNotExist means removed or without a device.
func interfacePath(kr *kernfs.Reader, dir, name string) (string, error) {
	path := filepath.Join(dir, name)
	target, err := kr.Readlink(path)
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return target, err
	}
	link := filepath.Join(path, "device")
	real, err := filepath.EvalSymlinks(link)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", kernfs.FileErr(link, err)
	}
	return real, err
}
