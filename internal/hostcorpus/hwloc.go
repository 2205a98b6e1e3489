package hostcorpus

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/cpumask"
)

// HwlocCommit is the open-mpi/hwloc commit the gathers are taken from.
const HwlocCommit = "3b37b024aa3fe368dd82008eea7e1ad9dca97d2c"

// HwlocMachine is one gather of hwloc's tests/hwloc/linux made into a
// capture named "hwloc-" + Gather.
type HwlocMachine struct {
	Gather string // the tarball's stem
	// NIC adds one synthetic NIC on the first node with CPUs, for
	// gathers without a NIC or NVMe to plan.
	NIC bool
}

// Name is the capture's name.
func (m HwlocMachine) Name() string { return "hwloc-" + m.Gather }

// HwlocMachines are the gathers of the corpus, real machines of
// different platforms, sizes and firmware.
var HwlocMachines = []HwlocMachine{
	{Gather: "256ia64-64n2s2c", NIC: true},
	{Gather: "128ia64-17n4s2c", NIC: true},
	{Gather: "256ppc-8n8s4t", NIC: true},
	{Gather: "128arm-2pa2n8cluster4co", NIC: true},
	{Gather: "64amd64-4s2n4ca2co", NIC: true},
	{Gather: "96em64t-4no4pa3ca2co", NIC: true},
	{Gather: "48amd64-4pa2n6c-sparse", NIC: true},
	{Gather: "16amd64-8n2c", NIC: true},
	{Gather: "16ia64-8n2s", NIC: true},
	{Gather: "16em64t-4s2c2t-offlines", NIC: true},
	{Gather: "8em64t-2s4c-asymcaches", NIC: true},
	{Gather: "memorysidecaches", NIC: true},
	{Gather: "nvidiagpunumanodes", NIC: true},
	{Gather: "20em64t-hybrid-1p6c2t+2ca4co1t", NIC: true},
	{Gather: "20s390-2g6s4c", NIC: true},
	{Gather: "nvidia-dgx-gb10", NIC: true},
	{Gather: "32intel64-2p8co2t+8ve"},
	{Gather: "40intel64-2g2n4c+pcilocality"},
	{Gather: "32em64t-2n8c+dax+nvme+mic+dimms"},
	{Gather: "2pa-pcidomain32bits"},
}

// Notes say what a conversion derived or synthesized, for the index.
type Notes []string

func (n *Notes) add(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	if !slices.Contains(*n, s) {
		*n = append(*n, s)
	}
}

// FromGather writes into tree the files of g that numairqd reads (the
// CPU and node topology, caches, and the NICs' and NVMe drives' PCI
// facts and interfaces), deriving the list files a gather of an older
// kernel lacks from their masks, and /proc/interrupts and /proc/irq
// for the devices' vectors, synthesized with their drivers' names.
func FromGather(tb testing.TB, tree *fakesys.Tree, g *Gather, m HwlocMachine) Notes {
	tb.Helper()
	c := &converter{tb: tb, g: g, t: tree}
	online := c.topology()
	tree.AddInterrupts(online.CPUs())
	tree.Mkdir("proc/irq")
	c.devices(online)
	if m.NIC {
		c.syntheticNIC(online)
	}
	return c.notes
}

// converter copies a gather into a tree.
type converter struct {
	tb    testing.TB
	g     *Gather
	t     *fakesys.Tree
	notes Notes
	nodes []int // online nodes with CPUs, their order by id
	byCPU map[int]int
	used  map[int]bool // IRQ numbers taken
}

const cpuDir, nodeDir = "sys/devices/system/cpu", "sys/devices/system/node"

// copyFile copies p as it is if the gather has it.
func (c *converter) copyFile(p string) bool {
	s, ok := c.g.Raw(p)
	if ok {
		c.t.WriteFile(p, s)
	}
	return ok
}

