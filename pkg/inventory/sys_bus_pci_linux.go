package inventory

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/numairqd/numairqd/pkg/kernfs"
)

// pciDevice is a Device being read, with every IRQ sysfs lists.
type pciDevice struct {
	Device
	irqs []int
}

// readPCIDevices reads the devices links lists from
// <sys>/bus/pci/devices; of one in kept only the IRQs. A device gone
// meanwhile is left out.
func (fsys FS) readPCIDevices(kr *kernfs.Reader, links []pciLink, kept map[string]Device) ([]pciDevice, error) {
	out := make([]pciDevice, 0, len(links))
	for _, l := range links {
		dir := filepath.Join(fsys.Sys, "bus", "pci", "devices", l.bdf)
		facts, found := kept[l.bdf]
		if !found {
			facts = Device{PCI: l.bdf, NUMANode: -1, Driver: l.driver}
		}
		d, ok, err := readPCIDeviceIRQs(kr, dir, facts)
		if ok && err == nil && !found {
			d, err = readPCIDeviceFacts(kr, dir, d)
		}
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, d)
		}
	}
	return out, nil
}

// readPCIDeviceIRQs reads a device's IRQs into a copy of facts, its
// other facts: vectors change without a bind (ethtool -L), the rest not.
func readPCIDeviceIRQs(kr *kernfs.Reader, dir string, facts Device) (pciDevice, bool, error) {
	facts.Interfaces, facts.IRQs = nil, nil
	d := pciDevice{Device: facts}
	msiDir := filepath.Join(dir, "msi_irqs")
	var bad error
	err := kr.ReadDir(msiDir, func(name []byte) error {
		n, err := strconv.Atoi(string(name))
		if err != nil || n < 0 {
			bad = kernfs.Malformed(msiDir, "entry %s is not an IRQ number", kernfs.Quote(name))
			return bad
		}
		d.irqs = append(d.irqs, n)
		return nil
	})
	if bad != nil {
		return d, false, bad
	}
	if errors.Is(err, fs.ErrNotExist) && !kr.Exists(dir) {
		return d, false, nil // unplugged
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return d, false, kernfs.FileErr(msiDir, err)
	}
	if len(d.irqs) == 0 {
		// Legacy INTx: "irq" holds the line, 0 when the device has none.
		path := filepath.Join(dir, "irq")
		s, ok, err := kr.ReadOptional(path)
		if err != nil {
			return d, false, kernfs.FileErr(path, err)
		}
		if !ok && !kr.Exists(dir) {
			return d, false, nil // unplugged
		}
		if ok {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				return d, false, kernfs.Malformed(path, "%s is not an IRQ number", kernfs.Quote(s))
			}
			if n > 0 {
				d.irqs = append(d.irqs, n)
			}
		}
	}
	slices.Sort(d.irqs)
	return d, true, nil
}

// readPCIDeviceFacts reads node, class and the child devices' drivers.
func readPCIDeviceFacts(kr *kernfs.Reader, dir string, d pciDevice) (pciDevice, error) {
	path := filepath.Join(dir, "numa_node")
	s, ok, err := kr.ReadOptional(path)
	if err != nil {
		return d, kernfs.FileErr(path, err)
	}
	if ok {
		if d.NUMANode, err = strconv.Atoi(s); err != nil || d.NUMANode < -1 {
			return d, fmt.Errorf("read %s: %s is not a NUMA node: %w", path, kernfs.Quote(s), kernfs.ErrMalformed)
		}
	}

	path = filepath.Join(dir, "class")
	if d.Class, _, err = kr.ReadOptional(path); err != nil {
		return d, kernfs.FileErr(path, err)
	}

	if d.Driver != "" {
		d.Drivers = append(d.Drivers, d.Driver)
	}
	// virtio_pci's virtioN child's driver names the IRQs (virtio_net).
	var children []string
	err = kr.ReadDir(dir, func(name []byte) error {
		if isVirtioChild(string(name)) {
			children = append(children, string(name))
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return d, kernfs.FileErr(dir, err)
	}
	slices.Sort(children)
	for _, c := range children {
		drv, err := driverName(kr, filepath.Join(dir, c))
		if err != nil {
			return d, err
		}
		if drv != "" {
			d.Drivers = append(d.Drivers, drv)
		}
	}
	return d, nil
}

// isVirtioChild reports whether name is a virtio device ("virtio0").
func isVirtioChild(name string) bool {
	num, ok := strings.CutPrefix(name, "virtio")
	return ok && kernfs.IsDigits([]byte(num))
}

// driverName is the base name of dir/driver's target, "" when unbound.
func driverName(kr *kernfs.Reader, dir string) (string, error) {
	path := filepath.Join(dir, "driver")
	target, err := kr.Readlink(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", kernfs.FileErr(path, err)
	}
	return filepath.Base(target), nil
}

// dirNames lists the directory at path, sorted.
func dirNames(kr *kernfs.Reader, path string) ([]string, error) {
	var names []string
	err := kr.ReadDir(path, func(name []byte) error {
		names = append(names, string(name))
		return nil
	})
	slices.Sort(names)
	return names, err
}

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
	real, err := kernfs.EvalSymlinks(link)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", kernfs.FileErr(link, err)
	}
	return real, err
}
