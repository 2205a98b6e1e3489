package guestinfo

import (
	"fmt"
	"strings"
	"testing"
)

// xpsState is a 4-CPU guest with one virtio-net of 2 queue pairs at
// 0000:41:00.0: output.0 (IRQ 31) fires on CPU 0, output.1 (IRQ 33) on
// CPU 3.
func xpsState(xps ...string) State {
	return State{
		Online: []int{0, 1, 2, 3},
		IRQs: []IRQ{
			{Number: 30, Actions: []string{"virtio0-input.0"}, Effective: "0"},
			{Number: 31, Actions: []string{"virtio0-output.0"}, Effective: "0"},
			{Number: 33, Actions: []string{"virtio0-output.1"}, Effective: "3"},
			{Number: 40, Actions: []string{"virtio1-output.0"}, Effective: "1"}, // another device
		},
		PCI: []PCIDevice{{Address: "0000:41:00.0", MSIIRQs: []int{29, 30, 31, 32, 33}}},
		Net: []NetDevice{{Name: "eth0", PCI: "0000:41:00.0", TxQueues: 2, XPS: xps}},
	}
}

func TestXPSAligned(t *testing.T) {
	// The driver's stride map: CPUs 0-1 on tx-0, 2-3 on tx-1.
	r := xpsState("3", "c").XPS("0000:41:00.0")
	if !r.OK() || r.Aligned() != 2 || len(r.Uncovered) != 0 {
		t.Fatalf("want aligned and covered: %s", r)
	}
	if r.Queues[1].IRQ != 33 || r.Queues[1].XPS != "2-3" || r.Queues[1].Effective != "3" {
		t.Errorf("tx-1: %+v", r.Queues[1])
	}
}

func TestXPSMisalignedAndUncovered(t *testing.T) {
	// tx-1's mask misses CPU 3, where its completions fire; CPU 3 is in
	// no mask at all.
	r := xpsState("3", "4").XPS("0000:41:00.0")
	if r.OK() || r.Aligned() != 1 || len(r.Uncovered) != 1 || r.Uncovered[0] != 3 {
		t.Fatalf("want tx-1 misaligned and CPU 3 uncovered: %s", r)
	}
	if !strings.Contains(r.String(), "aligned 1/2 uncovered [3]") {
		t.Errorf("String: %s", r)
	}
}

func TestXPSBadMaskAndMissingDevice(t *testing.T) {
	r := xpsState("3", "").XPS("0000:41:00.0")
	if r.OK() || len(r.Errors) != 1 || !strings.Contains(r.Errors[0], "tx-1") {
		t.Errorf("an unreadable xps_cpus must fail, naming the queue: %s", r)
	}
	if r := xpsState("3", "c").XPS("0000:99:00.0"); r.OK() || len(r.Errors) != 1 {
		t.Errorf("no device: %s", r)
	}
}

func TestTxRunCompletions(t *testing.T) {
	sample := func(up float64, out0, out1 []uint64) LoadSample {
		return LoadSample{UptimeS: up, IRQCPUs: []int{0, 1, 3}, IRQs: []IRQCounts{
			{Number: 31, Actions: []string{"virtio0-output.0"}, Counts: out0},
			{Number: 33, Actions: []string{"virtio0-output.1"}, Counts: out1},
		}}
	}
	run := TxRun{CPUs: []int{1}, Sent: []uint64{100},
		Before: sample(10, []uint64{5, 0, 0}, []uint64{0, 0, 7}),
		After:  sample(12, []uint64{95, 0, 0}, []uint64{0, 0, 17})}
	cpu, queue, err := run.Completions()
	if err != nil {
		t.Fatal(err)
	}
	if cpu[0] != 90 || cpu[3] != 10 || len(cpu) != 2 || queue[0] != 90 || queue[1] != 10 {
		t.Errorf("per CPU %v, per queue %v", cpu, queue)
	}
	if k, share := Busiest(cpu); k != 0 || share != 0.9 {
		t.Errorf("Busiest = %d, %v", k, share)
	}
	if k, share := Busiest(nil); k != -1 || share != 0 {
		t.Errorf("Busiest(nil) = %d, %v", k, share)
	}
	if _, err := ParseTxRun([]byte(`{"cpus":[1,2],"sent":[3]}`)); err == nil {
		t.Error("ParseTxRun took 1 count for 2 CPUs")
	}
}

func TestCompletionTargets(t *testing.T) {
	s := xpsState("3", "c")
	s.Nodes = []Node{{ID: 0, CPUs: []int{0, 1}, Distance: []int{10, 20}}, {ID: 1, CPUs: []int{2, 3}, Distance: []int{20, 10}}}
	r := s.XPS("0000:41:00.0")
	for cpu, want := range map[int]string{0: "[0]", 1: "[0]", 2: "[3]", 3: "[3]"} {
		if got := fmt.Sprint(s.CompletionTargets(r, cpu)); got != want {
			t.Errorf("cpu %d: %s, want %s", cpu, got, want)
		}
	}
	if d := s.Distance(1, 3); d != 20 {
		t.Errorf("Distance(1, 3) = %d", d)
	}
	if d := s.Distance(1, 9); d != -1 {
		t.Errorf("Distance(1, 9) = %d, want -1", d)
	}
}
