package policy_test

// The tests in this file check numa-hop placement against references
// that share no code with the planner or with topology's hop masks: the
// cpumask_local_spread() table published with the kernel series
// "sched/topology: NUMA-aware CPU spreading", and a model of the
// kernel's order written here from the distance table alone.

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/internal/fakesys/fakeplan"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/policy"
)

// oneNIC is m with a single virtio-net of pairs queue pairs on node.
func oneNIC(t *testing.T, m fakesys.Machine, node, pairs int) *fakesys.Tree {
	t.Helper()
	tree := fakesys.New(t)
	tree.AddMachine(m)
	tree.AddInterrupts(fakesys.MustMask(t, m.Online).CPUs())
	tree.AddVirtioNet(fakesys.VirtioNet{BDF: "0000:41:00.0", Index: 0, Interface: "eth0",
		Pairs: pairs, FirstIRQ: 24, NUMANode: node})
	return tree
}

// plannedQueues returns the CPU of each planned queue index, in index
// order, of the plan's device 0000:41:00.0.
func plannedQueues(t *testing.T, p *policy.Plan) (policy.Device, []int) {
	t.Helper()
	for _, d := range p.Devices {
		if d.PCI != "0000:41:00.0" {
			continue
		}
		byQueue := map[int]int{}
		for _, q := range d.IRQs {
			if q.Queue < 0 || q.Managed {
				continue
			}
			if q.Planned.Weight() != 1 {
				t.Fatalf("queue %d planned on %q, want one CPU", q.Queue, q.Planned)
			}
			if c, ok := byQueue[q.Queue]; ok && c != q.Planned.First() {
				t.Fatalf("queue %d split over CPUs %d and %d", q.Queue, c, q.Planned.First())
			}
			byQueue[q.Queue] = q.Planned.First()
		}
		out := make([]int, len(byQueue))
		for i := range out {
			c, ok := byQueue[i]
			if !ok {
				t.Fatalf("queue indices %v are not 0..%d", byQueue, len(out)-1)
			}
			out[i] = c
		}
		return d, out
	}
	t.Fatal("device 0000:41:00.0 not in the plan")
	return policy.Device{}, nil
}

// kernelOrder is the order of cpumask_local_spread(i, node) for i = 0,
// 1, ..., worked out from the machine description by the kernel's rules
// rather than by topology's code:
//
//   - sched_init_numa() builds hop mask h of node j from row j of the
//     distance table: every node k with node_distance(j, k) <= level h,
//     where the levels are the distinct distances between nodes with
//     CPUs. A node k at distance d is in no mask below level d and in
//     every mask from d on, so hop ring h is exactly the nodes at
//     distance level h;
//   - sched_numa_find_nth_cpu() and for_each_numa_hop_mask() walk the
//     rings nearest first, CPUs ascending within a ring.
//
// So the order is every online CPU sorted by (distance from node to the
// CPU's node, CPU id). A CPU-less node has no masks; since 2023 the
// kernel uses the nearest node with CPUs instead (numa_nearest_node,
// lowest id on ties). Distance column k is the k-th node in id order.
// allowed restricts the order, as the planner's Spread(node, allowed).
func kernelOrder(t *testing.T, m fakesys.Machine, node int, allowed cpumask.Mask) []int {
	t.Helper()
	nodes := slices.Clone(m.Nodes)
	slices.SortFunc(nodes, func(a, b fakesys.Node) int { return cmp.Compare(a.ID, b.ID) })
	online := fakesys.MustMask(t, m.Online)
	col := map[int]int{} // node id -> distance column
	for k, n := range nodes {
		col[n.ID] = k
	}
	row := -1
	for k, n := range nodes {
		if n.ID == node {
			row = k
		}
	}
	if row < 0 {
		t.Fatalf("node %d is not in the machine", node)
	}
	if fakesys.MustMask(t, nodes[row].CPUs).And(online).IsEmpty() {
		best := -1
		for k, n := range nodes {
			if fakesys.MustMask(t, n.CPUs).And(online).IsEmpty() {
				continue
			}
			if best < 0 || nodes[row].Distance[k] < nodes[row].Distance[best] {
				best = k
			}
		}
		row = best
	}
	type placed struct{ dist, cpu int }
	var all []placed
	for _, n := range nodes {
		for c := range fakesys.MustMask(t, n.CPUs).And(online).And(allowed).All() {
			all = append(all, placed{nodes[row].Distance[col[n.ID]], c})
		}
	}
	slices.SortFunc(all, func(a, b placed) int {
		return cmp.Or(cmp.Compare(a.dist, b.dist), cmp.Compare(a.cpu, b.cpu))
	})
	out := make([]int, len(all))
	for i, p := range all {
		out[i] = p.cpu
	}
	return out
}

// seedFourNodeTable is that patch's table of cpumask_local_spread(i,
// node) for i = 0..15, one row per node, as published.
var seedFourNodeTable = map[int]string{
	0: "0   1   2   3   6   7   4   5   8   9  10  11  12  13  14  15",
	1: "4   5   8   9  10  11  12  13  14  15   0   1   2   3   6   7",
	2: "6   7   0   1   2   3   8   9  10  11  12  13  14  15   4   5",
	3: "8   9  10  11  12  13  14  15   4   5   6   7   0   1   2   3",
}

