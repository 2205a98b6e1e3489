package inventory

import (
	"bytes"
	"fmt"
	"maps"
	"path/filepath"
	"strconv"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/kernfs"
)

// Effective is what the kernel shows of where an IRQ really is: the
// CPUs its vector is programmed on and how often it has fired. Where
// moves are deferred (MSI without interrupt remapping, Hyper-V), a
// written mask takes effect at the IRQ's next interrupt, so the two are
// read together: an IRQ outside its mask that has not fired since the
// write has not had its move yet (docs/kernel.md §3.1).
type Effective struct {
	// CPUs is /proc/irq/N/effective_affinity_list: one CPU on x86.
	// Empty when the kernel has no such file
	// (CONFIG_GENERIC_IRQ_EFFECTIVE_AFF_MASK) or it could not be read.
	CPUs cpumask.Mask
	// Count is the sum of /sys/kernel/irq/N/per_cpu_count, valid when
	// Counted (the file needs CONFIG_SPARSE_IRQ).
	Count   uint64
	Counted bool
	// Err says why effective_affinity_list could not be read or parsed,
	// "" when it was or does not exist.
	Err string
}

// ReadEffective reads the effective CPUs and interrupt counts of irqs,
// and leaves out those whose /proc/irq/N is gone. It costs two small
// reads per IRQ, so it is for the few IRQs whose writes are being
// verified, not for every IRQ of every round.
func (fsys FS) ReadEffective(irqs []int) map[int]Effective {
	out := make(map[int]Effective, len(irqs))
	var r kernfs.Reader
	for _, n := range irqs {
		dir := filepath.Join(fsys.Proc, "irq", strconv.Itoa(n))
		path := filepath.Join(dir, "effective_affinity_list")
		var e Effective
		text, ok, err := r.ReadOptional(path)
		switch {
		case err != nil:
			e.Err = fileErr(path, err).Error()
		case !ok && !r.Exists(dir):
			continue // freed
		case ok:
			if e.CPUs, err = cpumask.ParseList(text); err != nil {
				e.Err = fmt.Sprintf("read %s: %v", path, err)
			}
		}
		e.Count, e.Counted = fsys.InterruptCount(n)
		out[n] = e
	}
	return out
}

// InterruptCount is how many times irq has fired on all CPUs, from
// /sys/kernel/irq/N/per_cpu_count; false when that file is missing or
// malformed (a count known wrongly would make a pending move look
// failed).
func (fsys FS) InterruptCount(irq int) (uint64, bool) {
	var r kernfs.Reader
	b, err := r.Read(filepath.Join(fsys.Sys, "kernel", "irq", strconv.Itoa(irq), "per_cpu_count"))
	if err != nil {
		return 0, false
	}
	n, ok := sumCounts(b)
	return n, ok
}

// sumCounts adds up "0,5,12": one count per possible CPU.
func sumCounts(b []byte) (uint64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var sum uint64
	for f := range bytes.SplitSeq(b, []byte(",")) {
		n, ok := kernfs.ParseUint(f)
		if !ok || sum+n < sum {
			return 0, false
		}
		sum += n
	}
	return sum, true
}

// WithEffective returns a copy of inv that also holds eff, the
// effective placement of the IRQs being verified (see
// Inventory.Effective); inv itself is not changed.
func (inv *Inventory) WithEffective(eff map[int]Effective) *Inventory {
	c := *inv
	c.Effective = maps.Clone(eff)
	return &c
}
