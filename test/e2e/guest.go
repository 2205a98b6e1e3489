//go:build e2e

package e2e

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

// Guest is the machine QEMU emulates: vCPUs, NUMA nodes with their
// distance table, and the multi-queue devices, each on a node.
type Guest struct {
	// Nodes lists each NUMA node's CPUs; node i is Nodes[i]. The vCPU
	// count is the number of CPUs listed over all nodes (ids 0..n-1).
	Nodes []Node
	// Distance is the node distance table, Distance[i][j] from node i to
	// node j; nil means 10 on the diagonal and 20 elsewhere.
	Distance [][]int
	// Sockets, Cores and Threads give -smp's topology; zero means one
	// socket per node and one thread per core.
	Sockets, Cores, Threads int
	// Net and NVMe are put on their own PCIe expander bus each, on the
	// device's node.
	Net  []NetDevice
	NVMe []NVMeDevice
}

// Node is one NUMA node.
type Node struct {
	CPUs  []int
	MemMB int // zero means at least 512 MiB in total, split evenly
}

// NetDevice is a virtio-net-pci with Queues queue pairs on a
// multi_queue tap in the boot's own network namespace (labNet), which
// carries only the traffic the guest asks the harness for.
type NetDevice struct {
	Node    int // NUMA node of its expander bus; -1: on pcie.0, no node
	Queues  int // queue pairs
	Vectors int // MSI-X vectors; zero means 2*Queues+2
	// Model is the QEMU NIC: "" for virtio-net-pci, or "e1000e" (one
	// queue pair; Linux's e1000e requests rx, tx and other vectors).
	Model string
}

// NVMeDevice is a QEMU nvme controller on a small raw image; its queue
// IRQs are managed by the kernel.
type NVMeDevice struct {
	Node   int // NUMA node of its expander bus; -1: on pcie.0, no node
	SizeMB int // zero means 8
}

// FourNodeGuest is the lab machine of docs/qemu-lab.md §3: 8 vCPUs
// on 4 nodes of 2 (node n holds CPUs 2n and 2n+1), distances
// 10/12/20/22, virtio-net with 6 queue pairs on node 2 and NVMe on node 1.
func FourNodeGuest() Guest {
	return Guest{
		Nodes: []Node{{CPUs: []int{0, 1}}, {CPUs: []int{2, 3}}, {CPUs: []int{4, 5}}, {CPUs: []int{6, 7}}},
		Distance: [][]int{
			{10, 12, 20, 22},
			{12, 10, 22, 20},
			{20, 22, 10, 12},
			{22, 20, 12, 10},
		},
		Net:  []NetDevice{{Node: 2, Queues: 6}},
		NVMe: []NVMeDevice{{Node: 1}},
	}
}

// MANAGuest has more queue pairs than vCPUs, the case where MANA spreads
// IRQs linearly: 4 vCPUs on 2 nodes, virtio-net with 8 queue pairs
// (18 vectors) on node 1, NVMe on node 0.
func MANAGuest() Guest {
	return Guest{
		Nodes:    []Node{{CPUs: []int{0, 1}}, {CPUs: []int{2, 3}}},
		Distance: [][]int{{10, 20}, {20, 10}},
		Net:      []NetDevice{{Node: 1, Queues: 8}},
		NVMe:     []NVMeDevice{{Node: 0}},
	}
}

// NumCPUs is the number of vCPUs.
func (g Guest) NumCPUs() int {
	n := 0
	for _, nd := range g.Nodes {
		n += len(nd.CPUs)
	}
	return n
}

// NodeOf returns the node of cpu, or -1.
func (g Guest) NodeOf(cpu int) int {
	for i, nd := range g.Nodes {
		for _, c := range nd.CPUs {
			if c == cpu {
				return i
			}
		}
	}
	return -1
}

// Dist returns the distance from node i to node j.
func (g Guest) Dist(i, j int) int {
	if g.Distance != nil {
		return g.Distance[i][j]
	}
	if i == j {
		return 10
	}
	return 20
}

