package inventory

import (
	"cmp"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/kernfs"
)

// FS names the procfs and sysfs roots to read: "/proc" and "/sys" on a
// host, a fakesys tree in tests.
type FS struct {
	Proc string
	Sys  string
	// Netdev answers netdev netlink for each IRQ's queue; nil asks
	// nothing (fixture roots: netlink describes the running kernel).
	Netdev Netdev
}

// Reader reads the inventory round after round and keeps what shows no
// sign of change: an IRQ's managed state while its row and its device's
// driver hold, a device's facts while its driver holds. For one
// goroutine.
type Reader struct {
	fs    FS
	last  *Inventory
	key   key     // read before last
	facts []facts // index for index with last.IRQs
}

// facts are one IRQ's kept facts and the row they were read under.
type facts struct {
	known    bool // false for an IRQ whose files could not be read
	row      rowKey
	managed  bool
	reason   string
	affinity string // the smp_affinity_list text last read
}

// rowKey is what /proc/interrupts shows of an IRQ besides its counts.
type rowKey struct{ chip, hwirq, name string }

// NewReader returns a Reader of fsys that has read nothing yet.
func NewReader(fsys FS) *Reader { return &Reader{fs: fsys} }

// Read reads the inventory, at least as deep as least: DepthInterrupts
// when IRQs may have been requested anew on kept descriptors (ip link
// down/up, ethtool -L), DepthAll to forget every kept fact. online
// becomes the CPUs when /proc/interrupts is not read. A vanished IRQ is
// dropped, an unreadable one marked.
func (r *Reader) Read(online cpumask.Mask, least Depth) (*Inventory, Depth, error) {
	if least >= DepthAll {
		r.last = nil
	}
	ir, err := openIRQReader(filepath.Join(r.fs.Proc, "irq"))
	if err != nil {
		r.last = nil
		return nil, DepthAll, err
	}
	defer ir.Close()
	fsys := r.fs
	if fsys.Netdev != nil {
		fsys.Netdev = &oneNAPIDump{Netdev: fsys.Netdev}
	}
	k, err := fsys.readKey(&ir.r, ir.dirfd)
	depth := DepthAll
	if r.last != nil {
		depth = DepthInterrupts
	}
	var (
		inv *Inventory
		f   []facts
	)
	switch {
	case err != nil:
	case depth == DepthInterrupts && least == DepthAffinities && k.equal(r.key):
		depth = DepthAffinities
		inv, f, err = r.affinities(fsys, ir, online)
	default:
		inv, f, err = r.interrupts(fsys, ir, k)
	}
	if err != nil {
		r.last = nil
		return nil, depth, err
	}
	r.last, r.facts, r.key = inv, f, k
	return inv, depth, nil
}

// affinities re-reads the movable IRQs' affinities, the tx queues and
// the NAPI kthreads: all a CPU going on- or offline changes.
func (r *Reader) affinities(fsys FS, ir *irqReader, online cpumask.Mask) (*Inventory, []facts, error) {
	irqs, f := slices.Clone(r.last.IRQs), slices.Clone(r.facts)
	todo := make([]int, 0, len(irqs))
	for i, q := range irqs {
		if f[i].known && q.Movable() {
			todo = append(todo, i)
		}
	}
	irqs, f = readIRQs(ir, irqs, f, todo)
	devs := fsys.readQueues(&ir.r, r.last.Devices)
	return &Inventory{CPUs: online, IRQs: irqs, Devices: devs}, f, nil
}

// interrupts reads /proc/interrupts, the devices and what it cannot keep.
func (r *Reader) interrupts(fsys FS, ir *irqReader, k key) (*Inventory, []facts, error) {
	ints, err := fsys.readInterrupts(false)
	if err != nil {
		return nil, nil, err
	}
	// A bind or unbind requests a device's IRQs anew.
	kept := map[string]Device{}
	for _, l := range k.devices {
		if r.last == nil {
			break
		}
		if d, ok := r.last.Device(l.bdf); ok && d.Driver == l.driver {
			kept[l.bdf] = d
		}
	}
	devs, err := fsys.readPCIDevices(&ir.r, k.devices, kept)
	if err != nil {
		return nil, nil, err
	}
	if err := fsys.readNetInterfaces(&ir.r, k.net, devs); err != nil {
		return nil, nil, err
	}
	rows := ints.Rows // ascending on Linux
	byIRQ := func(a, b InterruptLine) int { return cmp.Compare(a.IRQ, b.IRQ) }
	if !slices.IsSortedFunc(rows, byIRQ) {
		slices.SortFunc(rows, byIRQ)
	}
	irqs, f, todo := make([]IRQ, len(rows)), make([]facts, len(rows)), make([]int, len(rows))
	for i, row := range rows {
		q := IRQ{Number: row.IRQ, Name: strings.Join(row.Actions, ", "), Actions: row.Actions}
		f[i] = facts{row: rowKey{row.Chip, row.HWIRQ, q.Name}}
		prev, pf := r.keptIRQ(row.IRQ)
		_, held := kept[prev.Device]
		if pf.known && pf.row == f[i].row && (held || prev.Device == "") {
			q.Managed, q.ManagedReason, q.Affinity = pf.managed, pf.reason, prev.Affinity
			f[i] = pf
		}
		irqs[i], todo[i] = q, i
	}
	irqs, f = readIRQs(ir, irqs, f, todo)
	inv := &Inventory{CPUs: cpumask.New(ints.CPUs...), IRQs: irqs}
	link(inv, devs)
	fsys.readNetQueues(&ir.r, inv.Devices)
	inv.Devices = fsys.readQueues(&ir.r, inv.Devices)
	return inv, f, nil
}

