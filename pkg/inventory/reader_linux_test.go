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

const bdf41 = "0000:41:00.0"

// readerFixture is a virtio-net 0000:41:00.0 with IRQs 30-32 on CPUs
// 0-3 and an IRQ 9 that no device owns.
func readerFixture(t *testing.T) *fakesys.Tree {
	t.Helper()
	tr := fakesys.New(t)
	tr.AddInterrupts([]int{0, 1, 2, 3})
	tr.AddIRQ(fakesys.IRQSpec{Number: 9, Name: "acpi", Affinity: "0"})
	tr.AddMSIXDevice(fakesys.PCIDevice{BDF: bdf41, Driver: "virtio-pci", Class: "0x020000",
		Interfaces: []string{"eth0"}, VirtioChild: "virtio0", VirtioDriver: "virtio_net"},
		fakesys.IRQSpec{Number: 30, Name: "virtio0-config", Affinity: "0-3"},
		fakesys.IRQSpec{Number: 31, Name: "virtio0-input.0", Affinity: "1"},
		fakesys.IRQSpec{Number: 32, Name: "virtio0-output.0", Affinity: "2"},
	)
	return tr
}

var allCPUs = cpumask.New(0, 1, 2, 3)

// mustRead reads with r and checks the depth of the read.
func mustRead(t *testing.T, r *Reader, online cpumask.Mask, least, want Depth) *Inventory {
	t.Helper()
	inv, depth, err := r.Read(online, least)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if depth != want {
		t.Fatalf("Read depth = %v, want %v", depth, want)
	}
	return inv
}

// addIRQ33 gives the device another queue IRQ, which changes the key.
func addIRQ33(tr *fakesys.Tree) {
	tr.AddIRQ(fakesys.IRQSpec{Number: 33, Name: "virtio0-input.1", Chip: "IR-PCI-MSIX-" + bdf41, HWIRQ: "3-edge", Affinity: "3"})
	tr.WriteFile(fakesys.DevicePath(bdf41, "")+"/msi_irqs/33", "msix\n")
}

// relink points the link rel at target, as a bind, an unbind (target
// "") or a rename (rel moves: from != rel) does.
func relink(t *testing.T, tr *fakesys.Tree, from, rel, target string) {
	t.Helper()
	if target == "" && from != rel {
		var err error
		if target, err = os.Readlink(tr.Path(from)); err != nil {
			t.Fatal(err)
		}
	}
	tr.Remove(from)
	if target != "" {
		tr.Symlink(target, rel)
	}
}

// TestReadNothingChanged: while the key holds, a Read re-reads the
// movable IRQs' smp_affinity_list and nothing else, so a
// /proc/interrupts or device file that would fail a whole read is not
// even opened, and the devices are those of the last read.
func TestReadNothingChanged(t *testing.T) {
	tr := readerFixture(t)
	r := NewReader(fsOf(tr))
	first := mustRead(t, r, cpumask.Mask{}, DepthAffinities, DepthAll)

	// The kernel broke IRQ 31's affinity when CPU 1 went; someone also
	// wrote IRQ 9, which no device owns and no round plans.
	tr.WriteFile("proc/irq/31/smp_affinity_list", "0,2-3\n")
	tr.WriteFile("proc/irq/9/smp_affinity_list", "3\n")
	tr.WriteFile("proc/interrupts", "not a header\n")
	tr.WriteFile(fakesys.DevicePath(bdf41, "")+"/numa_node", "north\n")
	online := cpumask.New(0, 2, 3)
	inv := mustRead(t, r, online, DepthAffinities, DepthAffinities)

	if got := mustIRQ(t, inv, 31).Affinity.String(); got != "0,2-3" {
		t.Errorf("IRQ 31 affinity = %q, want the new 0,2-3", got)
	}
	if got := mustIRQ(t, inv, 9).Affinity.String(); got != "0" {
		t.Errorf("IRQ 9 affinity = %q, want the last read's 0: it is not a device IRQ", got)
	}
	if !inv.CPUs.Equal(online) {
		t.Errorf("CPUs = %v, want the given %v", inv.CPUs, online)
	}
	if !slices.EqualFunc(inv.Devices, first.Devices, func(a, b Device) bool { return a.PCI == b.PCI && a.NUMANode == b.NUMANode }) {
		t.Errorf("devices = %+v, want the last read's", inv.Devices)
	}
	// The earlier inventory is never changed.
	if got := mustIRQ(t, first, 31).Affinity.String(); got != "1" {
		t.Errorf("first inventory's IRQ 31 = %q after a later read, want 1", got)
	}
}

