package hostcorpus

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
)

// Listing is a real host's /proc/interrupts from a public source
// (testdata/hosts/sources/<Name>.txt, its header citing the source) and
// the topology the corpus gives it, from the source where it says one,
// else inferred from the CPU count and the processor model.
type Listing struct {
	Name string
	Topo Topo
	// NIC names the driver of each interface whose IRQ names carry no
	// driver name ("eth0-TxRx-3"), from the platform and queue counts.
	NIC map[string]string
}

// Topo is a machine of Sockets x Cores x Threads CPUs, numbered
// thread-major (cpu = t*Sockets*Cores + s*Cores + c, as server firmware
// enumerates) or, Adjacent, SMT siblings next to each other (as client
// parts do), then Solo cores without SMT (a hybrid part's E-cores, in
// the last node). Nodes NUMA nodes per socket split its cores, LLCs
// last-level caches per node; distances 10, Near within a socket, Far
// between sockets.
type Topo struct {
	Sockets, Cores, Threads, Solo, Nodes, LLCs int
	Adjacent                                   bool
	Near, Far                                  int
}

// Listings are the hosts of testdata/hosts/listing-*.tar.gz.
var Listings = []Listing{
	{Name: "nehalem", Topo: Topo{Sockets: 2, Cores: 4, Threads: 2, Nodes: 1, LLCs: 1, Far: 21},
		NIC: map[string]string{"eth0": "igb"}},
	{Name: "sandybridge-ep", Topo: Topo{Sockets: 2, Cores: 8, Threads: 1, Nodes: 1, LLCs: 1, Far: 21},
		NIC: map[string]string{"eth0": "igb"}},
	{Name: "westmere-ex", Topo: Topo{Sockets: 4, Cores: 10, Threads: 2, Nodes: 1, LLCs: 1, Far: 21},
		NIC: map[string]string{"eth1": "igb"}},
	{Name: "nehalem-ex", Topo: Topo{Sockets: 4, Cores: 8, Threads: 1, Nodes: 1, LLCs: 1, Far: 21},
		NIC: map[string]string{"em1": "bnx2", "em2": "bnx2"}},
	{Name: "haswell-ep", Topo: Topo{Sockets: 2, Cores: 8, Threads: 2, Nodes: 1, LLCs: 1, Far: 21},
		NIC: map[string]string{"eth0": "tg3"}},
	{Name: "broadwell-ep", Topo: Topo{Sockets: 2, Cores: 8, Threads: 2, Nodes: 1, LLCs: 1, Far: 21},
		NIC: map[string]string{"eth0": "tg3", "eth1": "tg3", "eth2": "tg3", "eth3": "tg3"}},
	{Name: "fam15h", Topo: Topo{Sockets: 2, Cores: 16, Threads: 1, Nodes: 2, LLCs: 1, Near: 16, Far: 22},
		NIC: map[string]string{"eth0": "tg3"}},
	{Name: "fam17h", Topo: Topo{Sockets: 1, Cores: 8, Threads: 2, Nodes: 4, LLCs: 2, Near: 16},
		NIC: map[string]string{"eno1": "tg3", "eno2": "tg3", "eno3": "tg3", "eno4": "tg3"}},
	{Name: "rbench", Topo: Topo{Sockets: 2, Cores: 10, Threads: 2, Nodes: 1, LLCs: 1, Far: 21},
		NIC: map[string]string{"p7p1": "igb", "em4": "tg3"}},
	{Name: "intersched", Topo: Topo{Sockets: 1, Cores: 4, Threads: 2, Nodes: 1, LLCs: 1},
		NIC: map[string]string{"eno1": "igb", "eno2": "igb"}},
	{Name: "skyao-pve", Topo: Topo{Sockets: 1, Cores: 6, Threads: 2, Nodes: 1, LLCs: 1, Adjacent: true},
		NIC: map[string]string{"enp6s0": "r8169", "enp7s0": "r8169"}},
	{Name: "frc971-desktop", Topo: Topo{Sockets: 1, Cores: 8, Threads: 2, Solo: 4, Nodes: 1, LLCs: 1, Adjacent: true},
		NIC: map[string]string{"enp6s0": "atlantic", "enp8s0": "igc"}},
}

// ReadSource returns the listing in path without its "#" header lines.
func ReadSource(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	for line := range bytes.Lines(b) {
		if !bytes.HasPrefix(line, []byte("#")) {
			out.Write(line)
		}
	}
	return out.Bytes(), nil
}

