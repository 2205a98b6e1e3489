package inventory

import (
	"io"
	"path/filepath"

	"github.com/numairqd/numairqd/pkg/kernfs"
)

// ReadInterrupts reads and parses <proc>/interrupts with its counts.
func (fsys FS) ReadInterrupts() (Interrupts, error) { return fsys.readInterrupts(true) }

// readInterrupts reads <proc>/interrupts, with counts if withCounts.
func (fsys FS) readInterrupts(withCounts bool) (ints Interrupts, err error) {
	err = kernfs.ParseFile(filepath.Join(fsys.Proc, "interrupts"), maxInterruptsSize, func(r io.Reader) (err error) {
		ints, err = parseInterrupts(r, withCounts)
		return err
	})
	if err != nil {
		return Interrupts{}, err
	}
	return ints, nil
}
