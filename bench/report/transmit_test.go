package main

import (
	"strings"
	"testing"

	"github.com/numairqd/numairqd/bench/measure"
	"github.com/numairqd/numairqd/test/e2e/guestinfo"
)

func TestTransmitSection(t *testing.T) {
	// A 2-CPU guest on 2 nodes, one tx queue whose XPS mask is CPU 0
	// (hex 1) and whose completion IRQ fires on CPU 1: misaligned, CPU 1
	// uncovered; CPU 0 sends 10 datagrams, completed on CPU 1.
	st := guestinfo.State{
		Online: []int{0, 1},
		Nodes:  []guestinfo.Node{{ID: 0, CPUs: []int{0}, Distance: []int{10, 21}}, {ID: 1, CPUs: []int{1}, Distance: []int{21, 10}}},
		IRQs:   []guestinfo.IRQ{{Number: 31, Actions: []string{"virtio0-output.0"}, Effective: "1"}},
		PCI:    []guestinfo.PCIDevice{{Address: "0000:41:00.0", MSIIRQs: []int{31}}},
		Net:    []guestinfo.NetDevice{{Name: "eth0", PCI: "0000:41:00.0", TxQueues: 1, XPS: []string{"1"}}},
	}
	sample := func(up float64, n uint64) guestinfo.LoadSample {
		return guestinfo.LoadSample{UptimeS: up, IRQCPUs: []int{0, 1},
			IRQs: []guestinfo.IRQCounts{{Number: 31, Actions: []string{"virtio0-output.0"}, Counts: []uint64{0, n}}},
			CPUs: []guestinfo.CPUTicks{{CPU: 0, Idle: uint64(90 * up), SoftIRQ: uint64(10 * up)}, {CPU: 1, Idle: uint64(100 * up)}}}
	}
	run := guestinfo.TxRun{CPUs: []int{0}, Sent: []uint64{10}, Errors: []uint64{0}, ElapsedS: 1, Before: sample(1, 0), After: sample(2, 10)}
	tr := &measure.TransmitRun{Title: "test guest", PCI: "0000:41:00.0", Rate: 10, SecondsPerCPU: 1, AllRate: 10, AllSeconds: 1,
		States: []measure.TransmitState{{Name: "leave", State: st, PerCPU: []guestinfo.TxRun{run}, All: run}}}
	w := &writer{}
	w.transmit(tr)
	out := w.body.String()
	for _, want := range []string{
		"## Transmit: XPS and completion IRQs",
		"| numairqd, `xps: leave` | 0 of 1 | 1 | 21.00 | 0% | 10 | 10.0 | 5.0 | 10 | 0:10.0 1:0.0 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	w = &writer{}
	w.transmit(nil)
	if w.body.Len() != 0 {
		t.Errorf("no transmit run wrote %q", w.body.String())
	}
}