// Build writes l's fixture tree into t from its source in dir: the
// machine, the listing as proc/interrupts, a proc/irq directory per
// IRQ, and a PCI device per driver instance (see devices).
func (l Listing) Build(t *fakesys.Tree, dir string) error {
	raw, err := ReadSource(filepath.Join(dir, l.Name+".txt"))
	if err != nil {
		return err
	}
	ints, err := inventory.ParseInterrupts(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("%s: %w", l.Name, err)
	}
	if n := len(l.Topo.cpus()); n != len(ints.CPUs) {
		return fmt.Errorf("%s: topology of %d CPUs, the listing has %d", l.Name, n, len(ints.CPUs))
	}
	t.AddMachine(l.Topo.machine())
	t.AddInterrupts(ints.CPUs)
	devs := l.devices(ints.Rows)
	node := map[int]int{}
	for _, d := range devs {
		for _, n := range d.MSIIRQs {
			node[n] = d.NUMANode
		}
	}
	specs := make([]fakesys.IRQSpec, 0, len(ints.Rows))
	for _, r := range ints.Rows {
		n, ok := node[r.IRQ]
		if !ok {
			n = -1
		}
		specs = append(specs, fakesys.IRQSpec{Number: r.IRQ, Name: strings.Join(r.Actions, ", "), Node: n})
	}
	t.AddIRQs(specs...)
	for _, d := range devs {
		t.AddPCIDevice(d)
		for _, ifname := range d.Interfaces {
			t.AddTxQueues(ifname, len(ints.CPUs), make([]cpumask.Mask, queueVectors(ints.Rows, d.MSIIRQs)))
		}
	}
	// The listing itself, not fakesys's rendering of its rows.
	t.WriteFile("proc/interrupts", string(raw))
	return nil
}

// queueVectors is how many of irqs the names show as queues, at least 1.
func queueVectors(rows []inventory.InterruptLine, irqs []int) int {
	n := 0
	for _, r := range rows {
		if slices.Contains(irqs, r.IRQ) && len(r.Actions) > 0 && queueName.MatchString(r.Actions[0]) {
			n++
		}
	}
	return max(n, 1)
}

// cpuPos is where a CPU sits: its socket, core, node and LLC.
type cpuPos struct{ pkg, core, node, llc int }

// cpus lists the CPUs of t in id order.
func (t Topo) cpus() []cpuPos {
	at := func(s, c int) cpuPos {
		c = min(c, t.Cores-1) // a Solo core shares the last core's node and LLC
		n := s*t.Nodes + c*t.Nodes/t.Cores
		return cpuPos{s, s*t.Cores + c, n, s*t.Nodes*t.LLCs + c*t.Nodes*t.LLCs/t.Cores}
	}
	var out []cpuPos
	for i := range t.Sockets * t.Cores * t.Threads {
		if t.Adjacent {
			out = append(out, at(i/t.Threads/t.Cores, i/t.Threads%t.Cores))
		} else {
			out = append(out, at(i/t.Cores%t.Sockets, i%t.Cores))
		}
	}
	for i := range t.Solo {
		p := at(t.Sockets-1, t.Cores)
		p.core = t.Sockets*t.Cores + i
		out = append(out, p)
	}
	return out
}

// machine is the Machine of t.
func (t Topo) machine() fakesys.Machine {
	cpus := t.cpus()
	group := func(key func(cpuPos) int, k int) string {
		var b cpumask.Builder
		for c, p := range cpus {
			if key(p) == k {
				b.Set(c)
			}
		}
		return b.Mask().String()
	}
	core := func(p cpuPos) int { return p.core }
	llc := func(p cpuPos) int { return p.llc }
	m := fakesys.Machine{
		Online:   fmt.Sprintf("0-%d", len(cpus)-1),
		Siblings: func(c int) string { return group(core, cpus[c].core) },
		Package:  func(c int) int { return cpus[c].pkg },
		LLC:      func(c int) string { return group(llc, cpus[c].llc) },
	}
	for i := range t.Sockets * t.Nodes {
		dist := make([]int, t.Sockets*t.Nodes)
		for j := range dist {
			switch {
			case i == j:
				dist[j] = 10
			case i/t.Nodes == j/t.Nodes:
				dist[j] = t.Near
			default:
				dist[j] = t.Far
			}
		}
		m.Nodes = append(m.Nodes, fakesys.Node{ID: i, CPUs: group(func(p cpuPos) int { return p.node }, i), Distance: dist})
	}
	return m
}

