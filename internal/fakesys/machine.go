package fakesys

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

// Machine describes the CPU and NUMA part of a sysfs tree: what
// /sys/devices/system/{cpu,node} hold on a real host.
type Machine struct {
	Online   string // list format, required
	Possible string // defaults to Online
	Present  string // defaults to Possible

	// Nodes are the online NUMA nodes in any order. Nil means the tree has
	// no devices/system/node directory at all (a !CONFIG_NUMA kernel).
	Nodes []Node

	Isolated string // written always (empty when unset), as the kernel does
	NohzFull string // written only when set (CONFIG_NO_HZ_FULL)

	// Siblings gives a CPU's SMT siblings (itself included) in list
	// format; nil means no SMT. Package gives its physical package; nil
	// means package 0. LLC gives the CPUs sharing its last-level cache;
	// nil writes no cache directory.
	Siblings func(cpu int) string
	Package  func(cpu int) int
	LLC      func(cpu int) string

	// NoCoreCPUs leaves out core_cpus_list, as kernels before 5.13 do, so
	// readers must fall back to thread_siblings_list. NoSMTFiles leaves
	// out both.
	NoCoreCPUs bool
	NoSMTFiles bool
}

// Node is one online NUMA node: its CPUs (list format, online ones only,
// as nodeN/cpulist shows them) and its distance row, column k being the
// k-th online node in id order.
type Node struct {
	ID       int
	CPUs     string
	Distance []int
}

// AddMachine writes m under Sys(): devices/system/cpu and
// devices/system/node.
func (t *Tree) AddMachine(m Machine) {
	t.tb.Helper()
	mustList := func(what, s string) cpumask.Mask {
		mask, err := cpumask.ParseList(s)
		if err != nil {
			t.tb.Fatalf("fakesys: %s: %v", what, err)
		}
		return mask
	}
	if m.Possible == "" {
		m.Possible = m.Online
	}
	if m.Present == "" {
		m.Present = m.Possible
	}
	online := mustList("online", m.Online)
	possible := mustList("possible", m.Possible)

	cpuDir := "sys/devices/system/cpu"
	t.WriteFile(cpuDir+"/online", m.Online+"\n")
	t.WriteFile(cpuDir+"/possible", m.Possible+"\n")
	t.WriteFile(cpuDir+"/present", m.Present+"\n")
	t.WriteFile(cpuDir+"/offline", possible.AndNot(online).String()+"\n")
	t.WriteFile(cpuDir+"/isolated", m.Isolated+"\n")
	if m.NohzFull != "" {
		t.WriteFile(cpuDir+"/nohz_full", m.NohzFull+"\n")
	}

	siblings := func(c int) cpumask.Mask {
		if m.Siblings == nil {
			return cpumask.New(c)
		}
		return mustList("siblings", m.Siblings(c)).And(online)
	}
	pkg := func(c int) int {
		if m.Package == nil {
			return 0
		}
		return m.Package(c)
	}
	pkgCPUs := map[int]*cpumask.Builder{}
	for c := range online.All() {
		b := pkgCPUs[pkg(c)]
		if b == nil {
			b = &cpumask.Builder{}
			pkgCPUs[pkg(c)] = b
		}
		b.Set(c)
	}
	pkgMasks := map[int]cpumask.Mask{}
	for p, b := range pkgCPUs {
		pkgMasks[p] = b.Mask()
	}

	for c := range possible.All() {
		dir := fmt.Sprintf("%s/cpu%d", cpuDir, c)
		if c != 0 {
			state := "0"
			if online.Contains(c) {
				state = "1"
			}
			t.WriteFile(dir+"/online", state+"\n")
		}
		if !online.Contains(c) {
			// The kernel removes topology/ and cache/ of an offline CPU.
			t.Mkdir(dir)
			continue
		}
		topo := dir + "/topology"
		sib := siblings(c).String() + "\n"
		if !m.NoSMTFiles {
			if !m.NoCoreCPUs {
				t.WriteFile(topo+"/core_cpus_list", sib)
			}
			t.WriteFile(topo+"/thread_siblings_list", sib)
		}
		p := pkg(c)
		t.WriteFile(topo+"/physical_package_id", strconv.Itoa(p)+"\n")
		t.WriteFile(topo+"/die_id", "0\n")
		t.WriteFile(topo+"/package_cpus_list", pkgMasks[p].String()+"\n")
		t.WriteFile(topo+"/core_siblings_list", pkgMasks[p].String()+"\n")
		t.WriteFile(topo+"/die_cpus_list", pkgMasks[p].String()+"\n")
		if m.LLC != nil {
			idx := dir + "/cache/index3"
			t.WriteFile(idx+"/level", "3\n")
			t.WriteFile(idx+"/type", "Unified\n")
			t.WriteFile(idx+"/shared_cpu_list", m.LLC(c)+"\n")
			t.WriteFile(dir+"/cache/index0/level", "1\n")
			t.WriteFile(dir+"/cache/index0/type", "Data\n")
			t.WriteFile(dir+"/cache/index0/shared_cpu_list", sib)
		}
	}

	if m.Nodes == nil {
		return
	}
	nodeDir := "sys/devices/system/node"
	var ids []int
	for _, n := range m.Nodes {
		ids = append(ids, n.ID)
	}
	nodeList := cpumask.New(ids...).String()
	t.WriteFile(nodeDir+"/online", nodeList+"\n")
	t.WriteFile(nodeDir+"/possible", nodeList+"\n")
	var hasCPU []int
	for _, n := range m.Nodes {
		cpus := mustList("node cpus", n.CPUs).And(online)
		if !cpus.IsEmpty() {
			hasCPU = append(hasCPU, n.ID)
		}
		dir := fmt.Sprintf("%s/node%d", nodeDir, n.ID)
		t.WriteFile(dir+"/cpulist", cpus.String()+"\n")
		t.WriteFile(dir+"/distance", joinInts(n.Distance)+"\n")
		for c := range cpus.All() {
			t.Symlink(path.Join("../../cpu", fmt.Sprintf("cpu%d", c)), fmt.Sprintf("%s/cpu%d", dir, c))
		}
	}
	t.WriteFile(nodeDir+"/has_cpu", cpumask.New(hasCPU...).String()+"\n")
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, " ")
}