// TestReadKeyChanges: each part of the key changing makes the next Read
// re-read /proc/interrupts and the devices, and what changed shows.
func TestReadKeyChanges(t *testing.T) {
	dev := fakesys.DevicePath(bdf41, "")
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, tr *fakesys.Tree)
		check  func(t *testing.T, inv *Inventory)
	}{
		{"IRQ added", func(_ *testing.T, tr *fakesys.Tree) { addIRQ33(tr) }, func(t *testing.T, inv *Inventory) {
			if q := mustIRQ(t, inv, 33); q.Device != bdf41 || q.Affinity.String() != "3" {
				t.Errorf("IRQ 33 = %+v, want on %s, CPU 3", q, bdf41)
			}
		}},
		{"IRQ removed", func(_ *testing.T, tr *fakesys.Tree) {
			// Its directory goes first; its row is still in the
			// /proc/interrupts read, and it is dropped all the same.
			tr.Remove("proc/irq/32")
		}, func(t *testing.T, inv *Inventory) {
			if _, ok := inv.IRQ(32); ok {
				t.Error("IRQ 32 listed after its directory went")
			}
			if d := mustDevice(t, inv, bdf41); !slices.Equal(d.IRQs, []int{30, 31}) {
				t.Errorf("device IRQs = %v, want [30 31]", d.IRQs)
			}
		}},
		{"interface renamed", func(t *testing.T, tr *fakesys.Tree) {
			relink(t, tr, "sys/class/net/eth0", "sys/class/net/ens3", "")
		}, func(t *testing.T, inv *Inventory) {
			if d := mustDevice(t, inv, bdf41); !slices.Equal(d.Interfaces, []string{"ens3"}) {
				t.Errorf("interfaces = %v, want [ens3]", d.Interfaces)
			}
		}},
		{"driver unbound", func(t *testing.T, tr *fakesys.Tree) {
			relink(t, tr, dev+"/driver", dev+"/driver", "")
		}, func(t *testing.T, inv *Inventory) {
			if d := mustDevice(t, inv, bdf41); d.Driver != "" || !slices.Equal(d.Drivers, []string{"virtio_net"}) {
				t.Errorf("device = %+v, want unbound", d)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := readerFixture(t)
			r := NewReader(fsOf(tr))
			mustRead(t, r, allCPUs, DepthAffinities, DepthAll)
			mustRead(t, r, allCPUs, DepthAffinities, DepthAffinities)
			tc.change(t, tr)
			tc.check(t, mustRead(t, r, allCPUs, DepthAffinities, DepthInterrupts))
			mustRead(t, r, allCPUs, DepthAffinities, DepthAffinities)
		})
	}
}

// TestReadKeepsFactsWhileTheDriverHolds: after a key change an IRQ's
// managed state and its device's node are kept while the device's
// driver link holds, and read again when it changes.
func TestReadKeepsFactsWhileTheDriverHolds(t *testing.T) {
	tr := readerFixture(t)
	r := NewReader(fsOf(tr))
	if q := mustIRQ(t, mustRead(t, r, allCPUs, DepthAffinities, DepthAll), 31); q.Managed {
		t.Fatalf("IRQ 31 managed at start: %+v", q)
	}
	// Neither changes under the same driver on a real kernel: they show
	// whether a fact was kept or read again.
	chmod(t, tr.Path("proc/irq/31/smp_affinity_list"), 0o444)
	dev := fakesys.DevicePath(bdf41, "")
	tr.WriteFile(dev+"/numa_node", "1\n")
	addIRQ33(tr)
	inv := mustRead(t, r, allCPUs, DepthAffinities, DepthInterrupts)
	if q := mustIRQ(t, inv, 31); q.Managed {
		t.Error("IRQ 31's mode re-read under the same row and driver, want it kept")
	}
	if d := mustDevice(t, inv, bdf41); d.NUMANode != 0 || !slices.Equal(d.IRQs, []int{30, 31, 32, 33}) {
		t.Errorf("device = %+v, want node 0 kept and IRQ 33 read", d)
	}

	relink(t, tr, dev+"/driver", dev+"/driver", "../../../bus/pci/drivers/vfio-pci")
	inv = mustRead(t, r, allCPUs, DepthAffinities, DepthInterrupts)
	if q := mustIRQ(t, inv, 31); !q.Managed {
		t.Error("IRQ 31's managed state kept across a rebind")
	}
	if d := mustDevice(t, inv, bdf41); d.NUMANode != 1 || d.Driver != "vfio-pci" {
		t.Errorf("device = %+v, want node 1 and vfio-pci read again", d)
	}
}