var (
	// queueName is a queue vector's name as the NIC drivers here give it.
	queueName = regexp.MustCompile(`-(?:TxRx|rx|tx)-\d+$|^em\d+-\d+$`)
	// chipBDF is the BDF kernels since 6.2 put in the chip column.
	chipBDF = regexp.MustCompile(`PCI-MSIX?-(` + bdfRe + `)$`)
	// nameBDF finds a BDF in a name: mlx5's "@pci:", mlx4's "@", i40e's,
	// ahci's, or a name that is one.
	nameBDF = regexp.MustCompile(`(?:@pci:|@|^i40e-|^ahci\[|^)(` + bdfRe + `)`)
	// ifnameBDF is a predictable interface name: enp<bus>s<slot>[f<fn>].
	ifnameBDF = regexp.MustCompile(`^(?:i40e-)?enp(\d+)s(\d+)(?:f(\d+))?`)
	// instance reduces a name to its driver instance: "nvme0q3" to
	// "nvme0", "hpsa0-msix5" to "hpsa0", "eth0-TxRx-1" to "eth0".
	instance = regexp.MustCompile(`^(nvme\d+)q\d+$|^(\S+?\d+)-msix\d+$|^(\S+?)-(?:TxRx|rx|tx)-\d+$|^(em\d+)-\d+$|^(\S+) \(`)
	// perRow are names of one vector per PCI function (DMA engines,
	// the port services of bridges).
	perRow = regexp.MustCompile(`^(?:ioat-msix|PCIe PME|aerdrv|pciehp)`)
)

const bdfRe = `[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]`

// devices groups the listing's MSI rows into PCI devices. The BDF is
// the chip's, else decoded from the x86 PCI-MSI hwirq (the requester
// id above bit 11, the domain above bit 27), else read from the name,
// else made up for the driver instance on a bus no real device uses.
// A device's node is its share of the PCI bus range (each socket, or
// node, roots an equal slice of it on these platforms); made-up BDFs
// sit on node 0.
func (l Listing) devices(rows []inventory.InterruptLine) []fakesys.PCIDevice {
	type dev struct {
		bdf  string
		made bool
		irqs []int
		name string
	}
	var order []string
	byKey := map[string]*dev{}
	used := map[string]bool{}
	var pending []inventory.InterruptLine
	add := func(key, bdf string, made bool, r inventory.InterruptLine) {
		d := byKey[key]
		if d == nil {
			d = &dev{bdf: bdf, made: made, name: r.Actions[0]}
			byKey[key] = d
			order = append(order, key)
		}
		d.irqs = append(d.irqs, r.IRQ)
	}
	for _, r := range rows {
		if !strings.Contains(r.Chip, "PCI-MSI") || len(r.Actions) == 0 {
			continue
		}
		if bdf := rowBDF(r); bdf != "" {
			used[bdf[:7]] = true
			add(bdf, bdf, false, r)
			continue
		}
		pending = append(pending, r)
	}
	bus := 0
	for _, r := range pending {
		name := r.Actions[0]
		key := name
		if m := instance.FindStringSubmatch(name); m != nil {
			key = strings.Join(m[1:], "")
		}
		if perRow.MatchString(name) {
			key = name + "#" + strconv.Itoa(r.IRQ)
		}
		if byKey[key] == nil {
			for bus++; used[fmt.Sprintf("0000:%02x", bus)]; bus++ {
			}
		}
		add(key, fmt.Sprintf("0000:%02x:00.0", bus), true, r)
	}
	nodes := l.Topo.Sockets * l.Topo.Nodes
	var out []fakesys.PCIDevice
	for _, k := range order {
		d := byKey[k]
		driver, class := driverOf(d.name)
		pd := fakesys.PCIDevice{BDF: d.bdf, Driver: driver, Class: class, MSIIRQs: d.irqs}
		if b, err := strconv.ParseUint(d.bdf[5:7], 16, 8); err == nil && !d.made {
			pd.NUMANode = int(b) * nodes / 256
		}
		if m := instance.FindStringSubmatch(d.name); m != nil && (m[3] != "" || m[4] != "") {
			pd.Interfaces = []string{m[3] + m[4]}
		} else if l.NIC[d.name] != "" {
			pd.Interfaces = []string{d.name}
		}
		if len(pd.Interfaces) == 1 && l.NIC[pd.Interfaces[0]] != "" {
			pd.Driver, pd.Class = l.NIC[pd.Interfaces[0]], "0x020000"
		}
		out = append(out, pd)
	}
	return out
}

