package inventory

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/cpumask"
)

// readerFixture is a virtio-net 0000:41:00.0 with IRQs 30-32 on CPUs
// 0-3 and an IRQ 9 that no device owns.
func readerFixture(t *testing.T) *fakesys.Tree {
	t.Helper()
	tr := fakesys.New(t)
	tr.AddInterrupts([]int{0, 1, 2, 3})
	tr.AddIRQ(fakesys.IRQSpec{Number: 9, Name: "acpi", Affinity: "0"})
	tr.AddMSIXDevice(fakesys.PCIDevice{BDF: "0000:41:00.0", Driver: "virtio-pci", Class: "0x020000",
		Interfaces: []string{"eth0"}, VirtioChild: "virtio0", VirtioDriver: "virtio_net"},
		fakesys.IRQSpec{Number: 30, Name: "virtio0-config", Affinity: "0-3"},
		fakesys.IRQSpec{Number: 31, Name: "virtio0-input.0", Affinity: "1"},
		fakesys.IRQSpec{Number: 32, Name: "virtio0-output.0", Affinity: "2"},
	)
	return tr
}

func mustRead(t *testing.T, what string, read func() (*Inventory, error)) *Inventory {
	t.Helper()
	inv, err := read()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return inv
}

// TestAffinitiesReadsOnlyAffinities: after a CPU event the Reader
// re-reads the device IRQs' smp_affinity_list and nothing else, so a
// /proc/interrupts or device file that would fail a whole read is not
// even opened, and the devices are those of the last read.
func TestAffinitiesReadsOnlyAffinities(t *testing.T) {
	tr := readerFixture(t)
	r := NewReader(fsOf(tr))
	first := mustRead(t, "Read", r.Read)

	// The kernel broke IRQ 31's affinity when CPU 1 went; someone also
	// wrote IRQ 9, which no device owns and no round plans.
	tr.WriteFile("proc/irq/31/smp_affinity_list", "0,2-3\n")
	tr.WriteFile("proc/irq/9/smp_affinity_list", "3\n")
	tr.WriteFile("proc/interrupts", "not a header\n")
	tr.WriteFile("sys/bus/pci/devices/0000:41:00.0/numa_node", "north\n")
	online := cpumask.New(0, 2, 3)
	inv := mustRead(t, "Affinities", func() (*Inventory, error) { return r.Affinities(online) })

	if got := mustIRQ(t, inv, 31).Affinity.String(); got != "0,2-3" {
		t.Errorf("IRQ 31 affinity = %q, want the new 0,2-3", got)
	}
	if got := mustIRQ(t, inv, 9).Affinity.String(); got != "0" {
		t.Errorf("IRQ 9 affinity = %q, want the last read's 0: it is not a device IRQ", got)
	}
	if !inv.CPUs.Equal(online) {
		t.Errorf("CPUs = %v, want the given %v", inv.CPUs, online)
	}
	if len(inv.Devices) != len(first.Devices) || mustDevice(t, inv, "0000:41:00.0").NUMANode != mustDevice(t, first, "0000:41:00.0").NUMANode {
		t.Errorf("devices = %+v, want the last read's", inv.Devices)
	}
	// The earlier inventory is never changed.
	if got := mustIRQ(t, first, 31).Affinity.String(); got != "1" {
		t.Errorf("first inventory's IRQ 31 = %q after Affinities, want 1", got)
	}
}

