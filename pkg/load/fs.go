package load

import "github.com/numairqd/numairqd/pkg/inventory"

// FS is the procfs root the sampler reads: "/proc" on a host, a fixture
// directory in tests.
type FS struct {
	Proc string
}

// ReadInterrupts reads <Proc>/interrupts with its per-CPU counts through
// the inventory's bounded read and parser, so the inventory and the
// sampler never disagree about what a row is.
func (fsys FS) ReadInterrupts() (inventory.Interrupts, error) {
	return inventory.FS{Proc: fsys.Proc}.ReadInterrupts()
}
