package load

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/kernfs"
)

// maxInterruptsSize bounds a read of /proc/interrupts, as the
// inventory's own read does (256 MiB, several times what a 768-CPU
// machine with thousands of queue IRQs prints). A variable so tests can
// lower it.
var maxInterruptsSize int64 = 256 << 20

// ReadInterrupts reads <Proc>/interrupts with its per-CPU counts, at
// most maxInterruptsSize bytes of it. The parsing is
// inventory.ParseInterrupts', so the inventory and the sampler never
// disagree about what a row is.
func (fsys FS) ReadInterrupts() (inventory.Interrupts, error) {
	path := filepath.Join(fsys.Proc, "interrupts")
	f, err := kernfs.Open(path)
	if err != nil {
		return inventory.Interrupts{}, fileErr(path, err)
	}
	defer f.Close()
	lr := &io.LimitedReader{R: f, N: maxInterruptsSize + 1}
	ints, err := inventory.ParseInterrupts(lr)
	if lr.N <= 0 {
		// The parse saw a cut file; the size is the error to report.
		return inventory.Interrupts{}, fileErr(path, kernfs.TooLarge(maxInterruptsSize))
	}
	if err != nil {
		return inventory.Interrupts{}, fmt.Errorf("read %s: %w", path, err)
	}
	return ints, nil
}
