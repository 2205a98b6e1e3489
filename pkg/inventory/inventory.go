// Package inventory reads a machine's IRQs and the devices that own
// them: every IRQ with a handler, the PCI devices, their interfaces' tx
// queues and threaded NAPI kthreads, and which IRQs the kernel manages.
//
// Roots are values (FS), so the same code reads a host or a fixture
// tree. What cannot be read keeps its error; what is removed while read
// is left out. The readers are Linux-only.
package inventory

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

// Inventory is one snapshot of the machine's IRQs and the devices that
// own them, the planner's input. It is never changed once read.
type Inventory struct {
	// CPUs are the CPUs with a column in /proc/interrupts, or after a
	// DepthAffinities read the caller's online CPUs.
	CPUs    cpumask.Mask
	IRQs    []IRQ    // all IRQs with a handler, by number
	Devices []Device // the PCI devices, by BDF
	// Effective is where the IRQs being verified really are, by number;
	// nil when not read (WithEffective).
	Effective map[int]Effective
}

// IRQ is one Linux IRQ with what the planner needs to place it.
type IRQ struct {
	Number int
	// Name is the actions joined with ", " as /proc/interrupts prints
	// them ("ehci_hcd:usb1, eth0").
	Name    string
	Actions []string
	// Affinity is smp_affinity_list (may hold offline CPUs).
	Affinity cpumask.Mask
	// Managed is set when the kernel will refuse affinity writes.
	Managed       bool
	ManagedReason string
	// Unreadable says why /proc/irq/N could not be read; the masks are
	// then not known.
	Unreadable string
	// Device is the owning PCI device's BDF, "" for none; a shared INTx
	// line belongs to the lowest BDF.
	Device string
}

// Movable reports whether q is a device's IRQ the planner may move.
func (q IRQ) Movable() bool { return q.Device != "" && !q.Managed }

// Device is a PCI device that owns IRQs, with the facts a policy rule
// matches on and the NUMA node it is local to.
type Device struct {
	PCI    string // BDF, "0000:41:00.0"
	Driver string // bound PCI driver, "" when unbound
	// Drivers is Driver followed by the drivers of child devices that
	// do the work (virtio0's "virtio_net").
	Drivers    []string
	Class      string   // as sysfs prints it, "0x020000"
	NUMANode   int      // -1 when none
	Interfaces []string // sorted
	// IRQs are the device's IRQs with a handler (msi_irqs, else the
	// legacy irq), ascending.
	IRQs []int
	// TxQueues are the tx queues of Interfaces, by interface and queue;
	// TxQueuesErr is why some interfaces' could not be listed.
	TxQueues    []TxQueue
	TxQueuesErr error
	NAPI        NAPI // the threaded NAPI kthreads of Interfaces
	// NetQueues is what netdev netlink says each IRQ serves, by IRQ;
	// nil where it says nothing. NetQueuesErr is why it could not ask.
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

// DeviceIRQs returns copies of the IRQs the device bdf owns, by number.
func (inv *Inventory) DeviceIRQs(bdf string) []IRQ {
	d, ok := inv.Device(bdf)
	if !ok {
		return nil
	}
	out := make([]IRQ, 0, len(d.IRQs))
	for _, n := range d.IRQs {
		if q, ok := inv.IRQ(n); ok && q.Device == bdf {
			out = append(out, q)
		}
	}
	return out
}

// pciBaseClasses name the PCI base classes of multi-queue devices.
var pciBaseClasses = map[uint64]string{
	0x01: "storage",
	0x02: "network",
	0x03: "display",
	0x04: "multimedia",
	0x0c: "serial bus",
	0x12: "accelerator",
}

// ClassName names a PCI class as sysfs prints it ("0x020000" is
// "network"); "" for one it does not know.
func ClassName(class string) string {
	if len(class) != 8 || class[:2] != "0x" {
		return ""
	}
	v, err := strconv.ParseUint(class[2:], 16, 32)
	if err != nil {
		return ""
	}
	return pciBaseClasses[v>>16]
}

// driverManaged names IRQs the drivers always allocate managed, for
// kernels before 6.12, whose smp_affinity is writable all the same.
var driverManaged = []struct {
	re  *regexp.Regexp
	why string
}{
	{regexp.MustCompile(`^nvme\d+q[1-9]\d*$`), "nvme I/O queue: the driver allocates it with managed affinity"},
	{regexp.MustCompile(`^virtio\d+-req\.\d+$`), "virtio-blk queue: the driver allocates it with managed affinity"},
}

// markDriverManaged marks irq managed if an action is driverManaged.
func markDriverManaged(irq *IRQ) {
	if irq.Managed {
		return
	}
	for _, a := range irq.Actions {
		for _, m := range driverManaged {
			if m.re.MatchString(a) {
				irq.Managed, irq.ManagedReason = true, m.why
				return
			}
		}
	}
}