// list writes p, a list file, or derives it from the mask file of the
// same data (the gathers of kernels before the list files); it returns
// the mask and whether either existed.
func (c *converter) list(p, mask string) (cpumask.Mask, bool) {
	if s, ok := c.g.Read(p); ok {
		m, err := cpumask.ParseList(s)
		if err != nil {
			c.tb.Fatalf("%s: %v", p, err)
		}
		c.copyFile(p)
		return m, true
	}
	s, ok := c.g.Read(mask)
	if !ok {
		return cpumask.Mask{}, false
	}
	m, err := cpumask.ParseHex(s)
	if err != nil {
		c.tb.Fatalf("%s: %v", mask, err)
	}
	c.t.WriteFile(p, m.String()+"\n")
	c.notes.add("%s derived from %s", path.Base(p), path.Base(mask))
	return m, true
}

// cpuIDs returns the N of the entries "<prefix>N" in dir, ascending.
func (c *converter) cpuIDs(dir, prefix string) []int {
	var ids []int
	for _, name := range c.g.List(dir) {
		if n, err := strconv.Atoi(strings.TrimPrefix(name, prefix)); err == nil && strings.HasPrefix(name, prefix) {
			ids = append(ids, n)
		}
	}
	slices.Sort(ids)
	return ids
}

// topology writes the CPU and node files and returns the online CPUs.
func (c *converter) topology() cpumask.Mask {
	cpus := c.cpuIDs(cpuDir, "cpu")
	online, ok := c.list(cpuDir+"/online", "")
	if !ok {
		// A kernel without cpu/online: CPUs whose online file is not 0
		// and whose topology the kernel shows (it hides an offline one's).
		var b cpumask.Builder
		for _, id := range cpus {
			d := fmt.Sprintf("%s/cpu%d", cpuDir, id)
			if s, ok := c.g.Read(d + "/online"); (!ok || s != "0") && len(c.g.List(d+"/topology")) > 0 {
				b.Set(id)
			}
		}
		online = b.Mask()
		c.t.WriteFile(cpuDir+"/online", online.String()+"\n")
		c.notes.add("cpu/online derived from the CPUs with a topology directory")
	}
	c.copyFile(cpuDir + "/isolated")
	c.copyFile(cpuDir + "/nohz_full")
	for id := range online.All() {
		d := fmt.Sprintf("%s/cpu%d", cpuDir, id)
		if _, ok := c.list(d+"/topology/core_cpus_list", ""); !ok {
			c.list(d+"/topology/thread_siblings_list", d+"/topology/thread_siblings")
		}
		c.copyFile(d + "/topology/physical_package_id")
		if _, ok := c.list(d+"/topology/package_cpus_list", ""); !ok {
			c.list(d+"/topology/core_siblings_list", d+"/topology/core_siblings")
		}
		for _, idx := range c.g.List(d + "/cache") {
			if !strings.HasPrefix(idx, "index") {
				continue
			}
			p := d + "/cache/" + idx
			c.copyFile(p + "/level")
			c.copyFile(p + "/type")
			c.list(p+"/shared_cpu_list", p+"/shared_cpu_map")
		}
	}
	c.byCPU = map[int]int{}
	ids := c.cpuIDs(nodeDir, "node")
	if len(ids) == 0 {
		return online // no NUMA: the kernel shows no node directory
	}
	if _, ok := c.list(nodeDir+"/online", ""); !ok {
		c.t.WriteFile(nodeDir+"/online", cpumask.New(ids...).String()+"\n")
		c.notes.add("node/online derived from the node directories")
	}
	c.copyFile(nodeDir + "/has_cpu")
	for _, id := range ids {
		d := fmt.Sprintf("%s/node%d", nodeDir, id)
		m, _ := c.list(d+"/cpulist", d+"/cpumap")
		c.copyFile(d + "/distance")
		if m.Intersects(online) {
			c.nodes = append(c.nodes, id)
			for cpu := range m.And(online).All() {
				c.byCPU[cpu] = id
			}
		}
	}
	return online
}

// device is a PCI device of the gather that gets vectors.
type device struct {
	bdf, driver, child, class string // child: the virtio child's driver
	node                      int
	msi                       []int // the gather's msi_irqs, ascending
	ifs                       []string
	virtio                    string // the virtio child ("virtio0")
}

