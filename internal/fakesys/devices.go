package fakesys

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

// InterruptRow is one numeric row of proc/interrupts.
type InterruptRow struct {
	IRQ int
	// Counts has one count per online CPU, in column order; missing
	// counts are 0.
	Counts []uint64
	// Chip defaults to "IR-PCI-MSIX"; HWIRQ to "0-edge".
	Chip  string
	HWIRQ string
	// Name is the actions column ("virtio0-input.0", "a, b" when
	// shared); it may be empty.
	Name string
}

// interruptsTrailer are the named per-CPU rows a real x86 file ends
// with; readers must skip them.
var interruptsTrailer = []string{"NMI", "LOC", "ERR", "MIS"}

// AddInterrupts writes proc/interrupts for the given online CPUs (the
// header columns) with rows, replacing any previous file. Later AddIRQ
// calls add rows to it.
func (t *Tree) AddInterrupts(onlineCPUs []int, rows ...InterruptRow) {
	t.tb.Helper()
	if len(onlineCPUs) == 0 {
		t.tb.Fatal("fakesys: AddInterrupts needs at least one online CPU")
	}
	t.writeInterrupts(onlineCPUs, nil, rows)
}

// OnlineCPUs returns the CPU columns of proc/interrupts' header.
func (t *Tree) OnlineCPUs() []int {
	t.tb.Helper()
	cpus, _ := t.readInterrupts()
	return cpus
}

// readInterrupts returns the header CPUs and the numeric row lines keyed
// by IRQ. It fails the test when AddInterrupts was not called.
func (t *Tree) readInterrupts() ([]int, map[int]string) {
	t.tb.Helper()
	b, err := os.ReadFile(t.Path("proc/interrupts"))
	if err != nil {
		t.tb.Fatalf("fakesys: call AddInterrupts before adding IRQs: %v", err)
	}
	lines := strings.Split(string(b), "\n")
	var cpus []int
	for _, f := range strings.Fields(lines[0]) {
		c, err := strconv.Atoi(strings.TrimPrefix(f, "CPU"))
		if err != nil {
			t.tb.Fatalf("fakesys: proc/interrupts header %q", lines[0])
		}
		cpus = append(cpus, c)
	}
	rows := map[int]string{}
	for _, l := range lines[1:] {
		label, _, ok := strings.Cut(l, ":")
		if n, err := strconv.Atoi(strings.TrimSpace(label)); ok && err == nil {
			rows[n] = l
		}
	}
	return cpus, rows
}

// writeInterrupts writes header, the old row lines merged with rows (rows
// win), sorted by IRQ, and the named trailer, the way show_interrupts()
// lays them out.
func (t *Tree) writeInterrupts(cpus []int, old map[int]string, rows []InterruptRow) {
	t.tb.Helper()
	lines := make(map[int]string, len(old)+len(rows))
	for n, l := range old {
		lines[n] = l
	}
	for _, r := range rows {
		lines[r.IRQ] = formatRow(len(cpus), r)
	}
	irqs := make([]int, 0, len(lines))
	for n := range lines {
		irqs = append(irqs, n)
	}
	slices.Sort(irqs)
	var sb strings.Builder
	sb.WriteString(strings.Repeat(" ", 11))
	for _, c := range cpus {
		fmt.Fprintf(&sb, "CPU%-8d", c)
	}
	sb.WriteByte('\n')
	for _, n := range irqs {
		sb.WriteString(lines[n])
		sb.WriteByte('\n')
	}
	for _, name := range interruptsTrailer {
		fmt.Fprintf(&sb, "%4s:", name)
		for range cpus {
			fmt.Fprintf(&sb, " %10d", 0)
		}
		sb.WriteString("   trailer\n")
	}
	t.WriteFile("proc/interrupts", sb.String())
}

