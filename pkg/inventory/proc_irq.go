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
)

// irqReader reads the files of /proc/irq/N (kernel/irq/proc.c) with one
// reused buffer.
type irqReader struct {
	dir string
	buf []byte
}

func newIRQReader(dir string) *irqReader { return &irqReader{dir: dir, buf: make([]byte, 4096)} }

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
	data, mode, err := r.readFile(path, true)
	if errors.Is(err, fs.ErrNotExist) {
		if gone(dir) {
			return false, nil
		}
		return false, fileErr(path, err)
	}
	if err != nil {
		return false, fileErr(path, err)
	}
	if irq.Affinity, err = cpumask.ParseList(string(bytes.TrimSpace(data))); err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	readOnly := mode&0o222 == 0
	if !readOnly {
		readOnly = !writable(dir + "/smp_affinity")
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
			irq.Effective, err = cpumask.ParseList(string(bytes.TrimSpace(b)))
			irq.HasEffective = err == nil
			return err
		}},
		{"affinity_hint", func(b []byte) (err error) {
			irq.Hint, err = cpumask.ParseHex(string(bytes.TrimSpace(b)))
			irq.HasHint = err == nil && !irq.Hint.IsEmpty()
			return err
		}},
		{"node", func(b []byte) (err error) {
			irq.Node, err = parseNode(b)
			return err
		}},
	} {
		path = dir + "/" + f.name
		switch data, _, err = r.readFile(path, false); {
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

// readFile reads a small procfs/sysfs file into the reused buffer; the
// result is valid until the next call. With wantMode it also returns
// the file's permission bits from fstat on the open file. It uses raw
// file descriptors: an os.File per read costs allocations and poller
// registration, and Read opens five files for each of thousands of IRQs.
func (r *irqReader) readFile(path string, wantMode bool) ([]byte, fs.FileMode, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, 0, err
	}
	defer syscall.Close(fd)
	var mode fs.FileMode
	if wantMode {
		var st syscall.Stat_t
		if err := syscall.Fstat(fd, &st); err != nil {
			return nil, 0, err
		}
		mode = fs.FileMode(st.Mode & 0o777)
	}
	n := 0
	for {
		if n == len(r.buf) {
			r.buf = append(r.buf, make([]byte, len(r.buf))...)
		}
		m, err := syscall.Read(fd, r.buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, 0, err
		}
		if m <= 0 {
			break
		}
		n += m
	}
	return r.buf[:n], mode, nil
}

// writable reports whether path has any write permission bit; false
// also when it cannot be stat'ed.
func writable(path string) bool {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return true
	}
	return st.Mode&0o222 != 0
}

// parseNode parses a NUMA node number as procfs and sysfs print it;
// -1 means none.
func parseNode(data []byte) (int, error) {
	s := string(bytes.TrimSpace(data))
	n, err := strconv.Atoi(s)
	if err != nil || n < -1 {
		return 0, fmt.Errorf("%q is not a NUMA node: %w", s, ErrMalformed)
	}
	return n, nil
}

// gone reports whether dir no longer exists.
func gone(dir string) bool {
	_, err := os.Stat(dir)
	return errors.Is(err, fs.ErrNotExist)
}