// TestReadRowChange: an IRQ requested again under another name keeps
// its number's directory, so only the next key change (here an IRQ
// added) or a fresh read shows its new row, whose facts are read again.
func TestReadRowChange(t *testing.T) {
	tr := readerFixture(t)
	r := NewReader(fsOf(tr))
	mustRead(t, r, allCPUs, DepthAffinities, DepthAll)
	tr.AddIRQ(fakesys.IRQSpec{Number: 31, Name: "nvme0q1", Affinity: "1", Managed: true})
	if q := mustIRQ(t, mustRead(t, r, allCPUs, DepthAffinities, DepthAffinities), 31); q.Name != "virtio0-input.0" {
		t.Errorf("IRQ 31 = %+v, want the kept row: the key did not change", q)
	}
	addIRQ33(tr)
	if q := mustIRQ(t, mustRead(t, r, allCPUs, DepthAffinities, DepthInterrupts), 31); !q.Managed || q.Name != "nvme0q1" {
		t.Errorf("IRQ 31 under a new row = %+v, want its mode read again (managed)", q)
	}
}

// TestReadLeastInterrupts: a caller that knows IRQs may have been
// requested again on kept descriptors (a link or channel change) asks
// for /proc/interrupts, and sees the new row although the key held.
func TestReadLeastInterrupts(t *testing.T) {
	tr := readerFixture(t)
	r := NewReader(fsOf(tr))
	mustRead(t, r, allCPUs, DepthAffinities, DepthAll)
	tr.AddIRQ(fakesys.IRQSpec{Number: 31, Name: "nvme0q1", Affinity: "1", Managed: true})
	if q := mustIRQ(t, mustRead(t, r, allCPUs, DepthInterrupts, DepthInterrupts), 31); !q.Managed || q.Name != "nvme0q1" {
		t.Errorf("IRQ 31 under a new row = %+v, want it read again", q)
	}
	mustRead(t, r, allCPUs, DepthAffinities, DepthAffinities)
}

// TestReadFresh: fresh reads everything whatever the key.
func TestReadFresh(t *testing.T) {
	tr := readerFixture(t)
	r := NewReader(fsOf(tr))
	mustRead(t, r, allCPUs, DepthAll, DepthAll)
	chmod(t, tr.Path("proc/irq/31/smp_affinity_list"), 0o444)
	inv := mustRead(t, r, cpumask.New(0), DepthAll, DepthAll)
	if q := mustIRQ(t, inv, 31); !q.Managed {
		t.Errorf("IRQ 31 = %+v, want its mode read again", q)
	}
	if !inv.CPUs.Equal(allCPUs) {
		t.Errorf("CPUs = %v, want /proc/interrupts' %v", inv.CPUs, allCPUs)
	}
	mustRead(t, r, allCPUs, DepthAffinities, DepthAffinities)
}

// TestFailedReadForgets: after a failed read the next is DepthAll, so
// nothing is kept from before the failure.
func TestFailedReadForgets(t *testing.T) {
	tr := readerFixture(t)
	r := NewReader(fsOf(tr))
	mustRead(t, r, allCPUs, DepthAffinities, DepthAll)
	good := mustReadFile(t, tr.Path("proc/interrupts"))
	tr.WriteFile("proc/interrupts", "not a header\n")
	relink(t, tr, "sys/class/net/eth0", "sys/class/net/ens3", "")
	if _, _, err := r.Read(allCPUs, DepthAffinities); err == nil {
		t.Fatal("Read of a garbage /proc/interrupts succeeded")
	}
	tr.WriteFile("proc/interrupts", good)
	chmod(t, tr.Path("proc/irq/31/smp_affinity_list"), 0o444)
	if q := mustIRQ(t, mustRead(t, r, allCPUs, DepthAffinities, DepthAll), 31); !q.Managed {
		t.Errorf("IRQ 31 = %+v after a failed read, want its mode read again", q)
	}
}