func formatRow(ncpus int, r InterruptRow) string {
	chip, hw := r.Chip, r.HWIRQ
	if chip == "" {
		chip = "IR-PCI-MSIX"
	}
	if hw == "" {
		hw = "0-edge"
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%4d:", r.IRQ)
	for i := range ncpus {
		var c uint64
		if i < len(r.Counts) {
			c = r.Counts[i]
		}
		sb.WriteByte(' ')
		s := strconv.FormatUint(c, 10)
		if len(s) < 10 {
			sb.WriteString(strings.Repeat(" ", 10-len(s)))
		}
		sb.WriteString(s)
	}
	fmt.Fprintf(&sb, " %8s %8s", chip, hw)
	if r.Name != "" {
		sb.WriteString("  ")
		sb.WriteString(r.Name)
	}
	return sb.String()
}

// IRQSpec describes one IRQ with a handler: its proc/interrupts row and
// its proc/irq/N directory.
type IRQSpec struct {
	Number int
	// Name is the actions column, e.g. "virtio0-input.0".
	Name string
	// Chip and HWIRQ default as in InterruptRow.
	Chip   string
	HWIRQ  string
	Counts []uint64
	// Affinity is smp_affinity_list in list format; "" means all online
	// CPUs, the kernel's default.
	Affinity string
	// Effective is effective_affinity_list; "" leaves the file out (a
	// kernel without CONFIG_GENERIC_IRQ_EFFECTIVE_AFF_MASK).
	Effective string
	// Hint is affinity_hint in list format, written in hex; "" writes
	// all zeros (no hint).
	Hint string
	// Node is written to node as is (0 unless set; -1 for none).
	Node int
	// Managed makes smp_affinity and smp_affinity_list mode 0444, as
	// kernels since 6.12 do for IRQs that refuse user affinity.
	Managed bool
}

// AddIRQ writes proc/irq/N for spec and adds its row to proc/interrupts
// (AddInterrupts must have run).
func (t *Tree) AddIRQ(spec IRQSpec) {
	t.tb.Helper()
	t.AddIRQs(spec)
}

// AddIRQs is AddIRQ for many IRQs with a single rewrite of
// proc/interrupts, for large fixtures.
func (t *Tree) AddIRQs(specs ...IRQSpec) {
	t.tb.Helper()
	cpus, old := t.readInterrupts()
	nbits := slices.Max(cpus) + 1
	all := make([]string, len(cpus))
	for i, c := range cpus {
		all[i] = strconv.Itoa(c)
	}
	rows := make([]InterruptRow, 0, len(specs))
	for _, s := range specs {
		rows = append(rows, InterruptRow{IRQ: s.Number, Counts: s.Counts, Chip: s.Chip, HWIRQ: s.HWIRQ, Name: s.Name})
		dir := "proc/irq/" + strconv.Itoa(s.Number) + "/"
		aff := s.Affinity
		if aff == "" {
			aff = strings.Join(all, ",")
		}
		m := t.irqMask(aff)
		mode := os.FileMode(0o644)
		if s.Managed {
			mode = 0o444
		}
		t.WriteFileMode(dir+"smp_affinity_list", m.String()+"\n", mode)
		t.WriteFileMode(dir+"smp_affinity", m.Hex(nbits)+"\n", mode)
		if s.Effective != "" {
			e := t.irqMask(s.Effective)
			t.WriteFileMode(dir+"effective_affinity_list", e.String()+"\n", 0o444)
			t.WriteFileMode(dir+"effective_affinity", e.Hex(nbits)+"\n", 0o444)
		}
		t.WriteFileMode(dir+"affinity_hint", t.irqMask(s.Hint).Hex(nbits)+"\n", 0o444)
		t.WriteFileMode(dir+"node", strconv.Itoa(s.Node)+"\n", 0o444)
	}
	t.writeInterrupts(cpus, old, rows)
}

func (t *Tree) irqMask(list string) cpumask.Mask {
	t.tb.Helper()
	m, err := cpumask.ParseList(list)
	if err != nil {
		t.tb.Fatalf("fakesys: %v", err)
	}
	return m
}

// PCIDevice describes a PCI device in sysfs.
type PCIDevice struct {
	// BDF is the address, e.g. "0000:41:00.0".
	BDF string
	// Parent is the BDF of a bridge the device sits under ("" for the
	// root bus); the bridge's directory is created as needed.
	Parent string
	// NUMANode is written to numa_node (0 unless set; -1 for none).
	NUMANode int
	// Driver is the bound driver ("" leaves the device unbound).
	Driver string
	// Class is written as is; "" writes "0x000000".
	Class string
	// MSIIRQs become msi_irqs/<n> files.
	MSIIRQs []int
	// IRQ is the legacy irq file (0: none).
	IRQ int
	// Interfaces get sys/class/net/<if> with a device link to the PCI
	// device, or to the virtio child when VirtioChild is set.
	Interfaces []string
	// VirtioChild ("virtio0") creates that child directory, with a
	// driver link to VirtioDriver ("virtio_net") when set.
	VirtioChild  string
	VirtioDriver string
}

// DevicePath is the sysfs path (relative to Root) where a device with
// this BDF and parent bridge lives.
func DevicePath(bdf, parent string) string {
	bus := "pci0000:00"
	if dom, rest, ok := strings.Cut(bdf, ":"); ok && len(rest) >= 2 {
		bus = "pci" + dom + ":" + rest[:2]
	}
	if parent != "" {
		bus = strings.TrimPrefix(DevicePath(parent, ""), "sys/devices/")
	}
	return "sys/devices/" + bus + "/" + bdf
}

// AddPCIDevice creates the device directory under sys/devices, the
// sys/bus/pci/devices/<BDF> symlink, driver links, msi_irqs, and the
// net interfaces. Links are relative, as in sysfs.
func (t *Tree) AddPCIDevice(d PCIDevice) {
	t.tb.Helper()
	dev := DevicePath(d.BDF, d.Parent)
	t.Mkdir(dev)
	t.relSymlink(dev, "sys/bus/pci/devices/"+d.BDF)
	class := d.Class
	if class == "" {
		class = "0x000000"
	}
	t.WriteFileMode(dev+"/class", class+"\n", 0o444)
	t.WriteFileMode(dev+"/numa_node", strconv.Itoa(d.NUMANode)+"\n", 0o644)
	t.WriteFileMode(dev+"/irq", strconv.Itoa(d.IRQ)+"\n", 0o444)
	if d.Driver != "" {
		t.Mkdir("sys/bus/pci/drivers/" + d.Driver)
		t.relSymlink("sys/bus/pci/drivers/"+d.Driver, dev+"/driver")
	}
	for _, n := range d.MSIIRQs {
		t.WriteFileMode(dev+"/msi_irqs/"+strconv.Itoa(n), "msix\n", 0o444)
	}
	netParent := dev
	if d.VirtioChild != "" {
		netParent = dev + "/" + d.VirtioChild
		t.Mkdir(netParent)
		if d.VirtioDriver != "" {
			t.Mkdir("sys/bus/virtio/drivers/" + d.VirtioDriver)
			t.relSymlink("sys/bus/virtio/drivers/"+d.VirtioDriver, netParent+"/driver")
		}
	}
	for _, ifname := range d.Interfaces {
		ifdir := netParent + "/net/" + ifname
		t.Mkdir(ifdir)
		t.relSymlink(netParent, ifdir+"/device")
		// ifindex: lo is 1, then in the order the interfaces are added.
		ents, _ := os.ReadDir(t.Path("sys/class/net"))
		t.WriteFile(ifdir+"/ifindex", strconv.Itoa(len(ents)+2)+"\n")
		t.relSymlink(ifdir, "sys/class/net/"+ifname)
	}
}

// relSymlink makes rel a symlink to target, both relative to Root, with a
// relative link text.
func (t *Tree) relSymlink(target, rel string) {
	t.tb.Helper()
	r, err := filepath.Rel(filepath.Dir(t.Path(rel)), t.Path(target))
	if err != nil {
		t.tb.Fatal(err)
	}
	t.Symlink(r, rel)
}

// AddMSIXDevice adds a device whose MSI-X IRQs are irqs: each gets chip
// "IR-PCI-MSIX-<BDF>" and hwirq "<i>-edge" unless set, and dev.MSIIRQs
// is set from their numbers. It returns the IRQ numbers.
func (t *Tree) AddMSIXDevice(dev PCIDevice, irqs ...IRQSpec) []int {
	t.tb.Helper()
	nums := make([]int, len(irqs))
	for i := range irqs {
		if irqs[i].Chip == "" {
			irqs[i].Chip = "IR-PCI-MSIX-" + dev.BDF
		}
		if irqs[i].HWIRQ == "" {
			irqs[i].HWIRQ = strconv.Itoa(i) + "-edge"
		}
		nums[i] = irqs[i].Number
	}
	t.AddIRQs(irqs...)
	dev.MSIIRQs = nums
	t.AddPCIDevice(dev)
	return nums
}

// VirtioNet describes a virtio-net PCI device with Pairs queue pairs.
type VirtioNet struct {
	BDF       string
	Index     int // the N of virtioN
	Interface string
	Pairs     int
	// FirstIRQ is the config IRQ; input.K is FirstIRQ+1+2K and output.K
	// FirstIRQ+2+2K, the order virtio_pci requests them in.
	FirstIRQ int
	NUMANode int
}

// AddVirtioNet adds a virtio-net device (virtio-pci with a virtioN child
// bound to virtio_net) with config, input.K and output.K IRQs, and
// returns their numbers in that order. Its interface gets Pairs tx
// queues whose xps_cpus are the driver's map (VirtioXPS) over the
// tree's online CPUs.
func (t *Tree) AddVirtioNet(v VirtioNet) []int {
	t.tb.Helper()
	name := "virtio" + strconv.Itoa(v.Index)
	specs := []IRQSpec{{Number: v.FirstIRQ, Name: name + "-config", Node: v.NUMANode}}
	for k := range v.Pairs {
		specs = append(specs,
			IRQSpec{Number: v.FirstIRQ + 1 + 2*k, Name: fmt.Sprintf("%s-input.%d", name, k), Node: v.NUMANode},
			IRQSpec{Number: v.FirstIRQ + 2 + 2*k, Name: fmt.Sprintf("%s-output.%d", name, k), Node: v.NUMANode})
	}
	var ifs []string
	if v.Interface != "" {
		ifs = []string{v.Interface}
	}
	nums := t.AddMSIXDevice(PCIDevice{
		BDF: v.BDF, NUMANode: v.NUMANode, Driver: "virtio-pci", Class: "0x020000",
		Interfaces: ifs, VirtioChild: name, VirtioDriver: "virtio_net",
	}, specs...)
	if v.Interface != "" {
		online, nbits := t.fixtureOnline()
		t.AddTxQueues(v.Interface, nbits, VirtioXPS(online, v.Pairs))
	}
	return nums
}

// AddQEMUGuestDevices adds the e2e guest's IRQs on top of QEMUGuest():
// the timer (IRQ 0, no PCI device), a virtio-net with 6 queue pairs on
// node 2 at 0000:41:00.0 (config IRQ 24, input.K 25+2K, output.K 26+2K,
// all on CPUs 0-7), and an NVMe on node 1 at 0000:21:00.0 whose admin
// IRQ 40 is on 2-3 and whose queue IRQs 41-48 (nvme0q1..8, on CPUs 0..7)
// are managed.
func (t *Tree) AddQEMUGuestDevices() {
	t.tb.Helper()
	t.AddInterrupts([]int{0, 1, 2, 3, 4, 5, 6, 7}, InterruptRow{IRQ: 0, Chip: "IO-APIC", HWIRQ: "2-edge", Name: "timer"})
	t.AddIRQ(IRQSpec{Number: 0, Name: "timer", Chip: "IO-APIC", HWIRQ: "2-edge", Affinity: "0-7"})
	t.AddVirtioNet(VirtioNet{BDF: "0000:41:00.0", Index: 0, Interface: "eth0", Pairs: 6, FirstIRQ: 24, NUMANode: 2})
	specs := []IRQSpec{{Number: 40, Name: "nvme0q0", Affinity: "2-3"}}
	for q := 1; q <= 8; q++ {
		specs = append(specs, IRQSpec{Number: 40 + q, Name: fmt.Sprintf("nvme0q%d", q), Affinity: strconv.Itoa(q - 1), Managed: true})
	}
	t.AddMSIXDevice(PCIDevice{BDF: "0000:21:00.0", NUMANode: 1, Driver: "nvme", Class: "0x010802"}, specs...)
}
