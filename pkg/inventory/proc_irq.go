package inventory

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/kernfs"
)

// irqReader reads the files of /proc/irq/N (kernel/irq/proc.c) with one
// reused buffer: Read opens four files for each of thousands of IRQs.
type irqReader struct {
	dir string
	r   kernfs.Reader
	// afterAffinity, when set, runs after smp_affinity_list is read: a
	// test frees the IRQ there.
	afterAffinity func()
}

func newIRQReader(dir string) *irqReader { return &irqReader{dir: dir} }

// read fills irq's affinity fields from <proc>/irq/N. It reports false
// when the directory is gone: free_irq() removed it after
// /proc/interrupts was read, so the IRQ no longer exists.
func (r *irqReader) read(irq *IRQ) (bool, error) {
	dir := filepath.Join(r.dir, strconv.Itoa(irq.Number))
	irq.Node = -1

	// smp_affinity_list is required; its mode tells managed IRQs apart
	// (0444 since "genirq/proc: ... read-only" when the kernel refuses
	// user affinity). Check the mode bits: root can open 0444 files.
	path := dir + "/smp_affinity_list"
	data, mode, err := r.r.ReadWithMode(path)
	if errors.Is(err, fs.ErrNotExist) {
		if gone(dir) {
			return false, nil
		}
		return false, fileErr(path, err)
	}
	if err != nil {
		return false, fileErr(path, err)
	}
	if r.afterAffinity != nil {
		r.afterAffinity()
	}
	// The kernel prints the requested mask, never empty: it refuses an
	// empty write, and an IRQ starts with a default mask.
	if len(data) == 0 {
		return false, kernfs.Malformed(path, "empty, want the IRQ's CPU list")
	}
	if irq.Affinity, err = cpumask.ParseList(string(data)); err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	readOnly := mode&0o222 == 0
	if !readOnly {
		// The kernel gives smp_affinity the same mode; a read-only one
		// (a fixture, or an admin's chmod) means hands off too.
		ro, err := readOnlyFile(dir + "/smp_affinity")
		if errors.Is(err, fs.ErrNotExist) && gone(dir) {
			return false, nil
		}
		readOnly = ro
	}
	if readOnly {
		irq.Managed, irq.ManagedReason = true, "read-only smp_affinity"
	}

	missing := false
	for _, f := range []struct {
		name  string
		parse func(data []byte) error
	}{
		{"effective_affinity_list", func(b []byte) (err error) {
			irq.Effective, err = cpumask.ParseList(string(b))
			irq.HasEffective = err == nil
			return err
		}},
		{"affinity_hint", func(b []byte) (err error) {
			irq.Hint, err = cpumask.ParseHex(string(b))
			irq.HasHint = err == nil && !irq.Hint.IsEmpty()
			return err
		}},
		{"node", func(b []byte) (err error) {
			irq.Node, err = parseNode(b)
			return err
		}},
	} {
		path = dir + "/" + f.name
		switch data, err = r.r.Read(path); {
		case errors.Is(err, fs.ErrNotExist):
			missing = true
		case err != nil:
			return false, fileErr(path, err)
		default:
			if err := f.parse(data); err != nil {
				return false, fmt.Errorf("read %s: %w", path, err)
			}
		}
	}

	// An optional file may be missing because the IRQ was freed while we
	// read it; then drop the IRQ rather than report half of it.
	if missing && gone(dir) {
		return false, nil
	}
	return true, nil
}

// readOnlyFile reports whether path exists without any write
// permission bit. A file that cannot be stat'ed is not read-only: only a
// mode without write bits is the kernel's word that it refuses user
// affinity, and smp_affinity_list, the file apply writes, was writable.
// Treating the IRQ as movable costs at most one refused write, which
// apply records as managed; treating it as managed would keep it from
// the planner, under a false reason, for as long as the stat fails. err
// says why the stat failed, so the caller can tell a vanished IRQ
// (fs.ErrNotExist) apart.
func readOnlyFile(path string) (bool, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return false, err
	}
	return st.Mode&0o222 == 0, nil
}

// parseNode parses a NUMA node number as procfs and sysfs print it;
// -1 means none.
func parseNode(data []byte) (int, error) {
	s := string(bytes.TrimSpace(data))
	n, err := strconv.Atoi(s)
	if err != nil || n < -1 {
		return 0, fmt.Errorf("%s is not a NUMA node: %w", kernfs.Quote(s), kernfs.ErrMalformed)
	}
	return n, nil
}

// gone reports whether dir no longer exists.
func gone(dir string) bool {
	_, err := os.Stat(dir)
	return errors.Is(err, fs.ErrNotExist)
}
