package inventory

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/numairqd/numairqd/pkg/kernfs"
)

// ReadInterrupts reads and parses <proc>/interrupts with its counts:
// the load sampler's read, with the inventory's bounds and parser.
func (fsys FS) ReadInterrupts() (Interrupts, error) { return fsys.readInterrupts(true) }

// readInterrupts reads and parses <proc>/interrupts, at most
// maxInterruptsSize bytes of it, keeping the counts when withCounts.
func (fsys FS) readInterrupts(withCounts bool) (Interrupts, error) {
	path := filepath.Join(fsys.Proc, "interrupts")
	f, err := kernfs.Open(path)
	if err != nil {
		return Interrupts{}, fileErr(path, err)
	}
	defer f.Close()
	lr := &io.LimitedReader{R: f, N: maxInterruptsSize + 1}
	ints, err := parseInterrupts(lr, withCounts)
	if lr.N <= 0 {
		// The parse saw a cut file; the size is the error to report.
		return Interrupts{}, fileErr(path, kernfs.TooLarge(maxInterruptsSize))
	}
	if err != nil {
		return Interrupts{}, fmt.Errorf("read %s: %w", path, err)
	}
	return ints, nil
}