// Spread is node's spread order over online CPUs: sorted by (distance
// from node to the CPU's node, CPU id), the order of the kernel's
// for_each_numa_hop_mask loop (docs/kernel.md §1.4).
func (g Guest) Spread(node int, online []int) []int {
	out := append([]int(nil), online...)
	sort.SliceStable(out, func(a, b int) bool {
		da, db := g.Dist(node, g.NodeOf(out[a])), g.Dist(node, g.NodeOf(out[b]))
		if da != db {
			return da < db
		}
		return out[a] < out[b]
	})
	return out
}

// Validate reports a Guest that QEMU would reject or that the harness
// cannot describe.
func (g Guest) Validate() error {
	n := g.NumCPUs()
	if n == 0 {
		return fmt.Errorf("guest has no CPUs")
	}
	seen := make([]bool, n)
	for i, nd := range g.Nodes {
		for _, c := range nd.CPUs {
			if c < 0 || c >= n || seen[c] {
				return fmt.Errorf("node %d: cpu %d: CPU ids must be 0..%d, each on one node", i, c, n-1)
			}
			seen[c] = true
		}
	}
	if g.Distance != nil {
		if len(g.Distance) != len(g.Nodes) {
			return fmt.Errorf("distance table has %d rows for %d nodes", len(g.Distance), len(g.Nodes))
		}
		for i, row := range g.Distance {
			if len(row) != len(g.Nodes) {
				return fmt.Errorf("distance row %d has %d columns for %d nodes", i, len(row), len(g.Nodes))
			}
			if row[i] != 10 {
				return fmt.Errorf("distance[%d][%d] = %d, want 10", i, i, row[i])
			}
			for j, d := range row {
				if j != i && (d <= 10 || d > 255) {
					return fmt.Errorf("distance[%d][%d] = %d, want 11..255", i, j, d)
				}
			}
		}
	}
	s, c, t := g.smp()
	if s*c*t != n {
		return fmt.Errorf("sockets*cores*threads = %d*%d*%d, want %d vCPUs", s, c, t, n)
	}
	for _, d := range g.Net {
		if d.Node < -1 || d.Node >= len(g.Nodes) || d.Queues < 1 {
			return fmt.Errorf("net device %+v: bad node or queue count", d)
		}
		if d.Model != "" && (d.Model != "e1000e" || d.Queues != 1) {
			return fmt.Errorf("net device %+v: model is \"\" (virtio-net) or \"e1000e\" with one queue", d)
		}
	}
	for _, d := range g.NVMe {
		if d.Node < -1 || d.Node >= len(g.Nodes) {
			return fmt.Errorf("nvme device %+v: bad node", d)
		}
	}
	if len(g.Net) > 8 || len(g.NVMe) > 4 {
		return fmt.Errorf("at most 8 net and 4 nvme devices")
	}
	return nil
}

func (g Guest) smp() (sockets, cores, threads int) {
	if g.Sockets != 0 || g.Cores != 0 || g.Threads != 0 {
		return max(g.Sockets, 1), max(g.Cores, 1), max(g.Threads, 1)
	}
	per := len(g.Nodes[0].CPUs)
	for _, nd := range g.Nodes {
		if len(nd.CPUs) != per {
			return 1, g.NumCPUs(), 1
		}
	}
	return len(g.Nodes), per, 1
}

func (g Guest) memMB(node int) int {
	if m := g.Nodes[node].MemMB; m > 0 {
		return m
	}
	return max(128, (512+len(g.Nodes)-1)/len(g.Nodes))
}

// NetBus is the expander bus number of Net[i]; its PCI function is on
// bus NetBus+1.
func (g Guest) NetBus(i int) int { return 0x40 + 0x10*i }

// NVMeBus is the expander bus number of NVMe[i].
func (g Guest) NVMeBus(i int) int { return 0x20 + 0x08*i }

// NetAddress is the guest's PCI address of Net[i].
func (g Guest) NetAddress(i int) string { return g.address(g.Net[i].Node, g.NetBus(i), 0x10+i) }

// NetMAC is the MAC address of Net[i], where generated traffic goes.
func (g Guest) NetMAC(i int) string { return fmt.Sprintf("52:54:00:e2:e0:%02x", i) }

