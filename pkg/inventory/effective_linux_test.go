package inventory_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/cpumask"
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
	tree.WriteFile("proc/irq/28/effective_affinity_list", "5\n") // inside: no count needed
	tree.WriteFile("sys/kernel/irq/28/per_cpu_count", "4,4\n")
	tree.WriteFile("proc/irq/29/effective_affinity_list", "6\n") // no mask: no count wanted
	tree.WriteFile("sys/kernel/irq/29/per_cpu_count", "4,4\n")
	fsys := inventory.FS{Proc: tree.Proc(), Sys: tree.Sys()}

	five := cpumask.New(5)
	got := fsys.ReadEffective(map[int]cpumask.Mask{24: five, 25: five, 26: five, 27: five, 28: five, 29: {}, 99: five})
	if _, ok := got[99]; ok || len(got) != 6 {
		t.Errorf("read %v, want IRQs 24-29 and not the freed 99", got)
	}
	if e := got[28]; e.CPUs.String() != "5" || e.Counted {
		t.Errorf("IRQ 28 inside its mask: %+v, want CPU 5 and no count read", e)
	}
	if e := got[29]; e.CPUs.String() != "6" || e.Counted {
		t.Errorf("IRQ 29 without a mask: %+v, want CPU 6 and no count read", e)
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

// BenchmarkReadEffective is the worst case of verification on the scale
// host (8192 IRQs, 256 CPUs): every IRQ written and still pending, so
// each round reads every effective_affinity_list and per_cpu_count.
// Compare with BenchmarkAffinities, the round's own read.
func BenchmarkReadEffective(b *testing.B) {
	tr := fakesys.New(b)
	tr.AddScaleHost()
	counts := strings.TrimSuffix(strings.Repeat("12345,", fakesys.ScaleCPUs), ",") + "\n"
	irqs := map[int]cpumask.Mask{}
	for i := range fakesys.ScaleDevices * fakesys.ScalePerDev {
		n := fakesys.ScaleFirstIRQ + i
		irqs[n] = cpumask.New(4)
		tr.WriteFile(fmt.Sprintf("proc/irq/%d/effective_affinity_list", n), "3\n")
		tr.WriteFile(fmt.Sprintf("sys/kernel/irq/%d/per_cpu_count", n), counts)
	}
	fsys := inventory.FS{Proc: tr.Proc(), Sys: tr.Sys()}
	b.ResetTimer()
	for b.Loop() {
		if got := fsys.ReadEffective(irqs); len(got) != len(irqs) || !got[fakesys.ScaleFirstIRQ].Counted {
			b.Fatalf("read %d IRQs", len(got))
		}
	}
}