func ints(t *testing.T, s string) []int {
	t.Helper()
	var out []int
	for _, f := range strings.Fields(s) {
		var n int
		if _, err := fmt.Sscan(f, &n); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

// TestReferenceModelMatchesSeedTable checks the model against the
// kernel's published numbers before it is trusted below.
func TestReferenceModelMatchesSeedTable(t *testing.T) {
	m := fakesys.LocalSpreadPatch()
	for node, row := range seedFourNodeTable {
		if got, want := kernelOrder(t, m, node, fakesys.MustMask(t, m.Online)), ints(t, row); !slices.Equal(got, want) {
			t.Errorf("model order of node %d = %v, published %v", node, got, want)
		}
	}
}

// TestReferenceSeedTable plans a NIC on each node of the seed machine
// with 15 queue pairs (fewer than the 16 CPUs, so auto picks numa-hop)
// and checks queue i against the published cpumask_local_spread(i, node).
func TestReferenceSeedTable(t *testing.T) {
	for node, row := range seedFourNodeTable {
		t.Run(fmt.Sprintf("node %d", node), func(t *testing.T) {
			d, got := plannedQueues(t, fakeplan.Plan(t, oneNIC(t, fakesys.LocalSpreadPatch(), node, 15), nil))
			if d.Policy != config.PolicyNUMAHop {
				t.Fatalf("policy = %s, want numa-hop", d.Policy)
			}
			if want := ints(t, row)[:15]; !slices.Equal(got, want) {
				t.Errorf("queue CPUs = %v\npublished  %v", got, want)
			}
		})
	}
}

// TestReferenceModel plans one NIC per node of several machines, each
// NIC with one queue pair fewer than the allowed CPUs (so auto picks
// numa-hop), and checks queue i against the model's i-th CPU.
func TestReferenceModel(t *testing.T) {
	for _, tc := range []struct {
		name   string
		m      fakesys.Machine
		banned string
	}{
		{"qemu guest 10/12/20/22", fakesys.QEMUGuest(), ""},
		{"qemu guest, CPUs 1 and 4 banned", fakesys.QEMUGuest(), "1,4"},
		{"seed 4-node", fakesys.LocalSpreadPatch(), ""},
		{"levels without new CPUs", fakesys.Machine{Online: "0-5", Nodes: []fakesys.Node{
			{ID: 0, CPUs: "0-1", Distance: []int{10, 12, 20}},
			{ID: 1, CPUs: "2-3", Distance: []int{12, 10, 15}},
			{ID: 2, CPUs: "4-5", Distance: []int{20, 15, 10}},
		}}, ""},
		{"asymmetric", fakesys.Machine{Online: "0-3", Nodes: []fakesys.Node{
			{ID: 0, CPUs: "0-1", Distance: []int{10, 20}},
			{ID: 1, CPUs: "2-3", Distance: []int{30, 10}},
		}}, ""},
		{"sparse node ids", fakesys.Machine{Online: "0-5", Nodes: []fakesys.Node{
			{ID: 0, CPUs: "0-1", Distance: []int{10, 30, 20}},
			{ID: 2, CPUs: "2-3", Distance: []int{30, 10, 20}},
			{ID: 5, CPUs: "4-5", Distance: []int{20, 20, 10}},
		}}, ""},
		{"memory-only node", fakesys.Machine{Online: "0-7", Nodes: []fakesys.Node{
			{ID: 0, CPUs: "0-3", Distance: []int{10, 20, 30}},
			{ID: 1, CPUs: "", Distance: []int{20, 10, 15}},
			{ID: 2, CPUs: "4-7", Distance: []int{30, 15, 10}},
		}}, ""},
		{"offline CPUs", fakesys.Machine{Online: "0-2,4-6", Possible: "0-7", Nodes: []fakesys.Node{
			{ID: 0, CPUs: "0-3", Distance: []int{10, 20}},
			{ID: 1, CPUs: "4-7", Distance: []int{20, 10}},
		}}, ""},
	} {
		for _, n := range tc.m.Nodes {
			t.Run(fmt.Sprintf("%s/node %d", tc.name, n.ID), func(t *testing.T) {
				cfg := config.Default()
				if tc.banned != "" {
					cfg = parseReferenceConfig(t, fmt.Sprintf("banned_cpus: %q\n", tc.banned))
				}
				allowed := fakesys.MustMask(t, tc.m.Online)
				if tc.banned != "" {
					allowed = allowed.AndNot(fakesys.MustMask(t, tc.banned))
				}
				want := kernelOrder(t, tc.m, n.ID, allowed)
				want = want[:len(want)-1]
				d, got := plannedQueues(t, fakeplan.Plan(t, oneNIC(t, tc.m, n.ID, len(want)), cfg))
				if d.Policy != config.PolicyNUMAHop {
					t.Fatalf("policy = %s, want numa-hop", d.Policy)
				}
				if !slices.Equal(got, want) {
					t.Errorf("queue CPUs = %v\nmodel      %v", got, want)
				}
			})
		}
	}
}

func parseReferenceConfig(t *testing.T, yaml string) *config.Config {
	t.Helper()
	cfg, err := config.Parse("reference.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