// rowBDF is r's BDF from its chip, hwirq or name, "" when none says.
func rowBDF(r inventory.InterruptLine) string {
	if m := chipBDF.FindStringSubmatch(r.Chip); m != nil {
		return m[1]
	}
	if hw, ok := strings.CutSuffix(r.HWIRQ, "-edge"); ok && (r.Chip == "PCI-MSI" || r.Chip == "IR-PCI-MSI") {
		if n, err := strconv.ParseUint(hw, 10, 64); err == nil {
			id := n >> 11 & 0xffff
			return fmt.Sprintf("%04x:%02x:%02x.%d", n>>27, id>>8, id>>3&0x1f, id&7)
		}
	}
	if m := nameBDF.FindStringSubmatch(r.Actions[0]); m != nil {
		return m[1]
	}
	if m := ifnameBDF.FindStringSubmatch(r.Actions[0]); m != nil {
		b, _ := strconv.Atoi(m[1])
		s, _ := strconv.Atoi(m[2])
		f, _ := strconv.Atoi(m[3])
		return fmt.Sprintf("0000:%02x:%02x.%d", b, s, f)
	}
	return ""
}

// drivers maps a vector's name to the driver that requests it and the
// PCI class of its devices.
var drivers = []struct {
	re            *regexp.Regexp
	driver, class string
}{
	{regexp.MustCompile(`^nvme\d+q\d+$`), "nvme", "0x010802"},
	{regexp.MustCompile(`^mlx5_`), "mlx5_core", "0x020000"},
	{regexp.MustCompile(`^mlx4[-_]`), "mlx4_core", "0x020000"},
	{regexp.MustCompile(`^i40e-`), "i40e", "0x020000"},
	{regexp.MustCompile(`^megasas`), "megaraid_sas", "0x010400"},
	{regexp.MustCompile(`^mpt2sas`), "mpt2sas", "0x010700"},
	{regexp.MustCompile(`^hpsa`), "hpsa", "0x010400"},
	{regexp.MustCompile(`^smartpqi$`), "smartpqi", "0x010700"},
	{regexp.MustCompile(`^isci`), "isci", "0x010700"},
	{regexp.MustCompile(`^ahci|^[0-9a-f]{4}:`), "ahci", "0x010601"},
	{regexp.MustCompile(`^ib_qib`), "ib_qib", "0x0c0600"},
	{regexp.MustCompile(`^ib_mthca`), "ib_mthca", "0x0c0600"},
	{regexp.MustCompile(`^ioat`), "ioatdma", "0x088000"},
	{regexp.MustCompile(`^(?:PCIe PME|aerdrv|pciehp)`), "pcieport", "0x060400"},
	{regexp.MustCompile(`^xhci_hcd$`), "xhci_hcd", "0x0c0330"},
	{regexp.MustCompile(`^vmd\d+$`), "vmd", "0x010400"},
	{regexp.MustCompile(`^thunderbolt$`), "thunderbolt", "0x0c0340"},
	{regexp.MustCompile(`^i915$`), "i915", "0x030000"},
	{regexp.MustCompile(`^nvidia$`), "nvidia", "0x030000"},
	{regexp.MustCompile(`^AMD-Vi$`), "", "0x080600"},
	{regexp.MustCompile(`^snd_hda_intel`), "snd_hda_intel", "0x040300"},
	{regexp.MustCompile(`^mei_me$`), "mei_me", "0x078000"},
	{regexp.MustCompile(`^iwlwifi`), "iwlwifi", "0x028000"},
	{regexp.MustCompile(`^(?:psp|ccp)-\d+$`), "ccp", "0x108000"},
}

// driverOf is the driver and class of a device whose first vector is
// name; a network controller by default (interfaces' own names).
func driverOf(name string) (string, string) {
	for _, d := range drivers {
		if d.re.MatchString(name) {
			return d.driver, d.class
		}
	}
	return "", "0x020000"
}
