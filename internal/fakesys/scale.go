package fakesys

import "fmt"

// Scale sizes the benchmarks' host: 256 CPUs (SMT2) on 4 nodes, and 64
// mlx5 NICs of 128 queue IRQs each, 8192 IRQs from ScaleFirstIRQ on.
const (
	ScaleCPUs     = 256
	ScaleNodes    = 4
	ScaleDevices  = 64
	ScalePerDev   = 128
	ScaleFirstIRQ = 100
)

// ScaleBDF is the PCI address of the scale host's d-th NIC.
func ScaleBDF(d int) string { return fmt.Sprintf("0000:%02x:00.0", d+1) }

// AddScaleHost writes the scale host: the machine, /proc/interrupts and
// /proc/irq for every IRQ (queue k of NIC d starts on CPU
// (d*128+k) % 256), and the NICs, NIC d on node d % 4.
func (t *Tree) AddScaleHost() {
	t.tb.Helper()
	per := ScaleCPUs / ScaleNodes / 2 // cores per node
	half := ScaleCPUs / 2
	m := Machine{
		Online:   fmt.Sprintf("0-%d", ScaleCPUs-1),
		Siblings: func(c int) string { return fmt.Sprintf("%d,%d", c%half, c%half+half) },
		Package:  func(c int) int { return (c % half) / per / 2 },
	}
	dist := TieredDistances(ScaleNodes, 32, Tier{Size: 2, Distance: 12})
	for n := range ScaleNodes {
		m.Nodes = append(m.Nodes, Node{ID: n, Distance: dist[n],
			CPUs: fmt.Sprintf("%d-%d,%d-%d", n*per, n*per+per-1, half+n*per, half+n*per+per-1)})
	}
	t.AddMachine(m)
	cpus := make([]int, ScaleCPUs)
	for i := range cpus {
		cpus[i] = i
	}
	t.AddInterrupts(cpus)
	var specs []IRQSpec
	for d := range ScaleDevices {
		bdf := ScaleBDF(d)
		for k := range ScalePerDev {
			n := ScaleFirstIRQ + d*ScalePerDev + k
			specs = append(specs, IRQSpec{
				Number: n, Name: fmt.Sprintf("mlx5_comp%d@pci:%s", k, bdf), Chip: "IR-PCI-MSIX-" + bdf,
				HWIRQ: fmt.Sprint(k, "-edge"), Affinity: fmt.Sprint((d*ScalePerDev + k) % ScaleCPUs),
			})
		}
	}
	t.AddIRQs(specs...)
	for d := range ScaleDevices {
		irqs := make([]int, ScalePerDev)
		for k := range irqs {
			irqs[k] = ScaleFirstIRQ + d*ScalePerDev + k
		}
		t.AddPCIDevice(PCIDevice{BDF: ScaleBDF(d), Driver: "mlx5_core", Class: "0x020000", NUMANode: d % ScaleNodes,
			MSIIRQs: irqs, Interfaces: []string{fmt.Sprintf("eth%d", d)}})
	}
}