// devices adds the gather's NICs and NVMe drives with their vectors.
func (c *converter) devices(online cpumask.Mask) {
	c.used = map[int]bool{}
	var devs []device
	for _, bdf := range c.g.List("sys/bus/pci/devices") {
		dir := c.g.Resolve("sys/bus/pci/devices/" + bdf)
		d := device{bdf: bdf, node: -1}
		d.class, _ = c.g.Read(dir + "/class")
		if t, ok := c.g.Link(dir + "/driver"); ok {
			d.driver = path.Base(t)
		}
		if s, ok := c.g.Read(dir + "/numa_node"); ok {
			d.node, _ = strconv.Atoi(s)
		}
		for _, n := range c.cpuIDs(dir+"/msi_irqs", "") {
			d.msi = append(d.msi, n)
			c.used[n] = true
		}
		if s, _ := c.g.Read(dir + "/irq"); s != "" {
			n, _ := strconv.Atoi(s)
			c.used[n] = true
		}
		d.ifs = c.g.List(dir + "/net")
		for _, name := range c.g.List(dir) {
			if strings.HasPrefix(name, "virtio") {
				d.virtio = name
				if t, ok := c.g.Link(dir + "/" + name + "/driver"); ok {
					d.child = path.Base(t)
				}
				d.ifs = c.g.List(dir + "/" + name + "/net")
			}
		}
		if d.driver != "" && (strings.HasPrefix(d.class, "0x02") || d.class == "0x010802" || d.child != "") {
			devs = append(devs, d)
		}
	}
	next := 100 // synthesized IRQ numbers, above the gathers' own
	nvme := 0
	for _, d := range devs {
		names, ctl, managed := c.vectors(d, online, &nvme)
		if len(names) == 0 {
			continue
		}
		nums := d.msi
		if len(nums) == 0 {
			c.notes.add("%s's vector numbers synthesized (the gather lists no msi_irqs)", d.driver)
			for len(nums) < len(names) {
				if !c.used[next] {
					nums = append(nums, next)
					c.used[next] = true
				}
				next++
			}
		} else {
			c.notes.add("%s's vector numbers are the gather's msi_irqs, their names synthesized", d.driver)
		}
		c.addDevice(d, nums, names, ctl, managed, online)
	}
}

// vectors returns the names d's driver requests for its vectors, as
// many as it has (or, without msi_irqs, as it would request) and not
// more queues than CPUs, and how many of the queues are managed.
func (c *converter) vectors(d device, online cpumask.Mask, nvme *int) (names []string, ctl int, managed bool) {
	ncpu := online.Weight()
	have := len(d.msi)
	queues := func(control int, def int) int {
		ctl = control
		if have == 0 {
			have = ctl + def
		}
		return max(0, min(have-ctl, ncpu))
	}
	ifname := "eth0"
	if len(d.ifs) > 0 {
		ifname = d.ifs[0]
	}
	var v []string
	switch d.driver {
	case "i40e":
		v = append(v, "i40e-"+d.bdf+":misc")
		for k := range queues(1, ncpu) {
			v = append(v, fmt.Sprintf("i40e-%s-TxRx-%d", ifname, k))
		}
	case "igb":
		v = append(v, ifname) // igb_msix_other, vector 0
		for k := range queues(1, 8) {
			v = append(v, fmt.Sprintf("%s-TxRx-%d", ifname, k))
		}
	case "bnx2":
		for k := range queues(0, 9) { // BNX2_MAX_MSIX_VEC; vector 0 also links
			v = append(v, fmt.Sprintf("%s-%d", ifname, k))
		}
	case "mlx5_core":
		v = append(v, "mlx5_async0@pci:"+d.bdf)
		for k := range queues(1, ncpu) {
			v = append(v, fmt.Sprintf("mlx5_comp%d@pci:%s", k, d.bdf))
		}
	case "mlx4_core":
		v = append(v, "mlx4-async@pci:"+d.bdf)
		for k := range queues(1, ncpu) {
			v = append(v, fmt.Sprintf("mlx4-%d@%s", k+1, d.bdf))
		}
	case "nvme":
		v = append(v, fmt.Sprintf("nvme%dq0", *nvme))
		for k := range queues(1, ncpu) {
			v = append(v, fmt.Sprintf("nvme%dq%d", *nvme, k+1))
		}
		*nvme++
		return v, ctl, true
	case "virtio-pci":
		idx := strings.TrimPrefix(d.virtio, "virtio")
		v = append(v, "virtio"+idx+"-config")
		switch d.child {
		case "virtio_net":
			for k := range queues(1, 2) / 2 {
				v = append(v, fmt.Sprintf("virtio%s-input.%d", idx, k), fmt.Sprintf("virtio%s-output.%d", idx, k))
			}
		case "virtio_blk":
			for k := range queues(1, 1) {
				v = append(v, fmt.Sprintf("virtio%s-req.%d", idx, k))
			}
			return v, ctl, true
		}
	}
	return v, ctl, false
}

