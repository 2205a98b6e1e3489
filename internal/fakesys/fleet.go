package fakesys

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

// Shape is one host of the fleet corpus: a machine and its devices.
type Shape struct {
	Name   string        // short id, e.g. "epyc-2p-nps2"
	What   string        // one line: the fleet host it stands for
	Banned string        // banned_cpus for the config, list format; "" none
	Build  func(t *Tree) // writes the machine, /proc/interrupts, /proc/irq and the devices
}

// Shapes returns the fleet corpus, in a fixed order.
func Shapes() []Shape {
	hosts := fleetHosts()
	out := make([]Shape, len(hosts))
	for i, h := range hosts {
		out[i] = h.shape()
	}
	return out
}

// host describes a Shape as data: every CPU's place, the nodes and the
// devices. Build writes the tree from it, and the tests derive from the
// same data what reading the tree must give.
type host struct {
	name, what, banned string
	cpus               []hostCPU  // by CPU id; every CPU is online
	nodes              []hostNode // online nodes, ascending id, CPU-less ones too
	// noLLC writes no cache directory, as on firmware that describes no
	// caches.
	noLLC bool
	// chip prefixes the BDF in the chip column of proc/interrupts
	// ("IR-PCI-MSIX-" on x86 with interrupt remapping).
	chip string
	// legacy adds the x86 IO-APIC timer and acpi IRQs, which no PCI
	// device owns.
	legacy bool
	devs   []hostDev
	// build, when set, writes the tree instead of the generic writer
	// (the scale host keeps AddScaleHost).
	build func(t *Tree)
}

// hostCPU places one CPU: its node id, physical package, core (a
// number naming its SMT sibling group) and a number naming the CPUs
// that share its last-level cache.
type hostCPU struct{ node, pkg, core, llc int }

// hostNode is one online node and its distance row.
type hostNode struct {
	id   int
	dist []int
}

// devKind tells the writer which IRQs and files a device gets.
type devKind uint8

const (
	devNIC devKind = iota
	devNVMe
	devGPU
	devVirtioBlk
)

// hostDev is one PCI device of a host.
type hostDev struct {
	kind   devKind
	driver string // the bound PCI driver ("mlx5_core"); "virtio_net" for a virtio NIC
	bdf    string
	node   int    // numa_node, -1 for none
	ifname string // a NIC's interface
	// queues is a NIC's queue vectors (queue pairs for virtio), an NVMe
	// drive's or virtio-blk's I/O queues, a GPU's vectors.
	queues int
	index  int // the N of nvmeN or virtioN
	// bare leaves out the NIC's control vector (the scale host's NICs
	// have none).
	bare bool
}

// vector is one MSI-X vector of a device, in the order the driver
// requests them.
type vector struct {
	name           string
	queue, managed bool
}

// firstDeviceIRQ is the first Linux IRQ number the writer gives device
// vectors, above the x86 legacy range.
const firstDeviceIRQ = 32

// shape wraps h as a Shape.
func (h host) shape() Shape {
	build := h.build
	if build == nil {
		build = h.write
	}
	return Shape{Name: h.name, What: h.what, Banned: h.banned, Build: build}
}