// TestAffinitiesDropsVanishedIRQ: an IRQ freed since the last read is
// dropped, not reported unreadable; a garbage file degrades its IRQ.
func TestAffinitiesDropsVanishedIRQ(t *testing.T) {
	tr := readerFixture(t)
	r := NewReader(fsOf(tr))
	mustRead(t, "Read", r.Read)
	tr.Remove("proc/irq/32")
	tr.WriteFile("proc/irq/31/smp_affinity_list", "1-x\n")
	inv := mustRead(t, "Affinities", func() (*Inventory, error) { return r.Affinities(cpumask.New(0, 1, 2, 3)) })
	if _, ok := inv.IRQ(32); ok {
		t.Error("IRQ 32 is listed after its directory was removed")
	}
	if q := mustIRQ(t, inv, 31); !strings.Contains(q.Unreadable, tr.Path("proc/irq/31/smp_affinity_list")) {
		t.Errorf("IRQ 31 Unreadable = %q, want it naming its file", q.Unreadable)
	}
	if got := len(inv.DeviceIRQs("0000:41:00.0")); got != 2 {
		t.Errorf("DeviceIRQs = %d IRQs, want 30 and 31", got)
	}
	// An unreadable IRQ is read whole again only by Refresh or Read.
	tr.WriteFile("proc/irq/31/smp_affinity_list", "1\n")
	inv = mustRead(t, "Affinities", func() (*Inventory, error) { return r.Affinities(cpumask.New(0, 1, 2, 3)) })
	if q := mustIRQ(t, inv, 31); q.Unreadable == "" {
		t.Errorf("IRQ 31 = %+v, want it still unreadable until a whole read", q)
	}
	tr.AddIRQ(fakesys.IRQSpec{Number: 32, Name: "virtio0-output.0", Affinity: "2"})
	inv = mustRead(t, "Refresh", func() (*Inventory, error) { return r.Refresh(nil) })
	if q := mustIRQ(t, inv, 31); q.Unreadable != "" || q.Affinity.String() != "1" {
		t.Errorf("IRQ 31 after Refresh = %+v, want readable on 1", q)
	}
}

