package hostcorpus

import (
	"slices"
	"strconv"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/internal/fakesys/fakeplan"
	"github.com/numairqd/numairqd/pkg/cpumask"
)

// newGather is a gather of files and symlinks.
func newGather(files, links map[string]string) *Gather {
	g := &Gather{files: files, links: links, dirs: map[string][]string{}}
	for p := range files {
		g.add(p)
	}
	for p := range links {
		g.add(p)
	}
	return g
}

// TestFromOldGather converts the gather of a kernel without the list
// files, cpu/online or node/online, with a CPU offline and NUL-ended
// files, and reads what it wrote.
func TestFromOldGather(t *testing.T) {
	const cpu, node = "sys/devices/system/cpu/", "sys/devices/system/node/"
	files := map[string]string{
		cpu + "cpu3/online":     "0\n",
		node + "node0/cpumap":   "00000000,00000003\n",
		node + "node0/distance": "10 20\n",
		node + "node1/cpumap":   "00000000,0000000c\n",
		node + "node1/distance": "20 10\n\x00",
	}
	for c := range 3 { // CPU 3 is offline: no topology
		d := cpu + "cpu" + itoa(c) + "/topology/"
		files[d+"thread_siblings"] = []string{"00000003\n\x00", "00000003\n\x00", "00000004\n\x00"}[c]
		files[d+"core_siblings"] = "0000000f\n"
		files[d+"physical_package_id"] = "0\n"
	}
	tree := fakesys.New(t)
	notes := FromGather(t, tree, newGather(files, nil), HwlocMachine{Gather: "old", NIC: true})
	for _, want := range []string{"cpu/online derived from the CPUs with a topology directory", "thread_siblings_list derived from thread_siblings",
		"node/online derived from the node directories", "cpulist derived from cpumap"} {
		if !slices.Contains(notes, want) {
			t.Errorf("notes %q lack %q", notes, want)
		}
	}
	m := fakeplan.Read(t, tree)
	s := m.Snapshot
	if s.Online().String() != "0-2" || len(s.Nodes()) != 2 || s.Distance(0, 1) != 20 {
		t.Fatalf("online %s, %d nodes, distance %d; want 0-2, 2 nodes, 20", s.Online(), len(s.Nodes()), s.Distance(0, 1))
	}
	if c, _ := s.CPU(1); c.Node != 0 || !c.Siblings.Equal(cpumask.New(0, 1)) || c.Package != 0 {
		t.Errorf("CPU 1: %+v, want node 0, siblings 0-1, package 0", c)
	}
	if c, _ := s.CPU(2); c.Node != 1 || !c.Siblings.Equal(cpumask.New(2)) {
		t.Errorf("CPU 2: %+v, want node 1, no sibling", c)
	}
	// The synthetic NIC on node 0: async and a completion vector per two
	// online CPUs.
	if len(m.Inventory.Devices) != 1 || m.Inventory.Devices[0].NUMANode != 0 || len(m.Inventory.Devices[0].IRQs) != 2 {
		t.Errorf("devices %+v, want the synthetic NIC on node 0 with 2 IRQs", m.Inventory.Devices)
	}
}

// TestGatherDevices converts a gather's NIC with its msi_irqs and an NVMe
// drive without: the NIC keeps its vector numbers, the first five
// requested with igb's names, the NVMe gets numbers no device has.
func TestGatherDevices(t *testing.T) {
	const cpu, pci = "sys/devices/system/cpu/", "sys/devices/pci0000:00/"
	files := map[string]string{
		cpu + "online":                    "0-3\n",
		pci + "0000:01:00.0/class":        "0x020000\n",
		pci + "0000:01:00.0/numa_node":    "-1\n",
		pci + "0000:01:00.0/irq":          "16\n",
		pci + "0000:01:00.0/net/eth0/mtu": "1500\n",
		pci + "0000:02:00.0/class":        "0x010802\n",
		pci + "0000:02:00.0/numa_node":    "-1\n",
		pci + "0000:02:00.0/irq":          "100\n",
		pci + "0000:03:00.0/class":        "0x030000\n", // no vectors: not a NIC or NVMe
		pci + "0000:03:00.0/msi_irqs/30":  "msi\n",
	}
	for n := 40; n < 50; n++ {
		files[pci+"0000:01:00.0/msi_irqs/"+itoa(n)] = "msix\n"
	}
	for c := range 4 {
		files[cpu+"cpu"+itoa(c)+"/topology/core_cpus_list"] = itoa(c) + "\n"
	}
	links := map[string]string{
		"sys/bus/pci/devices/0000:01:00.0": "../../../devices/pci0000:00/0000:01:00.0",
		"sys/bus/pci/devices/0000:02:00.0": "../../../devices/pci0000:00/0000:02:00.0",
		"sys/bus/pci/devices/0000:03:00.0": "../../../devices/pci0000:00/0000:03:00.0",
		pci + "0000:01:00.0/driver":        "../../../bus/pci/drivers/igb",
		pci + "0000:02:00.0/driver":        "../../../bus/pci/drivers/nvme",
		pci + "0000:03:00.0/driver":        "../../../bus/pci/drivers/nvidia",
	}
	tree := fakesys.New(t)
	FromGather(t, tree, newGather(files, links), HwlocMachine{Gather: "devices"})
	inv := fakeplan.Read(t, tree).Inventory
	var got []string
	for _, q := range inv.IRQs {
		got = append(got, itoa(q.Number)+" "+q.Name+" "+q.Device)
	}
	want := []string{"40 eth0 0000:01:00.0", "41 eth0-TxRx-0 0000:01:00.0", "42 eth0-TxRx-1 0000:01:00.0", "43 eth0-TxRx-2 0000:01:00.0",
		"44 eth0-TxRx-3 0000:01:00.0", "101 nvme0q0 0000:02:00.0", "102 nvme0q1 0000:02:00.0", "103 nvme0q2 0000:02:00.0",
		"104 nvme0q3 0000:02:00.0", "105 nvme0q4 0000:02:00.0"}
	if !slices.Equal(got, want) {
		t.Errorf("IRQs\n%q, want\n%q", got, want)
	}
	if d, ok := inv.Device("0000:01:00.0"); !ok || !slices.Equal(d.Interfaces, []string{"eth0"}) || d.Driver != "igb" {
		t.Errorf("igb device %+v, want eth0 on driver igb", d)
	}
	for _, q := range inv.IRQs {
		if q.Name != "nvme0q0" && q.Device == "0000:02:00.0" && !q.Managed {
			t.Errorf("IRQ %d %s is not managed", q.Number, q.Name)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
