package measure

import (
	"math"
	"testing"

	"github.com/numairqd/numairqd/test/e2e/guestinfo"
)

// A 2-node guest, CPUs 0-1 and 2-3, distance 20; one virtio-net with 2
// tx queues whose completion IRQs fire on CPUs 0 and 2.
func txState(xps0, xps1 string) guestinfo.State {
	return guestinfo.State{
		Online: []int{0, 1, 2, 3},
		Nodes:  []guestinfo.Node{{ID: 0, CPUs: []int{0, 1}, Distance: []int{10, 20}}, {ID: 1, CPUs: []int{2, 3}, Distance: []int{20, 10}}},
		IRQs: []guestinfo.IRQ{
			{Number: 31, Actions: []string{"virtio0-output.0"}, Effective: "0"},
			{Number: 33, Actions: []string{"virtio0-output.1"}, Effective: "2"},
		},
		PCI: []guestinfo.PCIDevice{{Address: "0000:41:00.0", MSIIRQs: []int{31, 33}}},
		Net: []guestinfo.NetDevice{{Name: "eth0", PCI: "0000:41:00.0", TxQueues: 2, XPS: []string{xps0, xps1}}},
	}
}

// oneRun is a run from cpu whose completions fired n0 times on CPU 0
// and n2 times on CPU 2.
func oneRun(cpu int, n0, n2 uint64) guestinfo.TxRun {
	s := func(up float64, a, b uint64) guestinfo.LoadSample {
		return guestinfo.LoadSample{UptimeS: up, IRQCPUs: []int{0, 1, 2, 3}, IRQs: []guestinfo.IRQCounts{
			{Number: 31, Actions: []string{"virtio0-output.0"}, Counts: []uint64{a, 0, 0, 0}},
			{Number: 33, Actions: []string{"virtio0-output.1"}, Counts: []uint64{0, 0, b, 0}},
		}, CPUs: []guestinfo.CPUTicks{{CPU: cpu, Idle: uint64(100 * up), SoftIRQ: uint64(10 * up)}}}
	}
	return guestinfo.TxRun{CPUs: []int{cpu}, Sent: []uint64{n0 + n2}, Errors: []uint64{0}, ElapsedS: 2, Before: s(1, 0, 0), After: s(3, n0, n2)}
}

func TestTransmitFigures(t *testing.T) {
	// Crossed: XPS sends CPU 0's datagrams on tx-1, whose IRQ is on CPU
	// 2, and CPU 2's on tx-0.
	st := TransmitState{Name: "leave", State: txState("c", "3"),
		PerCPU: []guestinfo.TxRun{oneRun(0, 0, 30), oneRun(2, 10, 0)}, All: oneRun(1, 5, 5)}
	f, err := st.Figures("0000:41:00.0")
	if err != nil {
		t.Fatal(err)
	}
	if f.Aligned != 0 || f.Queues != 2 || f.Uncovered != 0 {
		t.Errorf("aligned %d of %d, uncovered %d; want 0 of 2, 0", f.Aligned, f.Queues, f.Uncovered)
	}
	if f.Completions != 40 || f.MeanDistance != 20 || f.Local != 0 {
		t.Errorf("completions %d, mean distance %v, local %v; want 40, 20, 0", f.Completions, f.MeanDistance, f.Local)
	}
	// 10 soft ticks of 110 each second.
	if want := 100 * 10.0 / 110; len(f.Soft) != 1 || math.Abs(f.SoftMax-want) > 1e-9 || f.SentPS != 5 {
		t.Errorf("soft %+v max %v (want %v), sent/s %v", f.Soft, f.SoftMax, want, f.SentPS)
	}
	// Aligned: every completion local, distance 10.
	st = TransmitState{Name: "follow", State: txState("3", "c"),
		PerCPU: []guestinfo.TxRun{oneRun(0, 30, 0), oneRun(2, 0, 10)}, All: oneRun(1, 5, 5)}
	if f, err = st.Figures("0000:41:00.0"); err != nil || f.Aligned != 2 || f.MeanDistance != 10 || f.Local != 1 {
		t.Errorf("follow: %+v, %v", f, err)
	}
	st.PerCPU[0].CPUs = []int{0, 1}
	if _, err := st.Figures("0000:41:00.0"); err == nil {
		t.Error("a one-CPU run from two CPUs was taken")
	}
}
