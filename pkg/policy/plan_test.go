package policy_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/pkg/topology"
)

// fourNodes is a 4-node, 8-CPU machine (two CPUs a node) with the
// qemu-lab distance table 10/12/20/22: node 2's spread is 4 5 | 6 7 |
// 0 1 | 2 3.
func fourNodes() fakesys.Machine { return fakesys.QEMUGuest() }

// fixture is a machine plus devices, read back through the real readers.
type fixture struct {
	t    testing.TB
	tree *fakesys.Tree
	m    fakesys.Machine
}

func newFixture(t testing.TB, m fakesys.Machine) *fixture {
	tree := fakesys.New(t)
	tree.AddMachine(m)
	online, _ := cpumask.ParseList(m.Online)
	tree.AddInterrupts(online.CPUs(), fakesys.InterruptRow{IRQ: 0, Chip: "IO-APIC", HWIRQ: "2-edge", Name: "timer"})
	tree.AddIRQ(fakesys.IRQSpec{Number: 0, Name: "timer", Chip: "IO-APIC", HWIRQ: "2-edge", Affinity: m.Online})
	return &fixture{t: t, tree: tree, m: m}
}

func (f *fixture) virtio(bdf string, index, pairs, firstIRQ, node int) {
	f.tree.AddVirtioNet(fakesys.VirtioNet{BDF: bdf, Index: index, Interface: fmt.Sprintf("eth%d", index),
		Pairs: pairs, FirstIRQ: firstIRQ, NUMANode: node})
}

func (f *fixture) plan(cfg *config.Config) *policy.Plan {
	f.t.Helper()
	return readBack(f.t, f).compute(cfg, policy.Memory{}, policy.Balancing{})
}

// balanced is a machine read back for pure Compute calls.
type balanced struct {
	s   *topology.Snapshot
	inv *inventory.Inventory
}

func readBack(t testing.TB, f *fixture) balanced { return readTree(t, f.tree) }

// readTree reads tree through the real readers, as state.Plan does.
func readTree(t testing.TB, tree *fakesys.Tree) balanced {
	t.Helper()
	s, err := topology.NewFS(tree.Sys()).Read()
	if err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.FS{Proc: tree.Proc(), Sys: tree.Sys()}.Read()
	if err != nil {
		t.Fatal(err)
	}
	return balanced{s, inv}
}

// compute plans the machine with cfg (nil: defaults), mem and bal.
func (b balanced) compute(cfg *config.Config, mem policy.Memory, bal policy.Balancing) *policy.Plan {
	if cfg == nil {
		cfg = config.Default()
	}
	return policy.Compute(b.s, b.inv, cfg, nil, mem, bal)
}

