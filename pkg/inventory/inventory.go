package inventory

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

// FS names the procfs and sysfs roots to read. Roots are values, not
// globals, so tests point them at a fakesys tree; on a host they are
// FS{Proc: "/proc", Sys: "/sys"}.
type FS struct {
	Proc string
	Sys  string
}

// Inventory is one consistent-enough snapshot of the machine's IRQs and
// the devices that own them: the input of the planner. It is never
// changed once read: a Reader builds a new one for every round, copying
// what it kept from the last.
type Inventory struct {
	// CPUs are the CPUs with a column in /proc/interrupts, i.e. the CPUs
	// online when it was read, or, after a Reader's DepthAffinities
	// read, the online CPUs its caller gave. Compare with topology to
	// spot hotplug.
	CPUs cpumask.Mask
	// IRQs are all IRQs with a handler, sorted by number.
	IRQs []IRQ
	// Devices are the PCI devices, sorted by BDF (string order).
	Devices []Device
}

// IRQ is one Linux IRQ line with what the planner needs to decide where
// it should run and whether it may be moved at all. It holds only what
// is used: each field is a file read for each of thousands of IRQs.
type IRQ struct {
	Number int
	// Name is the actions joined with ", " as /proc/interrupts prints
	// them, e.g. "virtio0-input.0" or "ehci_hcd:usb1, eth0".
	Name    string
	Actions []string
	// Affinity is smp_affinity_list, the requested mask (may hold
	// offline CPUs: the kernel stores it verbatim).
	Affinity cpumask.Mask
	// Managed is true when the kernel will refuse affinity writes
	// (managed or otherwise unsteerable IRQ), found before any write.
	Managed       bool
	ManagedReason string
	// Unreadable says why the IRQ's /proc/irq/N files could not be read
	// or parsed, naming the file; "" when they could. Such an IRQ is
	// listed, so it is reported, but its masks are not known.
	Unreadable string
	// Device is the BDF of the owning PCI device, "" for none. A legacy
	// INTx line shared by several devices belongs to the lowest BDF.
	// What an IRQ does for its device (queue or control) is the
	// planner's call, from Actions and the config's rules.
	Device string
}

// Movable reports whether q is a device's IRQ the kernel does not
// manage: one the planner may move, and so one whose affinity a round
// after a CPU event re-reads.
func (q IRQ) Movable() bool { return q.Device != "" && !q.Managed }

// Device is a PCI device that owns IRQs, with the facts a policy rule
// matches on (driver, class, interfaces) and the NUMA node it is local to.
type Device struct {
	// PCI is the device's BDF, e.g. "0000:41:00.0".
	PCI string
	// Driver is the bound PCI driver ("virtio-pci", "nvme", "mlx5_core"),
	// "" when unbound.
	Driver string
	// Drivers is Driver followed by the drivers of child devices that
	// do the real work (virtio0 -> "virtio_net"); empty when unbound.
	Drivers []string
	// Class is the PCI class as sysfs prints it, e.g. "0x020000".
	Class string
	// NUMANode is numa_node, -1 when none or missing.
	NUMANode int
	// Interfaces are the network interfaces on the device, sorted.
	Interfaces []string
	// IRQs are the device's IRQ numbers (msi_irqs, else the legacy irq)
	// that have a handler, ascending. IRQs the device allocated but
	// never requested are not listed: there is nothing to steer.
	IRQs []int
}

// IRQ returns the IRQ with the given number.
func (inv *Inventory) IRQ(number int) (IRQ, bool) {
	i, ok := slices.BinarySearchFunc(inv.IRQs, number, func(q IRQ, n int) int { return q.Number - n })
	if !ok {
		return IRQ{}, false
	}
	return inv.IRQs[i], true
}

// Device returns the device with the given BDF.
func (inv *Inventory) Device(bdf string) (Device, bool) {
	i, ok := slices.BinarySearchFunc(inv.Devices, bdf, func(d Device, b string) int { return strings.Compare(d.PCI, b) })
	if !ok {
		return Device{}, false
	}
	return inv.Devices[i], true
}

// DeviceIRQs returns copies of the IRQs owned by the device bdf, in
// number order. It looks up the device's own
// IRQ list, so planning every device costs O(IRQs log IRQs), not
// devices × IRQs.
func (inv *Inventory) DeviceIRQs(bdf string) []IRQ {
	d, ok := inv.Device(bdf)
	if !ok {
		return nil
	}
	out := make([]IRQ, 0, len(d.IRQs))
	for _, n := range d.IRQs {
		// A shared legacy line is listed by every device but owned by one.
		if q, ok := inv.IRQ(n); ok && q.Device == bdf {
			out = append(out, q)
		}
	}
	return out
}

// Read reads the whole inventory: /proc/interrupts, /proc/irq/N for each
// IRQ listed there, the PCI devices and the network interfaces. A
// daemon that reads round after round uses a Reader, which re-reads
// only what can have changed.
func (fsys FS) Read() (*Inventory, error) {
	inv, _, err := NewReader(fsys).Read(cpumask.Mask{}, DepthAll)
	return inv, err
}

// link gives each IRQ its device and keeps in Device.IRQs only IRQs
// with a handler.
func link(inv *Inventory, devs []pciDevice) {
	index := make(map[int]int, len(inv.IRQs))
	for i, q := range inv.IRQs {
		index[q.Number] = i
	}
	for di, d := range devs {
		var have []int
		for _, n := range d.irqs {
			i, ok := index[n]
			if !ok {
				continue
			}
			have = append(have, n)
			if inv.IRQs[i].Device == "" {
				inv.IRQs[i].Device = d.PCI
			}
		}
		inv.Devices[di].IRQs = have
	}
}

// fileErr names path once: it replaces an *fs.PathError (which names it
// too) by its cause, keeping errors.Is(err, fs.ErrNotExist) working.
func fileErr(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path {
		err = pe.Err
	}
	return fmt.Errorf("read %s: %w", path, err)
}
