package inventory

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

// irqReader reads /proc/irq/N's files relative to a descriptor of dir.
type irqReader struct {
	dir           string
	dirfd         int
	r             kernfs.Reader
	name          []byte // "N/smp_affinity_list", rebuilt for each IRQ
	afterAffinity func() // for tests: runs after smp_affinity_list is read
}

// openIRQReader opens dir, <proc>/irq. Close it when done.
func openIRQReader(dir string) (*irqReader, error) {
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, kernfs.FileErr(dir, &fs.PathError{Op: "open", Path: dir, Err: err})
	}
	return &irqReader{dir: dir, dirfd: fd}, nil
}

func (r *irqReader) Close() { syscall.Close(r.dirfd) }

// readFile reads file ("/smp_affinity_list") of irq's directory.
func (r *irqReader) readFile(irq int, file string) ([]byte, error) {
	r.name = append(strconv.AppendInt(r.name[:0], int64(irq), 10), file...)
	return r.r.ReadAt(r.dirfd, r.dir, r.name)
}

// affinity reads irq's smp_affinity_list, keeping prev's mask when the
// text is unchanged, and returns the text; false when the IRQ is gone.
func (r *irqReader) affinity(irq *IRQ, prev cpumask.Mask, text string) (string, bool, error) {
	data, err := r.readFile(irq.Number, "/smp_affinity_list")
	if errors.Is(err, fs.ErrNotExist) && !r.r.Exists(filepath.Join(r.dir, strconv.Itoa(irq.Number))) {
		return "", false, nil
	}
	path := func() string { return filepath.Join(r.dir, string(r.name)) }
	if err != nil {
		return "", false, kernfs.FileErr(path(), err)
	}
	if string(data) == text && text != "" {
		irq.Affinity = prev
		return text, true, nil
	}
	if err := r.parseAffinity(irq, data, path()); err != nil {
		return "", false, err
	}
	return string(data), true, nil
}

func (r *irqReader) parseAffinity(irq *IRQ, data []byte, path string) (err error) {
	// The kernel never prints an empty mask.
	if len(data) == 0 {
		return kernfs.Malformed(path, "empty, want the IRQ's CPU list")
	}
	if irq.Affinity, err = cpumask.ParseList(string(data)); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}

// read fills irq's affinity and managed state from <proc>/irq/N and
// returns the smp_affinity_list text; false when the IRQ is gone.
func (r *irqReader) read(irq *IRQ) (string, bool, error) {
	dir := filepath.Join(r.dir, strconv.Itoa(irq.Number))

	// Managed IRQs' file is 0444 (6.12+); root can open it anyway.
	path := dir + "/smp_affinity_list"
	data, mode, err := r.r.ReadWithMode(path)
	if errors.Is(err, fs.ErrNotExist) && !r.r.Exists(dir) {
		return "", false, nil
	}
	if err != nil {
		return "", false, kernfs.FileErr(path, err)
	}
	if r.afterAffinity != nil {
		r.afterAffinity()
	}
	if err := r.parseAffinity(irq, data, path); err != nil {
		return "", false, err
	}
	text := string(data)
	readOnly := mode&0o222 == 0
	if !readOnly {
		// A read-only smp_affinity (an admin's chmod) means hands off too.
		ro, err := readOnlyFile(dir + "/smp_affinity")
		if errors.Is(err, fs.ErrNotExist) && !r.r.Exists(dir) {
			return "", false, nil
		}
		readOnly = ro
	}
	if readOnly {
		irq.Managed, irq.ManagedReason = true, "read-only smp_affinity"
	}
	return text, true, nil
}

// readOnlyFile reports whether path has no write bit; not when it
// cannot be stat'ed (a wrong "movable" costs one refused write).
func readOnlyFile(path string) (bool, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return false, err
	}
	return st.Mode&0o222 == 0, nil
}