func parseConfig(t testing.TB, yaml string) *config.Config {
	t.Helper()
	cfg, err := config.Parse("test.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func device(t testing.TB, p *policy.Plan, pci string) policy.Device {
	t.Helper()
	for _, d := range p.Devices {
		if d.PCI == pci {
			return d
		}
	}
	t.Fatalf("no device %s in plan", pci)
	return policy.Device{}
}

// queueCPUs maps queue index -> planned mask, checking that IRQs sharing
// a queue index share it.
func queueCPUs(t testing.TB, d policy.Device) map[int]string {
	t.Helper()
	out := map[int]string{}
	for _, q := range d.IRQs {
		if q.Role != policy.RoleQueue || q.Managed {
			continue
		}
		m := q.Planned.String()
		if prev, ok := out[q.Queue]; ok && prev != m {
			t.Errorf("%s: queue %d split over %s and %s", d.PCI, q.Queue, prev, m)
		}
		out[q.Queue] = m
	}
	return out
}

func wantQueues(t testing.TB, d policy.Device, want ...string) {
	t.Helper()
	got := queueCPUs(t, d)
	if len(got) != len(want) {
		t.Fatalf("%s: %d queues planned (%v), want %d", d.PCI, len(got), got, len(want))
	}
	for i, w := range want {
		if got[i] != w {
			t.Errorf("%s: queue %d on %q, want %q", d.PCI, i, got[i], w)
		}
	}
}

func TestVirtioSixPairsFollowsNodeSpread(t *testing.T) {
	f := newFixture(t, fourNodes())
	f.virtio("0000:41:00.0", 0, 6, 24, 2)
	p := f.plan(nil)
	d := device(t, p, "0000:41:00.0")
	if d.Policy != config.PolicyNUMAHop || d.Driver != "virtio-pci" || d.Node != 2 {
		t.Errorf("device = %+v", d)
	}
	wantQueues(t, d, "4", "5", "6", "7", "0", "1")
	for _, q := range d.IRQs {
		switch {
		case q.Role == policy.RoleControl && q.Planned.String() != "4-5":
			t.Errorf("config IRQ %d planned %q, want node 2's CPUs 4-5", q.Number, q.Planned)
		case q.Queue == 2 && (q.Hop != 1 || q.Distance != 12):
			t.Errorf("queue 2: hop %d distance %d, want hop 1 distance 12", q.Hop, q.Distance)
		case q.Queue == 5 && !strings.Contains(q.Reason, "hop 2, distance 20 from node 2"):
			t.Errorf("queue 5 reason %q", q.Reason)
		}
	}
}

func TestVirtioEightPairsOnEightCPUsIsLinear(t *testing.T) {
	f := newFixture(t, fourNodes())
	f.virtio("0000:41:00.0", 0, 8, 24, 2)
	d := device(t, f.plan(nil), "0000:41:00.0")
	if d.Policy != config.PolicyLinear {
		t.Errorf("policy = %s, want linear", d.Policy)
	}
	wantQueues(t, d, "0", "1", "2", "3", "4", "5", "6", "7")
}

func TestMoreQueuesThanCPUsWraps(t *testing.T) {
	f := newFixture(t, fourNodes())
	f.virtio("0000:41:00.0", 0, 12, 24, 1)
	d := device(t, f.plan(nil), "0000:41:00.0")
	wantQueues(t, d, "0", "1", "2", "3", "4", "5", "6", "7", "0", "1", "2", "3")
}

func TestTwoNICsOnOneNodeDoNotStack(t *testing.T) {
	m := fakesys.Machine{Online: "0-31", Nodes: []fakesys.Node{
		{ID: 0, CPUs: "0-15", Distance: []int{10, 20}},
		{ID: 1, CPUs: "16-31", Distance: []int{20, 10}},
	}}
	f := newFixture(t, m)
	f.virtio("0000:41:00.0", 0, 8, 24, 0)
	f.virtio("0000:42:00.0", 1, 8, 60, 0)
	p := f.plan(nil)
	wantQueues(t, device(t, p, "0000:41:00.0"), "0", "1", "2", "3", "4", "5", "6", "7")
	wantQueues(t, device(t, p, "0000:42:00.0"), "8", "9", "10", "11", "12", "13", "14", "15")
}

// TestManaFourVCPUs is the MANA patch's case: 4 vCPUs, one HWC control
// IRQ and four queue IRQs; linear, one queue per vCPU.
func TestManaFourVCPUs(t *testing.T) {
	f := newFixture(t, fakesys.Machine{Online: "0-3", Siblings: func(c int) string { return fmt.Sprintf("%d-%d", c&^1, c|1) }})
	bdf := "7870:00:00.0"
	specs := []fakesys.IRQSpec{{Number: 30, Name: "mana_hwc@pci:" + bdf}}
	for q := 1; q <= 4; q++ {
		specs = append(specs, fakesys.IRQSpec{Number: 30 + q, Name: fmt.Sprintf("mana_q%d@pci:%s", q, bdf), Affinity: "0"})
	}
	f.tree.AddMSIXDevice(fakesys.PCIDevice{BDF: bdf, NUMANode: 0, Driver: "mana", Class: "0x020000", Interfaces: []string{"eth0"}}, specs...)
	d := device(t, f.plan(nil), bdf)
	if d.Policy != config.PolicyLinear {
		t.Errorf("policy = %s, want linear", d.Policy)
	}
	wantQueues(t, d, "0", "1", "2", "3")
	if hwc := d.IRQs[0]; hwc.Role != policy.RoleControl || hwc.Planned.String() != "0-3" {
		t.Errorf("HWC IRQ = %+v", hwc)
	}
}

func TestBannedAndIsolatedNeverPlanned(t *testing.T) {
	m := fourNodes()
	m.Isolated, m.NohzFull = "4", "7"
	f := newFixture(t, m)
	f.virtio("0000:41:00.0", 0, 6, 24, 2)
	p := f.plan(parseConfig(t, "banned_cpus: 1\n"))
	if p.Allowed.String() != "0,2-3,5-6" {
		t.Fatalf("allowed = %s", p.Allowed)
	}
	d := device(t, p, "0000:41:00.0")
	// 6 queues on 5 allowed CPUs: linear, wrapping.
	wantQueues(t, d, "0", "2", "3", "5", "6", "0")
	for _, q := range d.IRQs {
		if q.Planned.Intersects(cpumask.New(1, 4, 7)) {
			t.Errorf("IRQ %d planned on %s", q.Number, q.Planned)
		}
	}
	// With isolation not excluded, CPU 4 and 7 come back.
	p = f.plan(parseConfig(t, "banned_cpus: 1\nexclude_isolated: false\nexclude_nohz_full: false\n"))
	if p.Allowed.String() != "0,2-7" {
		t.Errorf("allowed = %s", p.Allowed)
	}
}

func TestDeviceNodeFullyBannedUsesNearestNode(t *testing.T) {
	f := newFixture(t, fourNodes())
	f.virtio("0000:41:00.0", 0, 2, 24, 2)
	d := device(t, f.plan(parseConfig(t, "banned_cpus: 4-5\n")), "0000:41:00.0")
	wantQueues(t, d, "6", "7")
	if c := d.IRQs[0]; c.Planned.String() != "6-7" {
		t.Errorf("config IRQ planned %s, want the nearest node's CPUs 6-7", c.Planned)
	}
}

func TestCPULessDeviceNode(t *testing.T) {
	m := fourNodes()
	for i := range m.Nodes {
		m.Nodes[i].Distance = append(m.Nodes[i].Distance, 30)
	}
	m.Nodes = append(m.Nodes, fakesys.Node{ID: 4, CPUs: "", Distance: []int{30, 30, 30, 15, 10}})
	f := newFixture(t, m)
	f.virtio("0000:41:00.0", 0, 3, 24, 4)
	d := device(t, f.plan(nil), "0000:41:00.0")
	if d.SpreadNode != 3 {
		t.Errorf("spread node = %d, want 3 (nearest to memory-only node 4)", d.SpreadNode)
	}
	if want := "so the queues go to node 3's (the nearest with CPUs to node 4) CPUs first"; !strings.Contains(d.PolicyWhy, want) {
		t.Errorf("policy why %q lacks %q", d.PolicyWhy, want)
	}
	wantQueues(t, d, "6", "7", "4")
	if c := d.IRQs[0]; c.Planned.String() != "6-7" {
		t.Errorf("config IRQ planned %s", c.Planned)
	}
}

func TestNoNodeDeviceUsesCPUOrder(t *testing.T) {
	f := newFixture(t, fourNodes())
	f.virtio("0000:41:00.0", 0, 3, 24, -1)
	d := device(t, f.plan(nil), "0000:41:00.0")
	wantQueues(t, d, "0", "1", "2")
	if c := d.IRQs[0]; c.Planned.String() != "0-7" {
		t.Errorf("config IRQ planned %s, want every allowed CPU", c.Planned)
	}
}

func TestNVMeManagedQueuesNeverPlanned(t *testing.T) {
	f := newFixture(t, fourNodes())
	specs := []fakesys.IRQSpec{{Number: 40, Name: "nvme0q0", Affinity: "0-7"}}
	for q := 1; q <= 8; q++ {
		specs = append(specs, fakesys.IRQSpec{Number: 40 + q, Name: fmt.Sprintf("nvme0q%d", q), Affinity: fmt.Sprint(q - 1), Managed: true})
	}
	f.tree.AddMSIXDevice(fakesys.PCIDevice{BDF: "0000:21:00.0", NUMANode: 1, Driver: "nvme", Class: "0x010802"}, specs...)
	d := device(t, f.plan(nil), "0000:21:00.0")
	for _, q := range d.IRQs {
		if q.Number == 40 {
			if q.Managed || q.Planned.String() != "2-3" {
				t.Errorf("admin queue = %+v, want control on node 1's CPUs", q)
			}
			continue
		}
		if !q.Managed || !q.LeftAlone() || !strings.Contains(q.Reason, "managed") {
			t.Errorf("managed queue IRQ %d = %+v", q.Number, q)
		}
	}
}

func TestNonPCIIRQsLeftAloneUnlessNamed(t *testing.T) {
	f := newFixture(t, fourNodes())
	if p := f.plan(nil); len(p.Devices) != 0 {
		t.Fatalf("plan has %d devices, want none (only the timer)", len(p.Devices))
	}
	p := f.plan(parseConfig(t, "devices:\n  - match: {irq: timer}\n    policy: pinned\n    cpus: 3\n"))
	if len(p.Devices) != 1 || p.Devices[0].IRQs[0].Planned.String() != "3" {
		t.Errorf("plan = %+v", p.Devices)
	}
}

func TestRules(t *testing.T) {
	f := newFixture(t, fakesys.Machine{
		Online: "0-7", Siblings: func(c int) string { return fmt.Sprintf("%d,%d", c%4, c%4+4) },
		Nodes: []fakesys.Node{{ID: 0, CPUs: "0-1,4-5", Distance: []int{10, 20}}, {ID: 1, CPUs: "2-3,6-7", Distance: []int{20, 10}}},
	})
	f.virtio("0000:41:00.0", 0, 2, 24, 1)
	f.virtio("0000:42:00.0", 1, 2, 40, 1)
	f.virtio("0000:43:00.0", 2, 6, 60, 1)
	cfg := parseConfig(t, `
devices:
  - name: pin eth0
    match: {interface: eth0}
    policy: pinned
    cpus: 0-1
  - match: {pci: "0000:42:00.0"}
    policy: ignore
  - match: {driver: virtio_net}
    mask: core
`)
	p := f.plan(cfg)
	for _, q := range device(t, p, "0000:41:00.0").IRQs {
		if q.Planned.String() != "0-1" {
			t.Errorf("pinned IRQ %d planned %s", q.Number, q.Planned)
		}
	}
	for _, q := range device(t, p, "0000:42:00.0").IRQs {
		if !q.LeftAlone() || !strings.Contains(q.Reason, "ignore") {
			t.Errorf("ignored IRQ %d = %+v", q.Number, q)
		}
	}
	// MANA walk on node 1 (cores {2,6} and {3,7}): one queue per core, a
	// second turn per core, then node 0's cores.
	d := device(t, p, "0000:43:00.0")
	if d.Mask != config.MaskCore {
		t.Errorf("mask = %s", d.Mask)
	}
	wantQueues(t, d, "2,6", "3,7", "2,6", "3,7", "0,4", "1,5")
}

func TestQueueRegexAndNodeOverride(t *testing.T) {
	f := newFixture(t, fourNodes())
	specs := []fakesys.IRQSpec{{Number: 50, Name: "acme-mgmt"}}
	for q := range 3 {
		specs = append(specs, fakesys.IRQSpec{Number: 51 + q, Name: fmt.Sprintf("acme-ring%d-x", q)})
	}
	f.tree.AddMSIXDevice(fakesys.PCIDevice{BDF: "0000:50:00.0", NUMANode: 0, Driver: "acme"}, specs...)
	cfg := parseConfig(t, `
devices:
  - match: {driver: acme}
    queue_regex: "ring(?P<queue>[0-9]+)"
    node: 3
`)
	d := device(t, f.plan(cfg), "0000:50:00.0")
	wantQueues(t, d, "6", "7", "4")
	if d.Node != 3 {
		t.Errorf("node = %d, want the rule's 3", d.Node)
	}
}

func TestDocKeys(t *testing.T) {
	f := newFixture(t, fourNodes())
	f.virtio("0000:41:00.0", 0, 1, 24, 2)
	doc := f.plan(nil).Doc()
	if len(doc.Devices) != 1 {
		t.Fatalf("doc = %+v", doc)
	}
	d := doc.Devices[0]
	if d.PCI != "0000:41:00.0" || d.Policy != "numa-hop" || d.Node != 2 || len(d.IRQs) != 3 {
		t.Errorf("device doc = %+v", d)
	}
	if d.IRQs[0].Queue != nil || d.IRQs[1].Queue == nil || *d.IRQs[1].Queue != 0 || d.IRQs[1].Planned != "4" {
		t.Errorf("irq docs = %+v", d.IRQs)
	}
	if !slices.Equal(d.Interfaces, []string{"eth0"}) {
		t.Errorf("interfaces = %v", d.Interfaces)
	}
}
