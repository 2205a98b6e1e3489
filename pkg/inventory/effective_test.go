package inventory_test

import (
	"strings"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/inventory"
)

// TestReadEffective reads the effective CPUs and counts of the IRQs
// asked for: well-formed, without the files, malformed, and freed.
func TestReadEffective(t *testing.T) {
	tree := fakesys.New(t)
	tree.WriteFile("proc/irq/24/effective_affinity_list", "3\n")
	tree.WriteFile("sys/kernel/irq/24/per_cpu_count", "0,5,0,12\n")
	tree.WriteFile("proc/irq/25/smp_affinity_list", "0-3\n") // no effective file, no count
	tree.WriteFile("proc/irq/26/effective_affinity_list", "three\n")
	tree.WriteFile("sys/kernel/irq/26/per_cpu_count", "1,x\n")
	tree.WriteFile("sys/kernel/irq/27/per_cpu_count", "18446744073709551615,1\n") // overflows
	tree.WriteFile("proc/irq/27/effective_affinity_list", "2\n")
	fsys := inventory.FS{Proc: tree.Proc(), Sys: tree.Sys()}

	got := fsys.ReadEffective([]int{24, 25, 26, 27, 99})
	if _, ok := got[99]; ok || len(got) != 4 {
		t.Errorf("read %v, want IRQs 24-27 and not the freed 99", got)
	}
	if e := got[24]; e.CPUs.String() != "3" || e.Count != 17 || !e.Counted || e.Err != "" {
		t.Errorf("IRQ 24: %+v, want CPU 3, 17 interrupts", e)
	}
	if e := got[25]; !e.CPUs.IsEmpty() || e.Counted || e.Err != "" {
		t.Errorf("IRQ 25 without the files: %+v, want nothing known and no error", e)
	}
	if e := got[26]; !e.CPUs.IsEmpty() || e.Counted || !strings.Contains(e.Err, "26/effective_affinity_list") {
		t.Errorf("IRQ 26 malformed: %+v, want an error naming the file and no count", e)
	}
	if e := got[27]; e.CPUs.String() != "2" || e.Counted {
		t.Errorf("IRQ 27 with an overflowing count: %+v, want CPU 2 and no count", e)
	}
	if n, ok := fsys.InterruptCount(24); n != 17 || !ok {
		t.Errorf("InterruptCount(24) = %d %v", n, ok)
	}
}