// keptIRQ returns the last read's IRQ n and its facts (zero when none).
func (r *Reader) keptIRQ(n int) (IRQ, facts) {
	if r.last == nil {
		return IRQ{}, facts{}
	}
	i, ok := slices.BinarySearchFunc(r.last.IRQs, n, func(q IRQ, n int) int { return q.Number - n })
	if !ok {
		return IRQ{}, facts{}
	}
	return r.last.IRQs[i], r.facts[i]
}

// readIRQs reads, in parallel, the files of irqs[i] for each i in todo
// (only the affinity where the facts are known), and returns irqs and f
// without the IRQs that are gone.
func readIRQs(ir *irqReader, irqs []IRQ, f []facts, todo []int) ([]IRQ, []facts) {
	gone := make([]bool, len(irqs))
	inParallel(len(todo), ir, func(ir *irqReader, j int) {
		i := todo[j]
		q, fi := &irqs[i], &f[i]
		var (
			text string
			ok   bool
			err  error
		)
		if fi.known {
			text, ok, err = ir.affinity(q, q.Affinity, fi.affinity)
		} else {
			text, ok, err = ir.read(q)
			markDriverManaged(q)
		}
		switch {
		case err != nil:
			// Kept, marked, and left alone by the planner.
			q.Unreadable, fi.known = err.Error(), false
		case !ok:
			gone[i] = true // free_desc removed its directory
		default:
			*fi = facts{known: true, row: fi.row, managed: q.Managed, reason: q.ManagedReason, affinity: text}
		}
	})
	irqs2, f2 := irqs[:0], f[:0]
	for i := range irqs {
		if !gone[i] {
			irqs2, f2 = append(irqs2, irqs[i]), append(f2, f[i])
		}
	}
	return irqs2, f2
}

// PerReader is the fewest IRQs that make another parallel reader worth
// its goroutine (8192 IRQs take about 30 ms of system calls).
const PerReader = 1024

// inParallel calls read for i in [0, n) in contiguous ranges over up to
// GOMAXPROCS goroutines, one per PerReader, each with its own irqReader
// on ir's directory descriptor.
func inParallel(n int, ir *irqReader, read func(ir *irqReader, i int)) {
	workers := min(runtime.GOMAXPROCS(0), max(1, n/PerReader))
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

// Read reads the whole inventory once.
func (fsys FS) Read() (*Inventory, error) {
	inv, _, err := NewReader(fsys).Read(cpumask.Mask{}, DepthAll)
	return inv, err
}

// link fills inv.Devices from devs and gives each IRQ its device.
func link(inv *Inventory, devs []pciDevice) {
	index := make(map[int]int, len(inv.IRQs))
	for i, q := range inv.IRQs {
		index[q.Number] = i
	}
	inv.Devices = make([]Device, len(devs))
	for di, d := range devs {
		for _, n := range d.irqs {
			i, ok := index[n]
			if !ok {
				continue
			}
			d.IRQs = append(d.IRQs, n)
			if inv.IRQs[i].Device == "" {
				inv.IRQs[i].Device = d.PCI
			}
		}
		inv.Devices[di] = d.Device
	}
}

// key is the inventory's shape, cheap to read: while it holds, a Reader
// reads only affinities. It is read before the inventory, so a change
// during a read shows in the next key. The link count of /proc/irq
// counts its IRQ directories, so one fstat sees vectors come and go.
type key struct {
	irqDirs uint64    // the link count of /proc/irq
	net     []string  // sorted
	devices []pciLink // sorted by BDF
}

// pciLink is a PCI device and its driver, "" when unbound.
type pciLink struct{ bdf, driver string }

func (k key) equal(o key) bool {
	return k.irqDirs == o.irqDirs && slices.Equal(k.net, o.net) && slices.Equal(k.devices, o.devices)
}

// readKey reads the key, irqDirs from dirfd, the open <proc>/irq.
func (fsys FS) readKey(kr *kernfs.Reader, dirfd int) (key, error) {
	var k key
	var err error
	dir := filepath.Join(fsys.Proc, "irq")
	if k.irqDirs, err = kernfs.Links(dirfd, dir); err != nil {
		return k, kernfs.FileErr(dir, err)
	}
	dir = filepath.Join(fsys.Sys, "class", "net")
	if k.net, err = dirNames(kr, dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return k, kernfs.FileErr(dir, err)
	}
	dir = filepath.Join(fsys.Sys, "bus", "pci", "devices")
	bdfs, err := dirNames(kr, dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return k, kernfs.FileErr(dir, err)
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

// ReadInterrupts reads and parses <proc>/interrupts with its counts.
func (fsys FS) ReadInterrupts() (Interrupts, error) { return fsys.readInterrupts(true) }

// readInterrupts reads <proc>/interrupts, with counts if withCounts.
func (fsys FS) readInterrupts(withCounts bool) (ints Interrupts, err error) {
	err = kernfs.ParseFile(filepath.Join(fsys.Proc, "interrupts"), maxInterruptsSize, func(r io.Reader) (err error) {
		ints, err = parseInterrupts(r, withCounts)
		return err
	})
	if err != nil {
		return Interrupts{}, err
	}
	return ints, nil
}