// vectors are the device's MSI-X vectors with the names its driver
// requests (pkg/policy/names.go cites where each format comes from).
func (d hostDev) vectors() []vector {
	var v []vector
	ctl := func(name string) {
		if !d.bare {
			v = append(v, vector{name: name})
		}
	}
	q := func(format string, args ...any) {
		v = append(v, vector{name: fmt.Sprintf(format, args...), queue: true})
	}
	switch d.kind {
	case devNVMe:
		v = append(v, vector{name: fmt.Sprintf("nvme%dq0", d.index)})
		for k := 1; k <= d.queues; k++ {
			v = append(v, vector{name: fmt.Sprintf("nvme%dq%d", d.index, k), queue: true, managed: true})
		}
		return v
	case devVirtioBlk:
		v = append(v, vector{name: fmt.Sprintf("virtio%d-config", d.index)})
		for k := range d.queues {
			v = append(v, vector{name: fmt.Sprintf("virtio%d-req.%d", d.index, k), queue: true, managed: true})
		}
		return v
	case devGPU:
		for range d.queues {
			v = append(v, vector{name: d.driver})
		}
		return v
	}
	switch d.driver {
	case "mlx5_core":
		ctl("mlx5_async0@pci:" + d.bdf)
		for k := range d.queues {
			q("mlx5_comp%d@pci:%s", k, d.bdf)
		}
	case "ice", "i40e":
		ctl(d.driver + "-" + d.bdf + ":misc")
		for k := range d.queues {
			q("%s-%s-TxRx-%d", d.driver, d.ifname, k)
		}
	case "ixgbe":
		for k := range d.queues {
			q("%s-TxRx-%d", d.ifname, k)
		}
		ctl(d.ifname) // the "other" vector comes last
	case "bnxt_en":
		for k := range d.queues {
			q("%s-TxRx-%d", d.ifname, k)
		}
	case "hns3":
		ctl("hclge-misc-" + d.bdf)
		for k := range d.queues {
			q("hns3-%s-TxRx-%d", d.bdf, 2*k) // the driver counts TxRx vectors by two
		}
	case "ena":
		ctl("ena-mgmnt@pci:" + d.bdf)
		for k := range d.queues {
			q("%s-Tx-Rx-%d", d.ifname, k)
		}
	case "mana":
		ctl("mana_hwc@pci:" + d.bdf)
		for k := range d.queues {
			q("mana_q%d@pci:%s", k, d.bdf)
		}
	case "virtio_net":
		v = append(v, vector{name: fmt.Sprintf("virtio%d-config", d.index)})
		for k := range d.queues {
			q("virtio%d-input.%d", d.index, k)
			q("virtio%d-output.%d", d.index, k)
		}
	default:
		panic("fakesys: no vectors for NIC driver " + d.driver)
	}
	return v
}

// pciClass is the class sysfs shows for the device.
func (d hostDev) pciClass() string {
	switch d.kind {
	case devNVMe:
		return "0x010802"
	case devVirtioBlk:
		return "0x010000"
	case devGPU:
		if d.driver == "nvidia" {
			return "0x030200" // 3D controller
		}
		return "0x038000" // display controller
	}
	return "0x020000"
}

// setsAffinity reports whether the NIC's driver sets each queue IRQ's
// affinity to its hint (irq_set_affinity_and_hint) rather than only
// hinting (irq_update_affinity_hint), and setsXPS whether it maps each
// tx queue to that CPU at probe.
func (d hostDev) setsAffinity() bool { return d.driver == "mlx5_core" || d.driver == "mana" }

func (d hostDev) setsXPS() bool {
	return slices.Contains([]string{"mlx5_core", "ice", "i40e", "ixgbe"}, d.driver)
}

// write is the generic Build: the machine, proc/interrupts with every
// device vector, proc/irq, and the PCI devices with their interfaces.
func (h host) write(t *Tree) {
	t.tb.Helper()
	t.AddMachine(h.machine())
	ncpu := len(h.cpus)
	online := make([]int, ncpu)
	for c := range online {
		online[c] = c
	}
	t.AddInterrupts(online)
	var specs []IRQSpec
	if h.legacy {
		specs = append(specs,
			IRQSpec{Number: 0, Name: "timer", Chip: "IO-APIC", HWIRQ: "2-edge", Affinity: "0", Effective: "0"},
			IRQSpec{Number: 9, Name: "acpi", Chip: "IO-APIC", HWIRQ: "9-fasteoi", Effective: "0"})
	}
	type txq struct {
		ifname string
		xps    []cpumask.Mask
	}
	var devs []PCIDevice
	var txqs []txq
	irq := firstDeviceIRQ
	for _, d := range h.devs {
		if d.driver == "virtio_net" {
			// AddVirtioNet writes the virtio-pci layout and the driver's XPS map.
			t.AddVirtioNet(VirtioNet{BDF: d.bdf, Index: d.index, Interface: d.ifname, Pairs: d.queues, FirstIRQ: irq, NUMANode: d.node})
			irq += 1 + 2*d.queues
			continue
		}
		spread := h.spread(d.node)
		var managed []string
		if d.kind == devNVMe || d.kind == devVirtioBlk {
			managed = h.managedGroups(d.queues)
		}
		var xps []cpumask.Mask
		dev := PCIDevice{BDF: d.bdf, NUMANode: d.node, Driver: d.driver, Class: d.pciClass()}
		nq, nm := 0, 0
		for i, v := range d.vectors() {
			s := IRQSpec{Number: irq, Name: v.name, Chip: h.chip + d.bdf, HWIRQ: strconv.Itoa(i) + "-edge", Node: d.node}
			switch {
			case v.managed:
				s.Affinity, s.Managed = managed[nm], true
				nm++
			case v.queue:
				cpu := spread[nq%len(spread)]
				s.Hint = strconv.Itoa(cpu)
				if d.setsAffinity() {
					s.Affinity = s.Hint
				}
				xps = append(xps, cpumask.New(cpu))
				nq++
			}
			s.Effective = strconv.Itoa(irq % ncpu)
			if s.Affinity != "" {
				s.Effective = strconv.Itoa(t.irqMask(s.Affinity).First())
			}
			specs = append(specs, s)
			dev.MSIIRQs = append(dev.MSIIRQs, irq)
			irq++
		}
		if d.kind == devVirtioBlk {
			dev.Driver, dev.VirtioChild, dev.VirtioDriver = "virtio-pci", "virtio"+strconv.Itoa(d.index), "virtio_blk"
		}
		if d.ifname != "" {
			dev.Interfaces = []string{d.ifname}
			if !d.setsXPS() {
				xps = make([]cpumask.Mask, len(xps))
			}
			txqs = append(txqs, txq{d.ifname, xps})
		}
		devs = append(devs, dev)
	}
	t.AddIRQs(specs...)
	for _, d := range devs {
		t.AddPCIDevice(d)
	}
	for _, q := range txqs {
		t.AddTxQueues(q.ifname, ncpu, q.xps)
	}
}

