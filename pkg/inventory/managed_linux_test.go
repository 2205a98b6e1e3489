package inventory

import (
	"strings"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
)

// TestDriverManagedWithWritableFiles is a 6.1 kernel: managed IRQs'
// smp_affinity is still 0644, so NVMe I/O queues and virtio-blk request
// queues are known managed by their driver's convention, while the NVMe
// admin queue and virtio-net queues stay movable.
func TestDriverManagedWithWritableFiles(t *testing.T) {
	tr := fakesys.New(t)
	tr.AddInterrupts([]int{0, 1})
	tr.AddMSIXDevice(fakesys.PCIDevice{BDF: "0000:21:00.0", Driver: "nvme"},
		fakesys.IRQSpec{Number: 40, Name: "nvme0q0"}, fakesys.IRQSpec{Number: 41, Name: "nvme0q1"}, fakesys.IRQSpec{Number: 42, Name: "nvme0q12"})
	tr.AddMSIXDevice(fakesys.PCIDevice{BDF: "0000:00:03.0", Driver: "virtio-pci"},
		fakesys.IRQSpec{Number: 50, Name: "virtio1-config"}, fakesys.IRQSpec{Number: 51, Name: "virtio1-req.0"})
	tr.AddVirtioNet(fakesys.VirtioNet{BDF: "0000:41:00.0", Index: 0, Pairs: 1, FirstIRQ: 60})
	inv, err := FS{Proc: tr.Proc(), Sys: tr.Sys()}.Read()
	if err != nil {
		t.Fatal(err)
	}
	for irq, want := range map[int]bool{40: false, 41: true, 42: true, 50: false, 51: true, 60: false, 61: false, 62: false} {
		q := mustIRQ(t, inv, irq)
		if q.Managed != want {
			t.Errorf("IRQ %d %s: managed %v (%q), want %v", irq, q.Name, q.Managed, q.ManagedReason, want)
		}
		if want && !strings.Contains(q.ManagedReason, "managed affinity") {
			t.Errorf("IRQ %d reason %q", irq, q.ManagedReason)
		}
	}
}
