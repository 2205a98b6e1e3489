package fakesys_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/pkg/topology"
)

func TestShapesIndex(t *testing.T) {
	shapes := fakesys.Shapes()
	if len(shapes) < 14 {
		t.Errorf("%d shapes, want at least 14", len(shapes))
	}
	seen := map[string]bool{}
	for _, s := range shapes {
		if seen[s.Name] {
			t.Errorf("shape name %q twice", s.Name)
		}
		seen[s.Name] = true
		if s.Name == "" || s.What == "" || s.Build == nil {
			t.Errorf("shape %q: empty Name, What or Build", s.Name)
		}
	}
	if !seen["nps2-4x16-mlx5"] || !seen["scale-256"] {
		t.Error("the bug report's host or the scale host is missing")
	}
}

// TestShapes builds every shape and reads it back as the daemon does.
func TestShapes(t *testing.T) {
	shapes := fakesys.Shapes()
	same, exp := fakesys.ExpectedShapes()
	if len(same) != len(shapes) {
		t.Fatalf("ExpectedShapes has %d shapes, Shapes %d", len(same), len(shapes))
	}
	for i, s := range shapes {
		if same[i].Name != s.Name {
			t.Fatalf("shape %d is %q, its expectation %q's", i, s.Name, same[i].Name)
		}
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			checkShape(t, s, exp[i], false)
		})
	}
}

// TestRandomShapes checks 50 random hosts, and the invariants they
// promise: an SMT sibling group within one node, package and LLC.
func TestRandomShapes(t *testing.T) {
	for seed := range uint64(50) {
		s := fakesys.RandomShape(rand.New(rand.NewPCG(seed, 7)))
		same, e := fakesys.ExpectedRandomShape(rand.New(rand.NewPCG(seed, 7)))
		if same.Name != s.Name || same.Banned != s.Banned {
			t.Fatalf("seed %d: RandomShape gave %q, the expectation is %q's", seed, s.Name, same.Name)
		}
		t.Run(fmt.Sprintf("%d-%s", seed, s.Name), func(t *testing.T) {
			t.Parallel()
			checkShape(t, s, e, true)
		})
	}
}

func checkShape(t *testing.T, s fakesys.Shape, e fakesys.Expected, random bool) {
	tree := fakesys.New(t)
	s.Build(tree)
	snap, err := topology.NewFS(tree.Sys()).ReadDetail()
	if err != nil {
		t.Fatal(err)
	}
	checkTopology(t, snap, e, random)

	inv, err := inventory.FS{Proc: tree.Proc(), Sys: tree.Sys()}.Read()
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Devices) != len(e.Devices) {
		t.Errorf("inventory has %d devices, want %d", len(inv.Devices), len(e.Devices))
	}
	for bdf, want := range e.Devices {
		d, ok := inv.Device(bdf)
		if !ok {
			t.Errorf("%s: not in the inventory", bdf)
			continue
		}
		if d.Driver != want.Driver || d.NUMANode != want.Node || !slices.Equal(d.Interfaces, want.Interfaces) {
			t.Errorf("%s: driver %q node %d interfaces %v, want %q %d %v", bdf, d.Driver, d.NUMANode, d.Interfaces, want.Driver, want.Node, want.Interfaces)
		}
		irqs := inv.DeviceIRQs(bdf)
		managed := 0
		for _, q := range irqs {
			if q.Managed {
				managed++
			}
		}
		if len(irqs) != want.IRQs || managed != want.Managed {
			t.Errorf("%s: %d IRQs, %d managed; want %d, %d", bdf, len(irqs), managed, want.IRQs, want.Managed)
		}
	}

	cfg, err := config.Parse("shape", fmt.Appendf(nil, "banned_cpus: %q\n", s.Banned))
	if err != nil {
		t.Fatalf("Banned %q: %v", s.Banned, err)
	}
	if !cfg.BannedCPUs.IsSubsetOf(snap.Online()) || (s.Banned != "") == cfg.BannedCPUs.IsEmpty() {
		t.Errorf("Banned %q is not a few online CPUs", s.Banned)
	}
	plan := policy.Compute(snap, inv, cfg, nil, policy.Memory{}, policy.Balancing{})
	if plan.Allowed.Intersects(cfg.BannedCPUs) {
		t.Errorf("the plan allows banned CPUs %s", plan.Allowed.And(cfg.BannedCPUs))
	}
	for _, d := range plan.Devices {
		want, ok := e.Devices[d.PCI]
		if !ok {
			continue
		}
		queues := 0
		for _, q := range d.IRQs {
			if q.Role == policy.RoleQueue {
				queues++
			}
		}
		if queues != want.Queues {
			t.Errorf("%s (%s): %d queue IRQs, want %d", d.PCI, d.Driver, queues, want.Queues)
		}
	}
}

func checkTopology(t *testing.T, snap *topology.Snapshot, e fakesys.Expected, random bool) {
	t.Helper()
	if got := snap.Online().Weight(); got != len(e.Siblings) {
		t.Fatalf("%d CPUs online, want %d", got, len(e.Siblings))
	}
	nodes := snap.Nodes()
	if len(nodes) != len(e.Nodes) {
		t.Errorf("%d nodes, want %d", len(nodes), len(e.Nodes))
	}
	nodeCPUs := map[int]cpumask.Mask{}
	for i, n := range nodes {
		nodeCPUs[n.ID] = n.CPUs
		if want, ok := e.Nodes[n.ID]; !ok || n.CPUs.String() != want {
			t.Errorf("node %d: CPUs %q, want %q", n.ID, n.CPUs, want)
		}
		for j, d := range n.Distance {
			if d != nodes[j].Distance[i] || (i == j) != (d == 10) {
				t.Errorf("distance %d-%d is %d, %d back: want symmetric, 10 only to itself", n.ID, nodes[j].ID, d, nodes[j].Distance[i])
			}
		}
	}
	for c := range snap.Online().All() {
		cpu, _ := snap.CPU(c)
		if cpu.Siblings.String() != e.Siblings[c] || cpu.LLC.String() != e.LLC[c] || cpu.Package != e.Package[c] {
			t.Errorf("CPU %d: siblings %q LLC %q package %d, want %q %q %d",
				c, cpu.Siblings, cpu.LLC, cpu.Package, e.Siblings[c], e.LLC[c], e.Package[c])
			continue
		}
		for t2 := range cpu.Siblings.All() {
			sib, _ := snap.CPU(t2)
			if sib.Node != cpu.Node || sib.Package != cpu.Package {
				t.Errorf("CPU %d's sibling %d is on node %d package %d, it on %d %d", c, t2, sib.Node, sib.Package, cpu.Node, cpu.Package)
			}
		}
		if random && !cpu.LLC.IsSubsetOf(nodeCPUs[cpu.Node]) {
			t.Errorf("CPU %d: LLC %s leaves node %d", c, cpu.LLC, cpu.Node)
		}
		if random && !cpu.LLC.IsEmpty() && !cpu.Siblings.IsSubsetOf(cpu.LLC) {
			t.Errorf("CPU %d: siblings %s not within LLC %s", c, cpu.Siblings, cpu.LLC)
		}
	}
}
