package inventory

import (
	"path/filepath"
	"runtime"
	"slices"
	"sync"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

// Reader reads the inventory round after round and re-reads only what
// the caller says can have changed, keeping the rest from its previous
// read: after a CPU event, only the affinities; after a device event,
// /proc/interrupts, the devices and the affinities, with each IRQ's
// managed state kept while its /proc/interrupts row is unchanged. Read
// reads everything and is the safety net. A Reader is for one goroutine;
// the inventories it returns are never changed afterwards.
type Reader struct {
	fs   FS
	last *Inventory
	// facts are what the last read found of each IRQ that cannot change
	// while its row is the same, index for index with last.IRQs.
	facts []facts
}

// facts are one IRQ's kept facts and the row they were read under.
type facts struct {
	// known is false for an IRQ whose files could not be read: it has
	// nothing to keep.
	known bool
	row   rowKey
	// managed and reason are IRQ.Managed and ManagedReason: the mode of
	// smp_affinity, fixed when the IRQ is requested, or its name.
	managed bool
	reason  string
	// affinity is the smp_affinity_list text last read: the same text
	// is not parsed again.
	affinity string
}

// rowKey is what /proc/interrupts shows of an IRQ besides its counts:
// the chip, the hardware IRQ and the handlers' names. A number freed and
// requested again by another device or driver shows another row; the
// same device and driver requesting it again are caught by the
// device list the caller passes to Refresh (its pci uevents).
type rowKey struct{ chip, hwirq, name string }

// NewReader returns a Reader of fsys that has read nothing yet.
func NewReader(fsys FS) *Reader { return &Reader{fs: fsys} }

// Read reads the whole inventory afresh and forgets every kept fact.
func (r *Reader) Read() (*Inventory, error) {
	r.facts = nil
	return r.Refresh(nil)
}

// Refresh re-reads /proc/interrupts, the PCI devices' IRQs, the network
// interfaces and every IRQ's affinity. Of a device not named in changed
// (PCI addresses of the devices that were added, removed, bound or
// unbound) it keeps the node, class and drivers, which change only with
// those events. Of an IRQ whose row is unchanged it keeps the managed
// state, unless the IRQ belongs, now or in the last read, to a device
// named in changed: its IRQs may have been freed and requested again
// under the same row.
func (r *Reader) Refresh(changed []string) (*Inventory, error) {
	inv, facts, err := r.refresh(changed)
	r.remember(inv, facts, err)
	return inv, err
}

// Affinities re-reads only the affinity of each device IRQ of the last
// read: on a CPU hotplug the kernel moves IRQs off a CPU that goes and
// nothing else in the inventory changes. cpus, the online CPUs from the
// topology, become the inventory's CPUs. An IRQ that vanished is
// dropped: its device's event follows. Managed IRQs, which the planner
// leaves to the kernel, and unreadable ones keep what the last Refresh
// or Read found. Without a previous read it is Read.
func (r *Reader) Affinities(cpus cpumask.Mask) (*Inventory, error) {
	if r.last == nil {
		return r.Read()
	}
	inv, facts, err := r.affinities(cpus)
	r.remember(inv, facts, err)
	return inv, err
}

// remember keeps a successful read for the next; a failed one makes the
// next read a whole one.
func (r *Reader) remember(inv *Inventory, f []facts, err error) {
	if err != nil {
		r.last, r.facts = nil, nil
		return
	}
	r.last, r.facts = inv, f
}

func (r *Reader) affinities(cpus cpumask.Mask) (*Inventory, []facts, error) {
	ir, err := openIRQReader(filepath.Join(r.fs.Proc, "irq"))
	if err != nil {
		return nil, nil, err
	}
	defer ir.Close()
	n := len(r.last.IRQs)
	irqs, out := slices.Clone(r.last.IRQs), slices.Clone(r.facts)
	freed := make([]bool, n)
	inParallel(n, ir, func(ir *irqReader, i int) {
		q, f := &irqs[i], &out[i]
		if !f.known || !q.Movable() {
			return
		}
		text, ok, err := ir.affinity(q, q.Affinity, f.affinity)
		switch {
		case err != nil:
			// Left alone until a whole read finds it readable.
			q.Unreadable, *f = err.Error(), facts{}
		case !ok:
			freed[i] = true // its device's event follows
		default:
			f.affinity = text
		}
	})
	inv := &Inventory{CPUs: cpus, Devices: r.last.Devices, IRQs: irqs[:0]}
	kept := out[:0]
	for i := range n {
		if !freed[i] {
			inv.IRQs, kept = append(inv.IRQs, irqs[i]), append(kept, out[i])
		}
	}
	return inv, kept, nil
}

// perWorker is how many IRQs make another reader worth its goroutine.
const perWorker = 1024

// inParallel calls read for i in [0, n), split into contiguous ranges
// over up to GOMAXPROCS goroutines, each with its own copy of ir (its
// buffers; the directory descriptor is shared). Each file is still read
// once: the reads of 8192 IRQs are about 30 ms of system calls on one
// CPU, which a round after a CPU event waits for.
func inParallel(n int, ir *irqReader, read func(ir *irqReader, i int)) {
	workers := min(runtime.GOMAXPROCS(0), n/perWorker+1)
	if workers == 1 {
		for i := range n {
			read(ir, i)
		}
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := n*w/workers, n*(w+1)/workers
		wr := &irqReader{dir: ir.dir, dirfd: ir.dirfd}
		wg.Go(func() {
			for i := lo; i < hi; i++ {
				read(wr, i)
			}
		})
	}
	wg.Wait()
}

func (r *Reader) refresh(changed []string) (*Inventory, []facts, error) {
	ints, err := r.fs.readInterrupts(false)
	if err != nil {
		return nil, nil, err
	}
	ir, err := openIRQReader(filepath.Join(r.fs.Proc, "irq"))
	if err != nil {
		return nil, nil, err
	}
	defer ir.Close()
	devs, err := r.fs.readPCIDevices(&ir.r, r.keptDevice(changed))
	if err != nil {
		return nil, nil, err
	}
	if err := r.fs.readNetInterfaces(&ir.r, devs); err != nil {
		return nil, nil, err
	}
	forget := r.forgotten(changed, devs)

	inv := &Inventory{CPUs: cpumask.New(ints.CPUs...), IRQs: make([]IRQ, 0, len(ints.Rows))}
	out := make([]facts, 0, len(ints.Rows))
	for _, row := range ints.Rows {
		irq := IRQ{Number: row.IRQ, Name: actionsName(row.Actions), Actions: row.Actions}
		key := rowKey{row.Chip, row.HWIRQ, irq.Name}
		prev, f := r.kept(row.IRQ)
		kept := f.known && f.row == key && !forget[row.IRQ]
		var (
			text string
			ok   bool
		)
		if kept {
			irq.Managed, irq.ManagedReason = f.managed, f.reason
			text, ok, err = ir.affinity(&irq, prev.Affinity, f.affinity)
		} else {
			text, ok, err = ir.read(&irq)
		}
		if err != nil {
			// One IRQ's bad files never stop the machine: it is kept,
			// marked, and left alone by the planner.
			irq.Unreadable, ok, text = err.Error(), true, ""
		}
		if !ok {
			continue
		}
		if !kept {
			markDriverManaged(&irq)
		}
		inv.IRQs = append(inv.IRQs, irq)
		f = facts{}
		if irq.Unreadable == "" {
			f = facts{known: true, row: key, managed: irq.Managed, reason: irq.ManagedReason, affinity: text}
		}
		out = append(out, f)
	}
	// Rows are in ascending order on Linux; sort IRQs and facts together
	// in case a kernel does otherwise.
	if !slices.IsSortedFunc(inv.IRQs, func(a, b IRQ) int { return a.Number - b.Number }) {
		sortTogether(inv.IRQs, out)
	}
	inv.Devices = make([]Device, len(devs))
	for i, d := range devs {
		inv.Devices[i] = d.Device
	}
	link(inv, devs)
	return inv, out, nil
}

// keptDevice returns the lookup of the last read's devices for
// readPCIDevices, leaving out those named in changed; nil when nothing
// is kept.
func (r *Reader) keptDevice(changed []string) func(string) (Device, bool) {
	if r.last == nil || r.facts == nil {
		return nil
	}
	return func(bdf string) (Device, bool) {
		if slices.Contains(changed, bdf) {
			return Device{}, false
		}
		return r.last.Device(bdf)
	}
}

// kept returns the last read's IRQ n and its facts (zero when none).
func (r *Reader) kept(n int) (IRQ, facts) {
	if r.last == nil || r.facts == nil {
		return IRQ{}, facts{}
	}
	i, ok := slices.BinarySearchFunc(r.last.IRQs, n, func(q IRQ, n int) int { return q.Number - n })
	if !ok {
		return IRQ{}, facts{}
	}
	return r.last.IRQs[i], r.facts[i]
}

// sortTogether sorts irqs by number, moving facts with them.
func sortTogether(irqs []IRQ, f []facts) {
	idx := make([]int, len(irqs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return irqs[a].Number - irqs[b].Number })
	q2, f2 := slices.Clone(irqs), slices.Clone(f)
	for i, j := range idx {
		irqs[i], f[i] = q2[j], f2[j]
	}
}

// forgotten is the set of IRQs whose kept facts must not be used: those
// of the changed devices, as listed now and in the last read.
func (r *Reader) forgotten(changed []string, devs []pciDevice) map[int]bool {
	if len(changed) == 0 || r.last == nil {
		return nil
	}
	out := map[int]bool{}
	for _, d := range devs {
		if slices.Contains(changed, d.PCI) {
			for _, n := range d.irqs {
				out[n] = true
			}
		}
	}
	if r.last != nil {
		for _, bdf := range changed {
			if d, ok := r.last.Device(bdf); ok {
				for _, n := range d.IRQs {
					out[n] = true
				}
			}
		}
	}
	return out
}
