package inventory

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/kernfs"
)

// ReadEffective reads the effective CPUs of the IRQs in want and, for
// those outside their non-empty want mask, the interrupt count. IRQs
// whose /proc/irq/N is gone are left out. It is for the IRQs being
// verified, not every IRQ of every round.
func (fsys FS) ReadEffective(want map[int]cpumask.Mask) map[int]Effective {
	out := make(map[int]Effective, len(want))
	r := newEffectiveReader(fsys)
	defer r.close()
	for n, m := range want {
		e, ok := r.effective(n)
		if !ok {
			continue
		}
		if !m.IsEmpty() && !e.CPUs.IsEmpty() && !e.CPUs.IsSubsetOf(m) {
			e.Count, e.Counted = r.count(n)
		}
		out[n] = e
	}
	return out
}

// InterruptCount is how many times irq has fired on all CPUs, from
// /sys/kernel/irq/N/per_cpu_count; false when missing or malformed.
func (fsys FS) InterruptCount(irq int) (uint64, bool) {
	r := newEffectiveReader(fsys)
	defer r.close()
	return r.count(irq)
}

// effectiveReader reads effective_affinity_list and per_cpu_count
// relative to descriptors of /proc/irq and /sys/kernel/irq; a reader is
// nil when its directory cannot be opened.
type effectiveReader struct {
	procDir   string
	proc, sys *irqReader
}

func newEffectiveReader(fsys FS) effectiveReader {
	er := effectiveReader{procDir: filepath.Join(fsys.Proc, "irq")}
	er.proc, _ = openIRQReader(er.procDir)
	er.sys, _ = openIRQReader(filepath.Join(fsys.Sys, "kernel", "irq"))
	return er
}

func (er effectiveReader) close() {
	for _, r := range []*irqReader{er.proc, er.sys} {
		if r != nil {
			r.Close()
		}
	}
}

// effective reads irq's effective CPUs; false when /proc/irq/N is gone.
func (er effectiveReader) effective(irq int) (Effective, bool) {
	var e Effective
	if er.proc == nil {
		e.Err = fmt.Sprintf("open %s: cannot read effective CPUs", er.procDir)
		return e, true
	}
	data, err := er.proc.readFile(irq, "/effective_affinity_list")
	path := func() string { return filepath.Join(er.procDir, string(er.proc.name)) }
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// No such file on this kernel, or the IRQ was freed.
		return e, er.proc.r.Exists(filepath.Join(er.procDir, strconv.Itoa(irq)))
	case err != nil:
		e.Err = kernfs.FileErr(path(), err).Error()
	default:
		if e.CPUs, err = cpumask.ParseList(string(data)); err != nil {
			e.Err = fmt.Sprintf("read %s: %v", path(), err)
		}
	}
	return e, true
}

// count is irq's interrupt count; false when unknown.
func (er effectiveReader) count(irq int) (uint64, bool) {
	if er.sys == nil {
		return 0, false
	}
	data, err := er.sys.readFile(irq, "/per_cpu_count")
	if err != nil {
		return 0, false
	}
	return sumCounts(data)
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
