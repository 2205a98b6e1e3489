package inventory

import (
	"slices"
	"strings"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/kernfs"
)

// Inventory is one snapshot of the machine's IRQs and the devices that
// own them: the input of the planner. It is never changed once read.
type Inventory struct {
	// CPUs are the CPUs with a column in /proc/interrupts (online when
	// it was read), or after a DepthAffinities read the caller's online
	// CPUs. Compare with topology to spot hotplug.
	CPUs cpumask.Mask
	// IRQs are all IRQs with a handler, sorted by number.
	IRQs []IRQ
	// Devices are the PCI devices, sorted by BDF (string order).
	Devices []Device
	// Effective is where the kernel really put the IRQs whose writes
	// are being verified, by number; nil when none were read
	// (WithEffective).
	Effective map[int]Effective
}

// IRQ is one Linux IRQ line with what the planner needs to place it.
// It holds only what is used: each field is a file read per IRQ.
type IRQ struct {
	Number int
	// Name is the actions joined with ", " as /proc/interrupts prints
	// them, e.g. "virtio0-input.0" or "ehci_hcd:usb1, eth0".
	Name    string
	Actions []string
	// Affinity is smp_affinity_list, the requested mask (may hold
	// offline CPUs).
	Affinity cpumask.Mask
	// Managed is true when the kernel will refuse affinity writes.
	Managed       bool
	ManagedReason string
	// Unreadable says why the IRQ's /proc/irq/N files could not be read
	// or parsed, "" when they could; its masks are then not known.
	Unreadable string
	// Device is the BDF of the owning PCI device, "" for none. A legacy
	// INTx line shared by several devices belongs to the lowest BDF.
	Device string
}

// Movable reports whether q is a device's IRQ the kernel does not
// manage: one the planner may move.
func (q IRQ) Movable() bool { return q.Device != "" && !q.Managed }

// Device is a PCI device that owns IRQs, with the facts a policy rule
// matches on (driver, class, interfaces) and the NUMA node it is local to.
type Device struct {
	// PCI is the device's BDF, e.g. "0000:41:00.0".
	PCI string
	// Driver is the bound PCI driver ("nvme"), "" when unbound.
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
	// that have a handler, ascending.
	IRQs []int
	// TxQueues are the tx queues of Interfaces, by interface then queue,
	// re-read with the affinities every round.
	TxQueues []TxQueue
	// TxQueuesErr is why the tx queues of some of Interfaces could not
	// be listed (queues/ unreadable, an entry not tx-N): those have
	// none in TxQueues, the others do. nil when all were listed.
	TxQueuesErr error
	// NAPI are the kthreads of the interfaces with threaded NAPI on,
	// re-read with the affinities every round.
	NAPI NAPI
	// NetQueues is what netdev netlink says each IRQ of the device
	// serves, by IRQ number, read with the devices; nil where it says
	// nothing (before 6.8, or a driver that links no queue to a NAPI
	// with an IRQ). NetQueuesErr is why it could not be asked.
	NetQueues    map[int]NetQueue
	NetQueuesErr error
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
// number order, from the device's own IRQ list: O(IRQs log IRQs) for
// all devices, not devices × IRQs.
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

// fileErr is kernfs.FileErr.
func fileErr(path string, err error) error { return kernfs.FileErr(path, err) }