// QEMUGuest is the machine of the e2e suite's 4-node guest: node n holds
// CPUs 2n and 2n+1, one socket per node, distances 10/12/20/22, so node
// 2's spread order is 4 5 | 6 7 | 0 1 | 2 3.
func QEMUGuest() Machine {
	return Machine{
		Online:  "0-7",
		Package: func(c int) int { return c / 2 },
		Nodes: []Node{
			{ID: 0, CPUs: "0-1", Distance: []int{10, 12, 20, 22}},
			{ID: 1, CPUs: "2-3", Distance: []int{12, 10, 22, 20}},
			{ID: 2, CPUs: "4-5", Distance: []int{20, 22, 10, 12}},
			{ID: 3, CPUs: "6-7", Distance: []int{22, 20, 12, 10}},
		},
	}
}

// LocalSpreadPatch is the 4-node, 16-CPU machine of the patch "cpumask:
// improve on cpumask_local_spread() locality" (patch 4/9 of the series in
// docs/kernel.md §7.1), whose table of cpumask_local_spread() results the
// tests reproduce: distances 10/30/50/70, nodes of 4, 2, 2 and 8 CPUs.
func LocalSpreadPatch() Machine {
	return Machine{
		Online: "0-15",
		Nodes: []Node{
			{ID: 0, CPUs: "0-3", Distance: []int{10, 50, 30, 70}},
			{ID: 1, CPUs: "4-5", Distance: []int{50, 10, 70, 30}},
			{ID: 2, CPUs: "6-7", Distance: []int{30, 70, 10, 50}},
			{ID: 3, CPUs: "8-15", Distance: []int{70, 30, 50, 10}},
		},
	}
}

// Tier is a level of a tiered distance table: nodes n and k with
// n/Size == k/Size (a quadrant, a socket) are Distance apart.
type Tier struct {
	Size, Distance int
}

// TieredDistances builds the distance table of a machine of nodes nodes
// from its tiers, smallest first: 10 to itself, the first tier two nodes
// share, else far. It is how multi-socket machines look (the EPYC 7763
// of docs/kernel.md §1.6: 11 within a quadrant of 4 nodes, 12 within a
// socket of 8, 32 across).
func TieredDistances(nodes, far int, tiers ...Tier) [][]int {
	rows := make([][]int, nodes)
	for n := range nodes {
		rows[n] = make([]int, nodes)
		for k := range nodes {
			rows[n][k] = far
			if k == n {
				rows[n][k] = 10
				continue
			}
			for _, t := range tiers {
				if n/t.Size == k/t.Size {
					rows[n][k] = t.Distance
					break
				}
			}
		}
	}
	return rows
}

// NewQEMUGuestNIC is a tree of QEMUGuest with a 4-pair virtio NIC on node
// 2 (IRQs 24-32), all 8 CPUs online, or with node 3's CPUs 6-7 offline
// when cpus6and7 is false.
func NewQEMUGuestNIC(tb testing.TB, cpus6and7 bool) *Tree {
	tb.Helper()
	tr := New(tb)
	m := QEMUGuest()
	online := []int{0, 1, 2, 3, 4, 5, 6, 7}
	if !cpus6and7 {
		m.Online, m.Possible = "0-5", "0-7"
		m.Nodes[3].CPUs = ""
		online = online[:6]
	}
	tr.AddMachine(m)
	tr.AddInterrupts(online)
	tr.AddVirtioNet(VirtioNet{BDF: "0000:41:00.0", Index: 0, Interface: "eth0", Pairs: 4, FirstIRQ: 24, NUMANode: 2})
	return tr
}
