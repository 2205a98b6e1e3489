package measure

import (
	"fmt"
	"math"
	"testing"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/test/e2e/guestinfo"
)

func TestFleetQueue(t *testing.T) {
	for name, want := range map[string]int{
		"mlx5_comp7@pci:0000:41:00.0":    7,
		"mlx5_sf_comp2@pci:0000:41:00.2": 2,
		"ice-eth0-TxRx-11":               11,
		"i40e-ens1f0-rx-3":               3,
		"eth0-Tx-Rx-4":                   4,
		"mana_q5@pci:7870:00:00.0":       5,
		"mlx4-3@0000:05:00.0":            2,
		"nvme0q1":                        0,
		"nvme12q16":                      15,
		"hns3-0000:7d:00.0-TxRx-6":       3,
		"virtio2-req.3":                  3,
		"virtio0-input.2":                2,
		"virtio3-output.0":               0,
		"mlx5_async0@pci:0000:41:00.0":   -1,
		"ice-0000:81:00.0:misc":          -1,
		"nvme0q0":                        -1,
		"virtio0-config":                 -1,
		"mana_hwc@pci:7870:00:00.0":      -1,
		"timer":                          -1,
	} {
		got, ok := FleetQueue(name)
		if !ok {
			got = -1
		}
		if got != want {
			t.Errorf("FleetQueue(%q) = %d, want %d", name, got, want)
		}
	}
}

// fleetShape is a machine of 3 nodes: node 0 CPUs 0-1 (SMT siblings,
// one LLC), node 1 CPUs 2-3 (one core each, one LLC), node 2 memory
// only; distances 10/20, node 2 at 15 from node 1 and 25 from node 0.
// The NIC has queues 0-4 and a control IRQ 9.
func fleetShape(node int, banned string) FleetShape {
	s := FleetShape{
		Name:   "test",
		Banned: banned,
		Machine: FleetMachine{
			Online: []int{0, 1, 2, 3},
			Nodes: []guestinfo.Node{
				{ID: 0, CPUs: []int{0, 1}, Distance: []int{10, 20, 25}},
				{ID: 1, CPUs: []int{2, 3}, Distance: []int{20, 10, 15}},
				{ID: 2, Distance: []int{25, 15, 10}},
			},
			CPUs: []FleetCPU{{0, 0, 0}, {1, 0, 0}, {2, 2, 2}, {3, 3, 2}},
		},
		Devices: []FleetDevice{{PCI: "0000:41:00.0", Driver: "mlx5_core", Node: node,
			IRQs: []FleetIRQ{{IRQ: 9, Name: "mlx5_async0@pci:0000:41:00.0"}}}},
	}
	for k := range 5 {
		s.Devices[0].IRQs = append(s.Devices[0].IRQs, FleetIRQ{IRQ: 10 + k, Name: fmt.Sprintf("mlx5_comp%d@pci:0000:41:00.0", k)})
	}
	return s
}

func TestHopOrder(t *testing.T) {
	tp := fleetShape(0, "").Topo()
	all := cpumask.New(0, 1, 2, 3)
	for _, tt := range []struct {
		node    int
		allowed cpumask.Mask
		want    string
	}{
		{0, all, "[0 1 2 3]"},
		{1, all, "[2 3 0 1]"},
		{2, all, "[2 3 0 1]"}, // memory-only: from node 1, its nearest with CPUs
		{-1, cpumask.New(1, 3), "[1 3]"},
		{1, cpumask.New(0, 1, 3), "[3 0 1]"},
	} {
		if got := fmt.Sprint(tp.HopOrder(tt.node, tt.allowed)); got != tt.want {
			t.Errorf("HopOrder(%d, %s) = %s, want %s", tt.node, tt.allowed, got, tt.want)
		}
	}
}

func TestFleetFigures(t *testing.T) {
	s := fleetShape(1, "3")
	// Drivers on node 1 with CPU 3 banned: 2 0 1 2 0.
	drv, err := s.DriverSpread()
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for k := range 5 {
		got = append(got, drv[10+k].First())
	}
	if fmt.Sprint(got) != "[2 0 1 2 0]" {
		t.Fatalf("DriverSpread = %v", got)
	}
	if _, ok := drv[9]; ok {
		t.Errorf("DriverSpread places the control IRQ")
	}
	s.Runs = []FleetPlacer{{Placer: "irqbalance", Affinity: map[int]string{
		9: "0", 10: "2", 11: "2", 12: "3", 13: "0-1", 14: "",
	}}}
	f, err := s.Figures("irqbalance")
	if err != nil {
		t.Fatal(err)
	}
	// 10, 11 on CPU 2 (10), 12 on banned CPU 3 (10), 13 half on 0 and
	// half on 1 (20); 14 has no mask. Drivers put 11 on CPU 0 and 12 on
	// CPU 1 (20), nearer, but 13 on CPU 2 (10): one farther.
	want := FleetFigures{Queues: 4, MeanDist: 12.5, WorstDist: 20, MaxPerCPU: 2, MaxPerCore: 2, MaxPerLLC: 3,
		Farther: 1, MultiCPU: 1, OnExcluded: 1, Missing: 1}
	if fmt.Sprint(f) != fmt.Sprint(want) {
		t.Errorf("Figures = %+v\nwant      %+v", f, want)
	}
	d, err := s.Figures("drivers")
	if err != nil {
		t.Fatal(err)
	}
	// 10 20 20 10 20; CPUs 0 and 1 share a core.
	if d.Farther != 0 || d.Queues != 5 || d.MaxPerCPU != 2 || d.MaxPerCore != 3 || d.MeanDist != 16 || d.WorstDist != 20 {
		t.Errorf("drivers' figures = %+v", d)
	}
	// A placer that stacks everything on node 0 is farther for the
	// queues the drivers keep on node 1 (0 and 3).
	s.Runs = []FleetPlacer{{Placer: "numairqd", Affinity: map[int]string{10: "0", 11: "0", 12: "1", 13: "1", 14: "0"}}}
	if f, _ := s.Figures("numairqd"); f.Farther != 2 {
		t.Errorf("Farther = %d, want 2", f.Farther)
	}
	if _, err := s.Figures("nobody"); err == nil {
		t.Errorf("no error for a placer that did not run")
	}
	noNode := fleetShape(-1, "")
	noNode.Runs = []FleetPlacer{{Placer: "numairqd", Affinity: map[int]string{10: "0"}}}
	if f, _ := noNode.Figures("numairqd"); !math.IsNaN(f.MeanDist) || f.NoNode != 1 || f.Missing != 4 {
		t.Errorf("no-node figures = %+v", f)
	}
}
