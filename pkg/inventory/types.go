package inventory

import (
	"errors"
	"maps"
	"strconv"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/napi"
)

// NAPIThread is one kthread of threaded NAPI on an interface of a
// device, what pkg/napi found it serves and its CPU affinity, which the
// planner makes follow its IRQ (docs/datapath-draft.md §9).
type NAPIThread struct {
	Interface string
	PID       int
	// Comm is the thread's name (/proc/PID/status Name), e.g.
	// "napi/eth0-8193": with PID, what tells it from a later thread
	// that reuses the pid.
	Comm   string
	NAPIID int // napi.Thread.NAPIID
	// IRQ is the IRQ napi-get gives (6.8+, drivers that set it); -1
	// when unknown.
	IRQ int
	// Queue and Kind are the queue the NAPI serves when known (napi-get
	// gives none; a driver rule does): Queue -1 and Kind "" when not.
	Queue  int
	Kind   napi.Kind
	Source napi.Source
	// Affinity is Cpus_allowed_list; empty (and not known) when Err is set.
	Affinity cpumask.Mask
	// Err says why the thread's affinity is not known or why it is not
	// to be touched (a pid napi-get gave that is not a NAPI kthread in
	// this pid namespace), nil when all is well.
	Err error
}

// NAPIUnresolved is a NAPI kthread whose cut name fits more than one
// interface of the machine, this device's among them.
type NAPIUnresolved struct {
	PID        int
	Comm       string
	Interfaces []string
}

// NAPI says how a device's NAPI kthreads were found.
type NAPI struct {
	// Threaded are the device's interfaces whose threaded is on.
	Threaded []string
	Threads  []NAPIThread
	// Unresolved are threads whose name fits several interfaces.
	Unresolved []NAPIUnresolved
	// Err is why the threads could not be found (napi.Find failed)
	// and which interfaces' threaded could not be read (taken as off),
	// nil when all was read.
	Err error
}

// NetQueue is what netdev netlink says an IRQ serves: the queues whose
// NAPI has it as its IRQ. The planner takes it over the IRQ's name.
type NetQueue struct {
	Interface string
	// Queue is the lowest queue id the IRQ's NAPIs serve (one NAPI
	// serves rx and tx queue K of a combined channel); IDs are all of
	// them, ascending (with traffic classes a channel's NAPI also
	// serves tx queues K+N, K+2N, ...).
	Queue  int
	IDs    []int
	RX, TX bool
}

// Depth is how much of the inventory a Read re-read.
type Depth uint8

const (
	// DepthAffinities: the key held, so only the movable IRQs'
	// affinities, the tx queues (listing and XPS maps) and the NAPI
	// kthreads with their affinities were read.
	DepthAffinities Depth = iota
	// DepthInterrupts: /proc/interrupts, the devices and the affinities
	// were read, keeping facts where their keys held.
	DepthInterrupts
	// DepthAll: everything was read afresh, nothing kept.
	DepthAll
)

// String names the depth for logs.
func (d Depth) String() string {
	if d > DepthAll {
		return "Depth(" + strconv.Itoa(int(d)) + ")"
	}
	return [...]string{"affinities", "interrupts", "all"}[d]
}

// Effective is what the kernel shows of where an IRQ really is: the
// CPUs its vector is programmed on and how often it has fired. Where
// moves are deferred (MSI without interrupt remapping, Hyper-V), a
// written mask takes effect at the IRQ's next interrupt, so the two are
// read together: an IRQ outside its mask that has not fired since the
// write has not had its move yet (docs/kernel.md §3.1).
type Effective struct {
	// CPUs is /proc/irq/N/effective_affinity_list: one CPU on x86.
	// Empty when the kernel has no such file
	// (CONFIG_GENERIC_IRQ_EFFECTIVE_AFF_MASK) or it could not be read.
	CPUs cpumask.Mask
	// Count is the sum of /sys/kernel/irq/N/per_cpu_count, valid when
	// Counted (the file needs CONFIG_SPARSE_IRQ).
	Count   uint64
	Counted bool
	// Err says why effective_affinity_list could not be read or parsed,
	// "" when it was or does not exist.
	Err string
}

// WithEffective returns a copy of inv that also holds eff, the
// effective placement of the IRQs being verified (see
// Inventory.Effective); inv itself is not changed.
func (inv *Inventory) WithEffective(eff map[int]Effective) *Inventory {
	c := *inv
	c.Effective = maps.Clone(eff)
	return &c
}

// TxQueue is one transmit queue of a network interface and its transmit
// steering (XPS) map, which the planner makes follow the queue's
// completion IRQ (docs/datapath-draft.md §8).
type TxQueue struct {
	Interface string
	Queue     int
	// XPS is xps_cpus, the CPUs whose sends go to this queue; empty
	// (and not known) when Err is set.
	XPS cpumask.Mask
	// Err says why xps_cpus could not be read, nil when it could. It
	// wraps ENOENT on a single-queue device (XPS unsupported, the file
	// exists), EINVAL for a queue whose traffic class cannot be
	// resolved, fs.ErrNotExist too when the file is absent (a kernel
	// without CONFIG_XPS), or kernfs.ErrMalformed.
	Err error
}

// ErrXPSUnsupported is a TxQueue.Err for an xps_cpus that exists but
// whose read fails with ENOENT: a single-queue device (xps_cpus_show()
// refuses when !netif_is_multiqueue()). A missing file is plain
// fs.ErrNotExist.
var ErrXPSUnsupported = errors.New("XPS unsupported on a single-queue device")