// TestReadUnreadableStaysMarked: an IRQ whose file is garbage is listed,
// marked, and left so by affinities-only reads; the next deeper read
// reads it whole.
func TestReadUnreadableStaysMarked(t *testing.T) {
	tr := readerFixture(t)
	r := NewReader(fsOf(tr))
	mustRead(t, r, allCPUs, DepthAffinities, DepthAll)
	tr.WriteFile("proc/irq/31/smp_affinity_list", "1-x\n")
	inv := mustRead(t, r, allCPUs, DepthAffinities, DepthAffinities)
	if q := mustIRQ(t, inv, 31); !strings.Contains(q.Unreadable, tr.Path("proc/irq/31/smp_affinity_list")) {
		t.Errorf("IRQ 31 Unreadable = %q, want it naming its file", q.Unreadable)
	}
	tr.WriteFile("proc/irq/31/smp_affinity_list", "2\n")
	if q := mustIRQ(t, mustRead(t, r, allCPUs, DepthAffinities, DepthAffinities), 31); q.Unreadable == "" {
		t.Errorf("IRQ 31 = %+v, want it still unreadable until a deeper read", q)
	}
	addIRQ33(tr)
	if q := mustIRQ(t, mustRead(t, r, allCPUs, DepthAffinities, DepthInterrupts), 31); q.Unreadable != "" || q.Affinity.String() != "2" {
		t.Errorf("IRQ 31 = %+v, want readable on 2", q)
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

// TestReadInParallel: with more IRQs than one reader takes, the readers
// split them and every IRQ is read exactly as a single reader would:
// changed ones parsed, vanished ones dropped, order kept.
func TestReadInParallel(t *testing.T) {
	const n = 2*PerReader + 7
	tr := fakesys.New(t)
	tr.AddInterrupts([]int{0, 1, 2, 3})
	specs := make([]fakesys.IRQSpec, n)
	irqs := make([]int, n)
	for i := range specs {
		irqs[i] = 100 + i
		specs[i] = fakesys.IRQSpec{Number: irqs[i], Name: fmt.Sprintf("eth0-%d", i), Affinity: fmt.Sprint(i % 4)}
	}
	tr.AddIRQs(specs...)
	tr.AddPCIDevice(fakesys.PCIDevice{BDF: bdf41, Driver: "ixgbe", MSIIRQs: irqs, Interfaces: []string{"eth0"}})
	r := NewReader(fsOf(tr))
	mustRead(t, r, allCPUs, DepthAffinities, DepthAll)
	for i := 0; i < n; i += 97 {
		tr.WriteFile(fmt.Sprintf("proc/irq/%d/smp_affinity_list", 100+i), "0-3\n")
	}
	check := func(inv *Inventory, gone int) {
		t.Helper()
		if len(inv.IRQs) != n-gone {
			t.Fatalf("%d IRQs, want %d", len(inv.IRQs), n-gone)
		}
		for j, q := range inv.IRQs {
			i := q.Number - 100
			want := fmt.Sprint(i % 4)
			if i%97 == 0 {
				want = "0-3"
			}
			if (q.Number == 2100 && gone > 0) || (j > 0 && inv.IRQs[j-1].Number >= q.Number) || q.Affinity.String() != want {
				t.Fatalf("IRQ %d (index %d) = %+v, want affinity %s, in order, 2100 dropped", q.Number, j, q, want)
			}
		}
	}
	check(mustRead(t, r, allCPUs, DepthAffinities, DepthAffinities), 0)
	tr.Remove("proc/irq/2100")
	check(mustRead(t, r, allCPUs, DepthAffinities, DepthInterrupts), 1)
}

func TestDepthString(t *testing.T) {
	for d, want := range map[Depth]string{DepthAffinities: "affinities", DepthInterrupts: "interrupts", DepthAll: "all", 7: "Depth(7)"} {
		if got := d.String(); got != want {
			t.Errorf("Depth(%d) = %q, want %q", d, got, want)
		}
	}
}