// machine is h's Machine: every CPU online, siblings, packages, LLCs and
// the nodes' CPU lists derived from h.cpus.
func (h host) machine() Machine {
	sib := h.groups(func(c hostCPU) int { return c.core })
	llc := h.groups(func(c hostCPU) int { return c.llc })
	node := h.groups(func(c hostCPU) int { return c.node })
	m := Machine{
		Online:   fmt.Sprintf("0-%d", len(h.cpus)-1),
		Siblings: func(c int) string { return sib[h.cpus[c].core] },
		Package:  func(c int) int { return h.cpus[c].pkg },
	}
	if !h.noLLC {
		m.LLC = func(c int) string { return llc[h.cpus[c].llc] }
	}
	for _, n := range h.nodes {
		m.Nodes = append(m.Nodes, Node{ID: n.id, CPUs: node[n.id], Distance: n.dist})
	}
	return m
}

// groups maps each value of key over the CPUs to the CPUs that have it,
// in list format.
func (h host) groups(key func(hostCPU) int) map[int]string {
	b := map[int]*cpumask.Builder{}
	for c, x := range h.cpus {
		k := key(x)
		if b[k] == nil {
			b[k] = &cpumask.Builder{}
		}
		b[k].Set(c)
	}
	out := make(map[int]string, len(b))
	for k, m := range b {
		out[k] = m.Mask().String()
	}
	return out
}

// distance is node_distance(a, b) of two online nodes.
func (h host) distance(a, b int) int {
	ia := slices.IndexFunc(h.nodes, func(n hostNode) bool { return n.id == a })
	ib := slices.IndexFunc(h.nodes, func(n hostNode) bool { return n.id == b })
	return h.nodes[ia].dist[ib]
}

// spread is the order cpumask_local_spread() hands CPUs to a device on
// node: nearest node first, CPUs at one distance by id; every CPU by id
// for NUMA_NO_NODE. Drivers hint queue k at its k-th CPU.
func (h host) spread(node int) []int {
	cpus := make([]int, len(h.cpus))
	for c := range cpus {
		cpus[c] = c
	}
	if node < 0 {
		return cpus
	}
	slices.SortStableFunc(cpus, func(a, b int) int {
		return cmp.Compare(h.distance(node, h.cpus[a].node), h.distance(node, h.cpus[b].node))
	})
	return cpus
}

// managedGroups splits the CPUs into n affinity masks the way
// group_cpus_evenly() does for managed IRQs, roughly: node by node, a
// core's threads together, consecutive runs of as even a size as can
// be. With more groups than CPUs each group gets one CPU, wrapping.
func (h host) managedGroups(n int) []string {
	cpus := make([]int, len(h.cpus))
	for c := range cpus {
		cpus[c] = c
	}
	slices.SortStableFunc(cpus, func(a, b int) int {
		x, y := h.cpus[a], h.cpus[b]
		return cmp.Or(cmp.Compare(x.node, y.node), cmp.Compare(x.core, y.core))
	})
	out := make([]string, n)
	for i := range out {
		lo, hi := i*len(cpus)/n, (i+1)*len(cpus)/n
		if hi <= lo {
			out[i] = strconv.Itoa(cpus[i%len(cpus)])
			continue
		}
		out[i] = cpumask.New(cpus[lo:hi]...).String()
	}
	return out
}
