package apply

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/kernfs"
)

// Writer sets the affinity of one IRQ, the XPS map of one tx queue or
// the CPUs of one NAPI kthread: the seam tests use to inject kernel
// errors, which must wrap the errno so errors.Is works.
type Writer interface {
	WriteAffinity(irq int, mask cpumask.Mask) error
	WriteXPS(iface string, queue int, mask cpumask.Mask) error
	// PinThread sets the CPU affinity of NAPI kthread pid, named comm
	// (pin.go).
	PinThread(pid int, comm string, mask cpumask.Mask) error
}

// ErrEmptyMask is returned for a write of an empty mask, which is never
// a valid affinity; nothing is written.
var ErrEmptyMask = errors.New("empty CPU mask")

// ProcWriter writes <Proc>/irq/N/smp_affinity_list (kernel/irq/proc.c
// write_irq_affinity) and <Sys>/class/net/IF/queues/tx-N/xps_cpus
// (xps.go). Proc and Sys are the procfs and sysfs roots: "/proc" and
// "/sys" on a host, fixture directories in tests.
type ProcWriter struct {
	Proc string
	Sys  string
	// Host says that the roots are the running kernel's, the command's
	// decision: only then are NAPI threads pinned (PinThread).
	Host bool
}

// WriteAffinity writes mask to smp_affinity_list (writeOnce). Errors
// name the file and the value and wrap the errno, e.g. `write
// /proc/irq/45/smp_affinity_list "3": input/output error`.
func (w ProcWriter) WriteAffinity(irq int, mask cpumask.Mask) error {
	path := filepath.Join(w.Proc, "irq", strconv.Itoa(irq), "smp_affinity_list")
	if mask.IsEmpty() {
		return fmt.Errorf("write %s %q: %w", path, "", ErrEmptyMask)
	}
	return writeOnce(path, mask.String(), nil)
}

// writeOnce writes val and a newline to path with kernfs.WriteOnce:
// without O_CREAT (a freed IRQ or queue gives ENOENT, not a stray file)
// and in one write, as the kernel parses each write as one complete
// value. A write (not the open) failing with ENOENT also wraps enoent
// when that is not nil.
func writeOnce(path, val string, enoent error) error {
	buf := []byte(val + "\n")
	n, err := kernfs.WriteOnce(path, buf)
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		switch {
		case pe.Op == "open":
			return fmt.Errorf("open %s: %w", path, pe.Err)
		case enoent != nil && errors.Is(pe.Err, syscall.ENOENT):
			return fmt.Errorf("write %s %q: %w: %w", path, val, enoent, pe.Err)
		}
		return fmt.Errorf("write %s %q: %w", path, val, pe.Err)
	}
	if n != len(buf) { // procfs takes the whole buffer or fails
		return fmt.Errorf("write %s %q: short write (%d of %d bytes)", path, val, n, len(buf))
	}
	return nil
}