// TestRefreshKeepsFactsWhileTheRowIsTheSame: Refresh keeps an IRQ's
// managed state while its /proc/interrupts row is unchanged, and reads
// it again when the row changes, when the IRQ's device is named as
// changed, and on Read.
func TestRefreshKeepsFactsWhileTheRowIsTheSame(t *testing.T) {
	tr := readerFixture(t)
	r := NewReader(fsOf(tr))
	if q := mustIRQ(t, mustRead(t, "Read", r.Read), 31); q.Managed {
		t.Fatalf("IRQ 31 managed at start: %+v", q)
	}
	// A mode change under the same row is not something the kernel does:
	// it shows whether the fact was kept or read again.
	if err := os.Chmod(tr.Path("proc/irq/31/smp_affinity_list"), 0o444); err != nil {
		t.Fatal(err)
	}
	managed := func(inv *Inventory) bool { return mustIRQ(t, inv, 31).Managed }
	if managed(mustRead(t, "Refresh", func() (*Inventory, error) { return r.Refresh(nil) })) {
		t.Error("Refresh with the same row re-read IRQ 31's mode, want it kept")
	}
	if managed(mustRead(t, "Refresh", func() (*Inventory, error) { return r.Refresh([]string{"0000:99:00.0"}) })) {
		t.Error("Refresh naming another device re-read IRQ 31's mode")
	}
	if !managed(mustRead(t, "Refresh", func() (*Inventory, error) { return r.Refresh([]string{"0000:41:00.0"}) })) {
		t.Error("Refresh naming IRQ 31's device kept its old managed state")
	}

	// Freed and requested again under another name: a new row.
	if err := os.Chmod(tr.Path("proc/irq/31/smp_affinity_list"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRead(t, "Read", r.Read)
	tr.AddIRQ(fakesys.IRQSpec{Number: 31, Name: "nvme0q1", Affinity: "1", Managed: true})
	inv := mustRead(t, "Refresh", func() (*Inventory, error) { return r.Refresh(nil) })
	if q := mustIRQ(t, inv, 31); !q.Managed || q.Name != "nvme0q1" {
		t.Errorf("IRQ 31 under a new row = %+v, want its mode read again (managed)", q)
	}
}

// TestFailedReadForgets: after a failed read the next Affinities is a
// whole read, so nothing is kept from before the failure.
func TestFailedReadForgets(t *testing.T) {
	tr := readerFixture(t)
	r := NewReader(fsOf(tr))
	mustRead(t, "Read", r.Read)
	good := mustReadFile(t, tr.Path("proc/interrupts"))
	tr.WriteFile("proc/interrupts", "not a header\n")
	if _, err := r.Refresh(nil); err == nil {
		t.Fatal("Refresh of a garbage /proc/interrupts succeeded")
	}
	tr.WriteFile("proc/interrupts", good)
	tr.AddIRQ(fakesys.IRQSpec{Number: 33, Name: "virtio0-input.1", Affinity: "3"})
	tr.WriteFile("sys/bus/pci/devices/0000:41:00.0/msi_irqs/33", "msix\n")
	inv := mustRead(t, "Affinities", func() (*Inventory, error) { return r.Affinities(cpumask.New(0, 1, 2, 3)) })
	if q, ok := inv.IRQ(33); !ok || q.Device != "0000:41:00.0" {
		t.Errorf("IRQ 33 = %+v, %v after a failed read: want Affinities to read everything", q, ok)
	}
}

func mustReadFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAffinitiesInParallel: with more IRQs than one reader takes, the
// readers split them and every IRQ is read exactly as a single reader
// would: changed ones parsed, vanished ones dropped, order kept.
func TestAffinitiesInParallel(t *testing.T) {
	const n = 2*perWorker + 7
	tr := fakesys.New(t)
	tr.AddInterrupts([]int{0, 1, 2, 3})
	specs := make([]fakesys.IRQSpec, n)
	irqs := make([]int, n)
	for i := range specs {
		irqs[i] = 100 + i
		specs[i] = fakesys.IRQSpec{Number: irqs[i], Name: fmt.Sprintf("eth0-%d", i), Affinity: fmt.Sprint(i % 4)}
	}
	tr.AddIRQs(specs...)
	tr.AddPCIDevice(fakesys.PCIDevice{BDF: "0000:41:00.0", Driver: "ixgbe", MSIIRQs: irqs, Interfaces: []string{"eth0"}})
	r := NewReader(fsOf(tr))
	mustRead(t, "Read", r.Read)
	for i := 0; i < n; i += 97 {
		tr.WriteFile(fmt.Sprintf("proc/irq/%d/smp_affinity_list", 100+i), "0-3\n")
	}
	tr.Remove("proc/irq/2100")
	inv := mustRead(t, "Affinities", func() (*Inventory, error) { return r.Affinities(cpumask.New(0, 1, 2, 3)) })
	if len(inv.IRQs) != n-1 {
		t.Fatalf("%d IRQs, want %d", len(inv.IRQs), n-1)
	}
	for j, q := range inv.IRQs {
		i := q.Number - 100
		want := fmt.Sprint(i % 4)
		if i%97 == 0 {
			want = "0-3"
		}
		if q.Number == 2100 || (j > 0 && inv.IRQs[j-1].Number >= q.Number) || q.Affinity.String() != want {
			t.Fatalf("IRQ %d (index %d) = %+v, want affinity %s, in order, 2100 dropped", q.Number, j, q, want)
		}
	}
}

// TestRefreshKeepsDeviceFacts: Refresh re-reads every device's IRQs but
// keeps the node and drivers of a device no event named, and reads them
// again for one that is named.
func TestRefreshKeepsDeviceFacts(t *testing.T) {
	tr := readerFixture(t)
	r := NewReader(fsOf(tr))
	mustRead(t, "Read", r.Read)
	const dev = "sys/bus/pci/devices/0000:41:00.0/"
	tr.WriteFile(dev+"numa_node", "1\n")
	tr.AddIRQ(fakesys.IRQSpec{Number: 33, Name: "virtio0-input.1", Affinity: "3"})
	tr.WriteFile(dev+"msi_irqs/33", "msix\n")
	inv := mustRead(t, "Refresh", func() (*Inventory, error) { return r.Refresh(nil) })
	d := mustDevice(t, inv, "0000:41:00.0")
	if d.NUMANode != 0 || !slices.Equal(d.IRQs, []int{30, 31, 32, 33}) || !slices.Equal(d.Interfaces, []string{"eth0"}) {
		t.Errorf("device = %+v, want node 0 kept, IRQ 33 and eth0 read", d)
	}
	inv = mustRead(t, "Refresh", func() (*Inventory, error) { return r.Refresh([]string{"0000:41:00.0"}) })
	if d := mustDevice(t, inv, "0000:41:00.0"); d.NUMANode != 1 {
		t.Errorf("named device's node = %d, want 1 read again", d.NUMANode)
	}
}
