package inventory

import (
	"bytes"
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
	fi, err := kernfs.Stat(path)
	if err != nil {
		return false, err
	}
	return fi.Mode()&0o222 == 0, nil
}

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
