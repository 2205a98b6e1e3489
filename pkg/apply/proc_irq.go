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
// the CPUs of one NAPI kthread. Errors wrap the errno; tests inject them.
type Writer interface {
	WriteAffinity(irq int, mask cpumask.Mask) error
	WriteXPS(iface string, queue int, mask cpumask.Mask) error
	PinThread(pid int, comm string, mask cpumask.Mask) error
}

// ErrEmptyMask refuses a write of an empty mask, never an affinity.
var ErrEmptyMask = errors.New("empty CPU mask")

// ProcWriter writes under the procfs and sysfs roots Proc and Sys
// ("/proc" and "/sys" on a host, fixture directories in tests).
type ProcWriter struct {
	Proc string
	Sys  string
	// Host says the roots are the running kernel's: only then are NAPI
	// threads pinned.
	Host bool
}

// WriteAffinity writes mask to <Proc>/irq/N/smp_affinity_list.
func (w ProcWriter) WriteAffinity(irq int, mask cpumask.Mask) error {
	path := filepath.Join(w.Proc, "irq", strconv.Itoa(irq), "smp_affinity_list")
	if mask.IsEmpty() {
		return fmt.Errorf("write %s %q: %w", path, "", ErrEmptyMask)
	}
	return writeOnce(path, mask.String(), nil)
}

// writeOnce writes val and a newline to path in one write, without
// O_CREAT. A write (not open) failing with ENOENT also wraps enoent.
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