// NVMeAddress is the guest's PCI address of NVMe[i].
func (g Guest) NVMeAddress(i int) string { return g.address(g.NVMe[i].Node, g.NVMeBus(i), 0x18+i) }

func (g Guest) address(node, bus, slot int) string {
	if node < 0 {
		return fmt.Sprintf("0000:00:%02x.0", slot)
	}
	return fmt.Sprintf("0000:%02x:00.0", bus+1)
}

// Modules are the kernel modules the guest's devices need.
func (g Guest) Modules() []string {
	var m []string
	if slices.ContainsFunc(g.Net, func(d NetDevice) bool { return d.Model == "" }) {
		m = append(m, "virtio_pci", "virtio_net")
	}
	if slices.ContainsFunc(g.Net, func(d NetDevice) bool { return d.Model == "e1000e" }) {
		m = append(m, "e1000e")
	}
	if len(g.NVMe) > 0 {
		m = append(m, "nvme")
	}
	return m
}

// qemuArgs builds the machine part of the QEMU command line; taps[i] is
// the host tap of Net[i] and images[i] the image file of NVMe[i].
func (g Guest) qemuArgs(taps, images []string) []string {
	total := 0
	for i := range g.Nodes {
		total += g.memMB(i)
	}
	s, c, t := g.smp()
	a := []string{
		"-m", fmt.Sprintf("%dM", total),
		"-smp", fmt.Sprintf("%d,sockets=%d,cores=%d,threads=%d", g.NumCPUs(), s, c, t),
	}
	for i, nd := range g.Nodes {
		a = append(a, "-object", fmt.Sprintf("memory-backend-ram,id=m%d,size=%dM", i, g.memMB(i)))
		spec := fmt.Sprintf("node,nodeid=%d,memdev=m%d", i, i)
		if len(nd.CPUs) > 0 {
			// "0-1,4" -> cpus=0-1,cpus=4: QEMU takes one range per cpus=.
			for _, r := range strings.Split(cpumask.New(nd.CPUs...).String(), ",") {
				spec += ",cpus=" + r
			}
		}
		a = append(a, "-numa", spec)
	}
	for i := range g.Nodes {
		for j := range g.Nodes {
			if i != j {
				a = append(a, "-numa", fmt.Sprintf("dist,src=%d,dst=%d,val=%d", i, j, g.Dist(i, j)))
			}
		}
	}
	chassis := 0
	bus := func(node, busNr, slot int) string {
		if node < 0 {
			return fmt.Sprintf("bus=pcie.0,addr=%#x", slot)
		}
		chassis++
		a = append(a,
			"-device", fmt.Sprintf("pxb-pcie,id=pxb%d,bus_nr=%d,numa_node=%d,bus=pcie.0", chassis, busNr, node),
			"-device", fmt.Sprintf("pcie-root-port,id=rp%d,bus=pxb%d,chassis=%d", chassis, chassis, chassis))
		return "bus=rp" + strconv.Itoa(chassis)
	}
	for i, d := range g.Net {
		b := bus(d.Node, g.NetBus(i), 0x10+i)
		vec := d.Vectors
		if vec == 0 {
			vec = 2*d.Queues + 2
		}
		a = append(a, "-netdev", fmt.Sprintf("tap,id=n%d,ifname=%s,script=no,downscript=no,queues=%d,vhost=off", i, taps[i], d.Queues))
		if d.Model == "e1000e" {
			a = append(a, "-device", fmt.Sprintf("e1000e,netdev=n%d,mac=%s,romfile=,%s", i, g.NetMAC(i), b))
			continue
		}
		a = append(a, "-device", fmt.Sprintf("virtio-net-pci,netdev=n%d,mq=on,vectors=%d,mac=%s,romfile=,%s", i, vec, g.NetMAC(i), b))
	}
	for i, d := range g.NVMe {
		b := bus(d.Node, g.NVMeBus(i), 0x18+i)
		a = append(a,
			"-drive", fmt.Sprintf("if=none,id=nv%d,file=%s,format=raw", i, images[i]),
			"-device", fmt.Sprintf("nvme,serial=e2envme%d,drive=nv%d,%s", i, i, b))
	}
	return a
}