// addDevice writes d with vectors nums named names, the first ctl of
// them control; managed queues get the kernel's spread, the others
// every online CPU, the default.
func (c *converter) addDevice(d device, nums []int, names []string, ctl int, managed bool, online cpumask.Mask) {
	var specs []fakesys.IRQSpec
	groups := c.managedGroups(len(names)-ctl, online)
	for i, name := range names {
		s := fakesys.IRQSpec{Number: nums[i], Name: name, Node: d.node, HWIRQ: strconv.Itoa(i) + "-edge"}
		if managed && i >= ctl {
			s.Affinity, s.Managed = groups[i-ctl], true
		}
		specs = append(specs, s)
	}
	dev := fakesys.PCIDevice{BDF: d.bdf, NUMANode: d.node, Driver: d.driver, Class: d.class, Interfaces: d.ifs}
	if d.virtio != "" {
		dev.VirtioChild, dev.VirtioDriver = d.virtio, d.child
	}
	c.t.AddMSIXDevice(dev, specs...)
	// The unrequested vectors are in msi_irqs but not /proc/interrupts.
	for _, n := range nums[len(names):] {
		c.t.WriteFileMode(fakesys.DevicePath(d.bdf, "")+"/msi_irqs/"+strconv.Itoa(n), "msix\n", 0o444)
	}
	txqs := len(names) - ctl
	if d.child == "virtio_net" {
		txqs /= 2 // an input and an output vector per pair
	}
	for _, ifname := range d.ifs {
		c.t.AddTxQueues(ifname, online.Last()+1, make([]cpumask.Mask, txqs))
	}
}

// managedGroups splits the online CPUs, by node, into n groups of
// consecutive CPUs, as the kernel spreads managed vectors.
func (c *converter) managedGroups(n int, online cpumask.Mask) []string {
	cpus := online.CPUs()
	slices.SortStableFunc(cpus, func(a, b int) int { return cmp.Compare(c.byCPU[a], c.byCPU[b]) })
	out := make([]string, max(n, 0))
	for k := range out {
		lo, hi := k*len(cpus)/n, (k+1)*len(cpus)/n
		out[k] = cpumask.New(cpus[lo:max(hi, lo+1)]...).String()
	}
	return out
}

// syntheticNIC adds an mlx5 NIC on the first node with CPUs, at a BDF
// no gather device has, with a completion vector per two online CPUs,
// up to 64: channels set with ethtool -L, for which mlx5 (since 6.6)
// requests vectors as channels need them.
func (c *converter) syntheticNIC(online cpumask.Mask) {
	node := -1
	if len(c.nodes) > 0 {
		node = c.nodes[0]
	}
	d := device{bdf: "0000:e1:00.0", driver: "mlx5_core", class: "0x020000", node: node, ifs: []string{"eth0"}}
	n := min(max(online.Weight()/2, 1), 64)
	names := []string{"mlx5_async0@pci:" + d.bdf}
	for k := range n {
		names = append(names, fmt.Sprintf("mlx5_comp%d@pci:%s", k, d.bdf))
	}
	var nums []int
	for irq := 200; len(nums) < len(names); irq++ {
		if !c.used[irq] {
			nums = append(nums, irq)
		}
	}
	c.addDevice(d, nums, names, 1, false, online)
}
