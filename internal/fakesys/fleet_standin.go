package fakesys

// TEMPORARY STAND-IN: delete this file when internal/fakesys/fleet.go
// (the fleet corpus, written on another branch) lands. It has the
// corpus's API and three shapes named and drawn after three of the
// corpus's, so that bench/fixtures_test.go can be written and run
// before then; they are not the corpus's trees.

import (
	"fmt"
	"strconv"
)

// Shape is one host of the fleet corpus: a machine and its devices.
type Shape struct {
	Name   string        // short id
	What   string        // one line
	Banned string        // banned_cpus, list format; "" none
	Build  func(t *Tree) // writes machine, /proc/interrupts, /proc/irq, devices
}

// Shapes returns the stand-in's shapes.
func Shapes() []Shape {
	return []Shape{
		{Name: "scale-256", What: "the benchmarks' scale host (AddScaleHost): 256 CPUs SMT2 on 4 nodes, 64 mlx5 NICs of 128 queues",
			Build: func(t *Tree) { t.AddScaleHost() }},
		{Name: "nps2-4x16-mlx5", What: "2-socket EPYC in NPS2, 4 nodes of 16 CPUs without SMT (10/12/32), one 32-queue mlx5 NIC per node; L3 per 8-core CCD",
			Build: standinNPS2},
		{Name: "2s-32-two-nics", What: "2 sockets of 16 cores SMT2 (64 CPUs), a node each (10/21), L3 per socket; 32-queue ice on socket 0, 32-queue mlx5 on socket 1; CPU 0 and its sibling banned",
			Banned: "0,32", Build: standinTwoNICs},
	}
}

// standinCPUs lists CPUs 0..n-1, the columns of proc/interrupts.
func standinCPUs(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// standinNPS2 builds 64 CPUs without SMT: node n holds 16n..16n+15,
// package n/2, L3 per 8 CPUs; mlx5 NIC n (IRQs from 100+33n) on node n.
func standinNPS2(t *Tree) {
	t.tb.Helper()
	m := Machine{
		Online:  "0-63",
		Package: func(c int) int { return c / 32 },
		LLC:     func(c int) string { return fmt.Sprintf("%d-%d", c/8*8, c/8*8+7) },
	}
	dist := TieredDistances(4, 32, Tier{Size: 2, Distance: 12})
	for n := range 4 {
		m.Nodes = append(m.Nodes, Node{ID: n, Distance: dist[n], CPUs: fmt.Sprintf("%d-%d", 16*n, 16*n+15)})
	}
	t.AddMachine(m)
	t.AddInterrupts(standinCPUs(64))
	for n := range 4 {
		standinMLX5(t, fmt.Sprintf("0000:%02x:00.0", 0x41+0x40*n), n, "eth"+strconv.Itoa(n), 100+33*n, 32)
	}
}

// standinTwoNICs builds 2 sockets of 16 cores SMT2: node s holds cores
// 16s..16s+15 and their siblings 32 higher, one L3 per socket; ice on
// node 0, mlx5 on node 1.
func standinTwoNICs(t *Tree) {
	t.tb.Helper()
	m := Machine{
		Online:   "0-63",
		Siblings: func(c int) string { return fmt.Sprintf("%d,%d", c%32, c%32+32) },
		Package:  func(c int) int { return c % 32 / 16 },
		LLC: func(c int) string {
			s := c % 32 / 16 * 16
			return fmt.Sprintf("%d-%d,%d-%d", s, s+15, s+32, s+47)
		},
		Nodes: []Node{
			{ID: 0, CPUs: "0-15,32-47", Distance: []int{10, 21}},
			{ID: 1, CPUs: "16-31,48-63", Distance: []int{21, 10}},
		},
	}
	t.AddMachine(m)
	t.AddInterrupts(standinCPUs(64))
	bdf := "0000:17:00.0"
	specs := []IRQSpec{{Number: 60, Name: "ice-" + bdf + ":misc"}}
	for k := range 32 {
		specs = append(specs, IRQSpec{Number: 61 + k, Name: "ice-eth0-TxRx-" + strconv.Itoa(k)})
	}
	t.AddMSIXDevice(PCIDevice{BDF: bdf, NUMANode: 0, Driver: "ice", Class: "0x020000", Interfaces: []string{"eth0"}}, specs...)
	standinMLX5(t, "0000:b1:00.0", 1, "eth1", 100, 32)
}

// standinMLX5 adds an mlx5 NIC with mlx5_async0 at IRQ first and
// queues completion IRQs after it.
func standinMLX5(t *Tree, bdf string, node int, ifname string, first, queues int) {
	t.tb.Helper()
	specs := []IRQSpec{{Number: first, Name: "mlx5_async0@pci:" + bdf, Node: node}}
	for k := range queues {
		specs = append(specs, IRQSpec{Number: first + 1 + k, Name: fmt.Sprintf("mlx5_comp%d@pci:%s", k, bdf), Node: node})
	}
	t.AddMSIXDevice(PCIDevice{BDF: bdf, NUMANode: node, Driver: "mlx5_core", Class: "0x020000", Interfaces: []string{ifname}}, specs...)
}
