package inventory

import (
	"errors"
	"maps"
	"strconv"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/napi"
)

// NAPIThread is a threaded-NAPI kthread, what it serves and its CPUs.
type NAPIThread struct {
	Interface string
	PID       int
	Comm      string // /proc/PID/status Name, "napi/eth0-8193"
	NAPIID    int
	IRQ       int // from napi-get; -1 when unknown
	Queue     int // the queue the NAPI serves and its Kind; -1 and "" unknown
	Kind      napi.Kind
	Source    napi.Source
	// Affinity is Cpus_allowed_list, not known when Err is set.
	Affinity cpumask.Mask
	// Err says why the affinity is not known or the thread is not to be
	// touched (a pid from another pid namespace).
	Err error
}

// NAPIUnresolved is a NAPI kthread whose cut name fits several interfaces.
type NAPIUnresolved struct {
	PID        int
	Comm       string
	Interfaces []string
}

// NAPI says how a device's NAPI kthreads were found.
type NAPI struct {
	Threaded   []string // the device's interfaces with threaded on
	Threads    []NAPIThread
	Unresolved []NAPIUnresolved
	Err        error // why threads could not be found or threaded read
}

// NetQueue is the queues netdev netlink links to an IRQ via their NAPI.
type NetQueue struct {
	Interface string
	// Queue is the lowest queue id the IRQ's NAPIs serve, IDs all of
	// them, ascending (with traffic classes also tx queues K+N, ...).
	Queue  int
	IDs    []int
	RX, TX bool
}

// Depth is how much of the inventory a Read re-read.
type Depth uint8

const (
	// DepthAffinities: the key held; only affinities, tx queues and NAPI
	// kthreads were read. DepthInterrupts: /proc/interrupts and the
	// devices too, keeping facts where their keys held.
	DepthAffinities Depth = iota
	DepthInterrupts
	DepthAll // everything was read afresh
)

// String names the depth for logs.
func (d Depth) String() string {
	if d > DepthAll {
		return "Depth(" + strconv.Itoa(int(d)) + ")"
	}
	return [...]string{"affinities", "interrupts", "all"}[d]
}

// Effective is where an IRQ really is and how often it has fired: a
// deferred move waits for the next interrupt (docs/kernel.md §3.1).
type Effective struct {
	CPUs cpumask.Mask // effective_affinity_list, empty when not read
	// Count sums /sys/kernel/irq/N/per_cpu_count, valid when Counted.
	Count   uint64
	Counted bool
	// Err says why effective_affinity_list could not be read or parsed.
	Err string
}

// WithEffective returns a copy of inv that also holds eff.
func (inv *Inventory) WithEffective(eff map[int]Effective) *Inventory {
	c := *inv
	c.Effective = maps.Clone(eff)
	return &c
}

// TxQueue is an interface's transmit queue and its XPS map.
type TxQueue struct {
	Interface string
	Queue     int
	// XPS is xps_cpus, not known when Err is set.
	XPS cpumask.Mask
	// Err says why xps_cpus could not be read: ErrXPSUnsupported,
	// EINVAL (unresolvable traffic class), fs.ErrNotExist, ErrMalformed.
	Err error
}

// ErrXPSUnsupported: xps_cpus reads ENOENT (a single-queue device).
var ErrXPSUnsupported = errors.New("XPS unsupported on a single-queue device")
