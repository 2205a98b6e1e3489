package inventory

import (
	"os"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
)

// readIRQ reads IRQ n of the tree with the reader Read uses.
func readIRQ(t *testing.T, tr *fakesys.Tree, n int) (IRQ, bool) {
	t.Helper()
	irq := IRQ{Number: n}
	r := openTestIRQReader(t, tr)
	_, ok, err := r.read(&irq)
	if err != nil {
		t.Fatalf("read IRQ %d: %v", n, err)
	}
	return irq, ok
}

// TestManagedByMode checks which modes make an IRQ managed: a read-only
// smp_affinity_list or smp_affinity is the kernel refusing user affinity;
// a smp_affinity that cannot be stat'ed says nothing, and the IRQ stays
// movable because smp_affinity_list, the file apply writes, is writable.
func TestManagedByMode(t *testing.T) {
	for _, tc := range []struct {
		name    string
		managed bool
		mutate  func(t *testing.T, tr *fakesys.Tree)
	}{
		{"both writable", false, func(*testing.T, *fakesys.Tree) {}},
		{"both 0444 (kernel 6.12+)", true, func(t *testing.T, tr *fakesys.Tree) {
			chmod(t, tr.Path("proc/irq/7/smp_affinity_list"), 0o444)
			chmod(t, tr.Path("proc/irq/7/smp_affinity"), 0o444)
		}},
		{"smp_affinity_list 0444 alone", true, func(t *testing.T, tr *fakesys.Tree) {
			chmod(t, tr.Path("proc/irq/7/smp_affinity_list"), 0o444)
		}},
		{"smp_affinity 0444 alone", true, func(t *testing.T, tr *fakesys.Tree) {
			chmod(t, tr.Path("proc/irq/7/smp_affinity"), 0o444)
		}},
		{"smp_affinity missing", false, func(t *testing.T, tr *fakesys.Tree) {
			tr.Remove("proc/irq/7/smp_affinity")
		}},
		{"smp_affinity a symlink loop (ELOOP)", false, func(t *testing.T, tr *fakesys.Tree) {
			tr.Remove("proc/irq/7/smp_affinity")
			tr.Symlink("smp_affinity", "proc/irq/7/smp_affinity")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := fakesys.New(t)
			tr.AddInterrupts([]int{0, 1})
			tr.AddIRQ(fakesys.IRQSpec{Number: 7, Name: "eth0-rx-0", Affinity: "1"})
			tc.mutate(t, tr)
			irq, ok := readIRQ(t, tr, 7)
			if !ok {
				t.Fatal("IRQ 7 reported gone")
			}
			if irq.Managed != tc.managed || (irq.Managed && irq.ManagedReason != "read-only smp_affinity") {
				t.Errorf("managed = %v (%q), want %v", irq.Managed, irq.ManagedReason, tc.managed)
			}
			if irq.Affinity.String() != "1" {
				t.Errorf("affinity = %q, want 1", irq.Affinity)
			}
		})
	}
}

// TestIRQVanishesAfterAffinityRead frees the IRQ (removes its directory)
// right after smp_affinity_list is read, so the stat of smp_affinity
// finds nothing: the IRQ is gone, not managed and not an error.
func TestIRQVanishesAfterAffinityRead(t *testing.T) {
	tr := fakesys.New(t)
	tr.AddInterrupts([]int{0, 1})
	tr.AddIRQ(fakesys.IRQSpec{Number: 7, Name: "eth0-rx-0"})
	r := openTestIRQReader(t, tr)
	r.afterAffinity = func() { tr.Remove("proc/irq/7") } // free_desc
	irq := IRQ{Number: 7}
	_, ok, err := r.read(&irq)
	if err != nil {
		t.Fatal(err)
	}
	if ok {
		t.Errorf("IRQ 7 read as present after its directory was removed: %+v", irq)
	}
}

func openTestIRQReader(t *testing.T, tr *fakesys.Tree) *irqReader {
	t.Helper()
	r, err := openIRQReader(tr.Path("proc/irq"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

func chmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}
